"""Read-only rules for archives and byte dumps: ``tar -t`` (list an archive) and ``xxd`` to standard output.

Contract:
    Importing this module registers ``tar`` and ``xxd`` with :func:`swebash_ai.safety.programs.register`.
    ``tar`` runs without asking only in list mode (``-t``/``--list``) on an archive named with ``-f``, with
    options from a short table: listing, the fixed decompressors (``-z``, ``-j``, ``-J``, ``--zstd``...) and
    matching options.  ``xxd`` runs without asking with its display options and at most one file (a second
    operand is the file it writes).  ``od`` and ``hexdump`` have plain option tables in
    :mod:`~swebash_ai.safety.text_rules`.

Why:
    tar is an everyday way to look inside a download, and every other mode writes (``-x``, ``-c``, ``-r``,
    ``--delete``), while several options run a program of the caller's choice: ``-I``/``--use-compress-program``,
    ``--to-command``, ``--rsh-command``, ``-F``/``--info-script``, ``--checkpoint-action=exec``.  An archive
    name holding a ``:`` is a remote archive reached through rsh, and tar without ``-f`` reads ``$TAPE``: both
    ask.  The decompressors tar starts for ``-z`` and for a compressed archive are fixed programs that read the
    archive and write to tar.  (The executor drops ``TAR_OPTIONS``, which would add options this table never
    saw.)  xxd reads its options by prefix (``-cols``, ``-c8``), so only the spellings listed here are accepted.

Pure: standard library only.
"""

from __future__ import annotations

import re

from swebash_ai.safety.programs import Effect, ProgramCheck, Spec, check_spec, fs, parse_options, register

__all__ = ["TAR", "check_tar", "check_xxd"]

_WRITES = "writes or changes files (only tar -t, which lists, runs without asking)"
_RUNS = "runs a program of the caller's choice"
_TAR_EFFECTS: dict[str, tuple[Effect, str]] = {
    **{o: ("exec", _RUNS) for o in ("-I", "--use-compress-program", "--to-command", "--rsh-command", "-F",
                                    "--info-script", "--new-volume-script", "--checkpoint-action")},
    **{o: ("write", _WRITES) for o in ("-x", "--extract", "--get", "-c", "--create", "-r", "--append", "-u",
                                       "--update", "-A", "--catenate", "--concatenate", "--delete",
                                       "-g", "--listed-incremental", "--index-file", "-d", "--diff",
                                       "--compare", "-O", "--to-stdout")},
    **{o: ("input", "reads the list of members from a file") for o in ("-T", "--files-from", "-X",
                                                                       "--exclude-from")},
}  # fmt: skip
TAR = Spec(
    operands="text",  # member names to list: matched against the archive, never opened
    flags="tvzjJiBR",
    long_flags=fs(
        "--list --verbose --gzip --gunzip --ungzip --bzip2 --xz --lzma --lzip --lzop --zstd --ignore-zeros "
        "--read-full-records --block-number --full-time --utc --numeric-owner --wildcards --no-wildcards "
        "--anchored --no-anchored --ignore-case --no-ignore-case --wildcards-match-slash "
        "--no-wildcards-match-slash --show-transformed-names --force-local --help --version"
    ),
    short_values="fb",
    long_values=fs("--file --blocking-factor --exclude --strip-components --quoting-style --record-size"),
    path_values=fs("-f --file"),
    effects=_TAR_EFFECTS,
)  # fmt: skip
_OLD_STYLE = re.compile(r"[A-Za-z]+")


def check_tar(args: list[str]) -> ProgramCheck:
    """``tar -tf ARCHIVE``, ``tar tzvf ARCHIVE``, ``tar --list --file=ARCHIVE``: list mode only."""
    argv = list(args)
    if argv and not argv[0].startswith("-") and _OLD_STYLE.fullmatch(argv[0]):
        # Old style: `tar tvf ARCHIVE` is `tar -t -v -f ARCHIVE`; the letters' values follow, in order.
        letters, rest, converted = argv[0], argv[1:], []
        for ch in letters:
            converted.append("-" + ch)
            if ch in TAR.short_values and rest:
                converted.append(rest.pop(0))
        argv = converted + rest
    out = check_spec("tar", TAR, argv)
    if out.problems:
        return out
    _, seen = parse_options("tar", TAR, argv, ProgramCheck())
    listing = "-t" in seen or "--list" in seen
    archives = [p for p, _ in out.paths]
    if not listing:
        out.problems.append("tar without -t: only listing an archive (tar -tf FILE) runs without asking; other "
                            "modes write files")
    elif not archives:
        out.problems.append("tar -t without -f reads the archive named by $TAPE or a tape drive: name it with -f")
    for a in archives:
        if ":" in a:
            out.problems.append(f"tar -f {a}: a name with ':' is a remote archive, reached by running rsh")
    return out


_XXD_FLAGS = fs(
    "-a -autoskip -b -bits -C -capitalize -E -EBCDIC -e -h -help -i -include -p -ps -postscript -plain -r -revert "
    "-d -u -v -version"
)
_XXD_VALUES = fs("-c -cols -g -groupsize -l -len -n -name -o -offset -s -seek -R")
_XXD_ATTACHED = re.compile(r"-[cglos][-+]?(?:0[xX][0-9A-Fa-f]+|[0-9]+)")
_XXD_NUMBER = re.compile(r"[-+]?(?:0[xX][0-9A-Fa-f]+|[0-9]+)")


def check_xxd(args: list[str]) -> ProgramCheck:
    """``xxd [OPTIONS] [FILE]``: a dump to standard output; a second operand is a file xxd writes."""
    out = ProgramCheck()
    operands: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if operands or a == "-" or not a.startswith("-"):
            operands.append(a)
        elif a == "--":
            operands += args[i:]
            break
        elif a in _XXD_FLAGS or _XXD_ATTACHED.fullmatch(a):
            continue
        elif a in _XXD_VALUES:
            value = args[i] if i < len(args) else ""
            i += 1
            if a in ("-n", "-name"):
                ok = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value) is not None
            elif a == "-R":
                ok = value in ("always", "auto", "never")
            else:
                ok = _XXD_NUMBER.fullmatch(value) is not None
            if not ok:
                out.problems.append(f"xxd {a} {value!r}: not a value xxd is known to read as plain data")
                return out
        else:
            out.problems.append(f"xxd {a}: not a known read-only option of xxd (unknown options ask)")
            return out
    if len(operands) > 1:
        out.problems.append(f"xxd with {len(operands)} file arguments writes to the last one")
    out.paths += [(o, "read") for o in operands if o != "-"]
    return out


register("tar", check_tar)
register("xxd", check_xxd)
