"""Option tables of the read-only programs that take files or text: coreutils, grep, ripgrep, tree...

Contract:
    Importing this module registers each table with :func:`swebash_ai.safety.programs.register`.  One
    :class:`~swebash_ai.safety.programs.Spec` per program: the options that only read, the options taking a
    value (and which of those name files to read), and the options with an effect, each with the words the
    user reads when it asks (``sort -o writes its output to a file``).  An option missing from a table asks.

Why:
    These are the everyday commands an assistant runs to look around; each should run without a question
    in its read-only uses, and never run unasked in any other.  The tables follow GNU coreutils, grep and
    ripgrep's manuals; where BSD spells an option differently (``base64 -o``), the table lists the effect too.

Pure: standard library only.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

from swebash_ai.safety.programs import Effect, ProgramCheck, Spec, check_spec, fs, parse_options, register

__all__ = ["TABLES"]

_WRITE_OUT: dict[str, tuple[Effect, str]] = {"-o": ("write", "writes its output to a file"),
                                             "--output": ("write", "writes its output to a file")}
_FILES0: dict[str, tuple[Effect, str]] = {"--files0-from": ("input", "reads the list of files from a file")}
_CHECK: dict[str, tuple[Effect, str]] = {"-c": ("input", "reads the list of files to check from a file"),
                                         "--check": ("input", "reads the list of files to check from a file")}
_HASH = Spec(flags="btz", long_flags=fs("--binary --text --tag --untagged --zero --help --version"),
             short_values="la", long_values=fs("--length --algorithm"), effects=_CHECK)


def _e(**effects: tuple[Effect, str]) -> Mapping[str, tuple[Effect, str]]:
    """Effects keyed by option (``_e(o=...)`` is ``-o``; ``_e(output=...)`` is ``--output``)."""
    return {("-" + k if len(k) == 1 else "--" + k.replace("_", "-")): v for k, v in effects.items()}


TABLES: dict[str, Spec] = {
    "ls": Spec(
        op="list", default_cwd=True, flags="aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1",
        long_flags=fs(
            "--all --almost-all --author --escape --ignore-backups --directory --dired --classify --file-type "
            "--full-time --group-directories-first --no-group --human-readable --si "
            "--dereference-command-line --dereference-command-line-symlink-to-dir --hyperlink --inode "
            "--kibibytes --dereference --numeric-uid-gid --literal --hide-control-chars --show-control-chars "
            "--quote-name --reverse --recursive --size --context --zero --help --version --color --colour"
        ),
        short_values="ITw",
        long_values=fs(
            "--block-size --hide --ignore --tabsize --time-style --width --sort --time --format "
            "--indicator-style --quoting-style"
        ),
    ),
    "cat": Spec(flags="AbeEnstTuv", long_flags=fs(
        "--show-all --number-nonblank --show-ends --number --squeeze-blank --show-tabs --show-nonprinting "
        "--help --version")),
    "tac": Spec(flags="br", long_flags=fs("--before --regex --help --version"), short_values="s",
                long_values=fs("--separator")),
    "nl": Spec(flags="p", long_flags=fs("--no-renumber --help --version"), short_values="bdfhilnsvw",
               long_values=fs(
                   "--body-numbering --section-delimiter --footer-numbering --header-numbering --line-increment "
                   "--join-blank-lines --number-format --number-separator --starting-line-number --number-width")),
    "head": Spec(flags="qvz", numeric=True, long_flags=fs("--quiet --silent --verbose --zero-terminated --help"),
                 short_values="nc", long_values=fs("--bytes --lines")),
    "tail": Spec(
        flags="qvz", numeric=True, long_flags=fs("--quiet --silent --verbose --zero-terminated --help"),
        short_values="nc", long_values=fs("--bytes --lines"),
        effects=_e(f=("forever", "follows the file forever"), F=("forever", "follows the file forever"),
                   follow=("forever", "follows the file forever"), retry=("forever", "waits for the file forever"),
                   pid=("forever", "follows the file while a process runs"),
                   s=("forever", "follows the file (sleep interval)"),
                   sleep_interval=("forever", "follows the file (sleep interval)")),
    ),
    "wc": Spec(flags="cmlLw", long_flags=fs("--bytes --chars --lines --max-line-length --words --total --help"),
               effects=_FILES0),
    "pwd": Spec(operands="none", flags="LP"),
    "true": Spec(operands="text", free_options=True),
    "false": Spec(operands="text", free_options=True),
    "echo": Spec(operands="text", free_options=True),
    ":": Spec(operands="text", free_options=True),  # the no-op builtin (`while :; do`): its words are only expanded
    "grep": Spec(
        operands="first_text_then_paths", numeric=True, flags="EFGPiyvwxcLloqsbHhnTZzUraIrR",
        long_flags=fs(
            "--extended-regexp --fixed-strings --basic-regexp --perl-regexp --ignore-case --no-ignore-case "
            "--invert-match --word-regexp --line-regexp --count --color --colour --files-without-match "
            "--files-with-matches --only-matching --quiet --silent --no-messages --byte-offset --with-filename "
            "--no-filename --line-number --line-buffered --initial-tab --null --null-data --text --recursive "
            "--dereference-recursive --binary --no-group-separator --help --version"
        ),
        short_values="efmABCdD",
        long_values=fs(
            "--after-context --before-context --binary-files --context --devices --directories --exclude "
            "--exclude-dir --exclude-from --file --group-separator --include --label --max-count --regexp"
        ),
        path_values=fs("--exclude-from --file -f"),
        recursive=fs("-r -R --recursive --dereference-recursive -d=recurse --directories=recurse"),
    ),
    "rg": Spec(
        operands="first_text_then_paths", numeric=True, flags="abcFHhiIlLnNopqsSuUvwxV0",
        long_flags=fs(
            "--text --count --count-matches --fixed-strings --with-filename --no-filename --ignore-case "
            "--files-with-matches --files-without-match --follow --line-number --no-line-number "
            "--only-matching --quiet --smart-case --case-sensitive --unrestricted --invert-match "
            "--word-regexp --line-regexp --null --hidden --no-ignore --no-ignore-vcs --no-ignore-dot "
            "--no-ignore-global --no-ignore-parent --no-ignore-exclude --no-messages --files --type-list "
            "--json --vimgrep --column --no-column --heading --no-heading --byte-offset --trim --stats "
            "--sort-files --multiline --multiline-dotall --pcre2 --no-config --color --colors --pretty "
            "--passthru --crlf --binary --no-binary --one-file-system --max-columns-preview --no-unicode "
            "--unicode --help --version --debug --trace --line-buffered --block-buffered --mmap --no-mmap"
        ),
        short_values="efgtTmABCjMrEd",
        long_values=fs(
            "--after-context --before-context --context --context-separator --dfa-size-limit --encoding "
            "--engine --field-match-separator --field-context-separator --file --glob --iglob --ignore-file "
            "--max-columns --max-count --max-depth --max-filesize --path-separator --regex-size-limit --regexp "
            "--replace --sort --sortr --threads --type --type-add --type-not --type-clear"
        ),
        path_values=fs("--file --ignore-file -f"),
        effects=_e(z=("exec", "runs decompression programs on the files"),
                   search_zip=("exec", "runs decompression programs on the files"),
                   pre=("exec", "runs another program on every file"),
                   pre_glob=("exec", "runs another program on every file"),
                   hostname_bin=("exec", "runs another program")),
        always_recursive=True,
    ),
    "sort": Spec(
        flags="bdfgiMhnRrVcCsumz",
        long_flags=fs(
            "--ignore-leading-blanks --dictionary-order --ignore-case --general-numeric-sort "
            "--ignore-nonprinting --month-sort --human-numeric-sort --numeric-sort --random-sort --reverse "
            "--version-sort --check --merge --stable --unique --zero-terminated --debug --help --version"
        ),
        short_values="kSt",
        long_values=fs("--key --field-separator --buffer-size --parallel --sort --batch-size --random-source"),
        path_values=fs("--random-source"),
        effects={**_WRITE_OUT, **_FILES0, **_e(
            T=("write", "writes temporary files in another directory"),
            temporary_directory=("write", "writes temporary files in another directory"),
            compress_program=("exec", "runs a program to compress its temporary files"))},
    ),
    "uniq": Spec(flags="cdDiuz", numeric=True, long_flags=fs(
        "--count --repeated --all-repeated --group --ignore-case --unique --zero-terminated --help"),
        short_values="fsw", long_values=fs("--skip-fields --skip-chars --check-chars"), max_operands=1),
    "cut": Spec(flags="nsz", long_flags=fs("--complement --only-delimited --zero-terminated --help"),
                short_values="bcdf", long_values=fs("--bytes --characters --delimiter --fields --output-delimiter")),
    "paste": Spec(flags="sz", long_flags=fs("--serial --zero-terminated --help"), short_values="d",
                  long_values=fs("--delimiters")),
    "comm": Spec(flags="123z", long_flags=fs("--check-order --nocheck-order --total --zero-terminated --help"),
                 long_values=fs("--output-delimiter")),
    "join": Spec(flags="iz", long_flags=fs("--ignore-case --check-order --nocheck-order --header "
                                          "--zero-terminated --help"), short_values="aejotv12"),
    "fold": Spec(flags="bs", numeric=True, long_flags=fs("--bytes --spaces --help"), short_values="w",
                 long_values=fs("--width")),
    "fmt": Spec(flags="cstu", numeric=True, long_flags=fs(
        "--crown-margin --tagged-paragraph --split-only --uniform-spacing --help"), short_values="wpg",
        long_values=fs("--width --prefix --goal")),
    "expand": Spec(flags="i", numeric=True, long_flags=fs("--initial --help"), short_values="t",
                   long_values=fs("--tabs")),
    "unexpand": Spec(flags="a", numeric=True, long_flags=fs("--all --first-only --help"), short_values="t",
                     long_values=fs("--tabs")),
    "rev": Spec(flags="0", long_flags=fs("--zero --help")),
    "tr": Spec(operands="text", flags="cCdst", long_flags=fs(
        "--complement --delete --squeeze-repeats --truncate-set1 --help")),
    "column": Spec(flags="tnxeLJdi", long_flags=fs("--table --json --fillrows --keep-empty-lines --help"),
                   short_values="csoNRHWETrl"),
    "od": Spec(flags="bcdfiloxsv", long_flags=fs("--output-duplicates --traditional --help --strings --width"),
               short_values="AjNSwt", long_values=fs("--address-radix --skip-bytes --read-bytes --format --endian")),
    "base64": Spec(flags="diD", long_flags=fs("--decode --ignore-garbage --help"), short_values="w",
                   long_values=fs("--wrap"), max_operands=1, effects=_WRITE_OUT),
    "base32": Spec(flags="di", long_flags=fs("--decode --ignore-garbage --help"), short_values="w",
                   long_values=fs("--wrap"), max_operands=1),
    "cmp": Spec(flags="blsz", long_flags=fs("--print-bytes --verbose --quiet --silent --help"), short_values="in",
                long_values=fs("--ignore-initial --bytes")),
    "diff": Spec(
        flags="iEZbwBIaNPrstuyqpcedn",
        long_flags=fs(
            "--brief --report-identical-files --side-by-side --suppress-common-lines --left-column "
            "--expand-tabs --initial-tab --text --strip-trailing-cr --minimal --speed-large-files "
            "--show-c-function --ignore-all-space --ignore-space-change --ignore-blank-lines --ignore-case "
            "--ignore-tab-expansion --ignore-trailing-space --ignore-file-name-case --no-ignore-file-name-case "
            "--new-file --unidirectional-new-file --recursive --no-dereference --color --normal --unified "
            "--context --ed --rcs --suppress-blank-empty --help --version"
        ),
        short_values="UCIxXSLDFW",
        long_values=fs(
            "--exclude --exclude-from --from-file --ifdef --ignore-matching-lines --label --palette "
            "--show-function-line --starting-file --tabsize --to-file --width --horizon-lines "
            "--line-format --old-line-format --new-line-format --unchanged-line-format "
            "--old-group-format --new-group-format --changed-group-format --unchanged-group-format"
        ),
        path_values=fs("--exclude-from --from-file --to-file -X"),
        effects=_e(l=("exec", "pipes the output through the pr program"),
                   paginate=("exec", "pipes the output through the pr program")),
        always_recursive=True,  # diff DIR1 DIR2 reads the files in both
    ),
    "file": Spec(
        flags="bcdEhiIklLnNrsS0",
        long_flags=fs(
            "--brief --mime --mime-type --mime-encoding --no-dereference --dereference --keep-going --raw "
            "--special-files --no-buffer --print0 --no-pad --extension --apple --debug --help --version "
            "--no-sandbox"
        ),
        short_values="mePF", long_values=fs("--exclude --exclude-quiet --magic-file --parameter --separator"),
        path_values=fs("--magic-file -m"),
        effects=_e(C=("write", "writes a compiled magic file"), compile=("write", "writes a compiled magic file"),
                   f=("input", "reads the list of files from a file"),
                   files_from=("input", "reads the list of files from a file"),
                   z=("exec", "may run decompression programs"), Z=("exec", "may run decompression programs"),
                   uncompress=("exec", "may run decompression programs"),
                   uncompress_noreport=("exec", "may run decompression programs"),
                   p=("write", "resets the files' access times"),
                   preserve_date=("write", "resets the files' access times")),
    ),
    "stat": Spec(op="metadata", flags="LfZt", long_flags=fs("--dereference --file-system --terse --help"),
                 short_values="c", long_values=fs("--format --printf --cached")),
    "du": Spec(
        op="list", default_cwd=True, flags="0abDHhLlPSsxkmc",
        long_flags=fs(
            "--null --all --apparent-size --bytes --total --dereference-args --human-readable --inodes "
            "--dereference --count-links --no-dereference --separate-dirs --si --summarize --one-file-system "
            "--time --help --version"
        ),
        short_values="dtBX",
        long_values=fs("--block-size --exclude --exclude-from --max-depth --threshold --time-style"),
        path_values=fs("--exclude-from -X"), effects=_FILES0,
    ),
    "df": Spec(op="metadata", flags="ahHiklPTv", long_flags=fs(
        "--all --human-readable --si --inodes --local --no-sync --sync --portability --print-type --total "
        "--output --help --version"), short_values="Btx", long_values=fs("--block-size --type --exclude-type")),
    "which": Spec(operands="text", flags="as"),
    "type": Spec(operands="text", flags="afptP"),
    "basename": Spec(operands="text", flags="az", long_flags=fs("--multiple --zero --help"), short_values="s",
                     long_values=fs("--suffix")),
    "dirname": Spec(operands="text", flags="z", long_flags=fs("--zero --help")),
    "realpath": Spec(op="metadata", flags="eLmPqsz", long_flags=fs(
        "--canonicalize-existing --canonicalize-missing --logical --physical --quiet --strip --no-symlinks "
        "--zero --help"), long_values=fs("--relative-to --relative-base")),
    "readlink": Spec(op="metadata", flags="femnqsvz", long_flags=fs(
        "--canonicalize --canonicalize-existing --canonicalize-missing --no-newline --quiet --silent --verbose "
        "--zero --help")),
    "uname": Spec(operands="none", flags="asnrvmpio", long_flags=fs(
        "--all --kernel-name --nodename --kernel-release --kernel-version --machine --processor "
        "--hardware-platform --operating-system --help --version")),
    "arch": Spec(operands="none"),
    "whoami": Spec(operands="none"),
    "id": Spec(operands="text", flags="agGnruzZ", long_flags=fs(
        "--context --group --groups --name --real --user --zero --help")),
    "hostname": Spec(
        operands="none", flags="adfiIAsy",
        long_flags=fs("--alias --domain --fqdn --long --ip-address --all-ip-addresses --all-fqdns --short "
                      "--yp --nis --help --version"),
        effects=_e(b=("state", "changes the host name"), F=("state", "changes the host name"),
                   boot=("state", "changes the host name"), file=("state", "changes the host name")),
    ),
    "tree": Spec(
        op="list", default_cwd=True, flags="adlfxpsughDFqNQrtvUcSnCAJXi",
        long_flags=fs("--noreport --dirsfirst --filesfirst --du --prune --inodes --device --help --version "
                      "--gitignore --matchdirs --ignore-case --si --condense"),
        short_values="LPIHT", long_values=fs("--charset --filelimit --gitfile --sort --timefmt --infofile"),
        path_values=fs("--gitfile --infofile"),
        effects=_e(o=("write", "writes its output to a file"), output=("write", "writes its output to a file"),
                   R=("write", "writes an index file into every directory"),
                   fromfile=("input", "reads the listing from a file")),
    ),
    "cal": Spec(operands="text", flags="13jmy"),  # a calendar: month and year operands are only printed
    "seq": Spec(operands="text", flags="w", numeric=True, long_flags=fs("--equal-width --help"), short_values="fs",
                long_values=fs("--format --separator")),
    "nproc": Spec(operands="none", long_flags=fs("--all --help"), long_values=fs("--ignore")),
    "uptime": Spec(operands="none", flags="ps", long_flags=fs("--pretty --since --help")),
    "expr": Spec(operands="text", free_options=True),
    "hexdump": Spec(flags="bcCdovx", long_flags=fs("--canonical --no-squeezing --one-byte-octal --one-byte-char "
                                                   "--two-bytes-decimal --two-bytes-octal --two-bytes-hex --help"),
                    short_values="efns", long_values=fs("--format --format-file --length --skip --color"),
                    path_values=fs("-f --format-file")),
    "free": Spec(operands="none", flags="bkmgthlwv", long_flags=fs(
        "--bytes --kibi --mebi --gibi --tebi --pebi --kilo --mega --giga --tera --peta --human --si --lohi "
        "--total --committed --wide --help --version"),
        effects=_e(s=("forever", "repeats every few seconds"), c=("forever", "repeats every few seconds"),
                   seconds=("forever", "repeats every few seconds"), count=("forever", "repeats"))),
    "md5sum": _HASH, "sha1sum": _HASH, "sha224sum": _HASH, "sha256sum": _HASH, "sha384sum": _HASH,
    "sha512sum": _HASH, "b2sum": _HASH, "cksum": _HASH,
}  # fmt: skip



def _check_tail(args: list[str]) -> ProgramCheck:
    """tail's table, plus its obsolete ``+NUMf`` form, which follows the file like ``-f``."""
    out = check_spec("tail", TABLES["tail"], args)
    for a in args:
        if re.fullmatch(r"\+[0-9]*[bcl]?f", a):
            out.problems.append(f"tail {a} follows the file forever (the obsolete form of -f)")
    return out


# Listings that walk a tree: the options that make them follow symlinks, and (ls) recurse.  Through a workspace
# symlink to ~/.ssh they would list a folder the path policy refuses to list (names, not contents).
_FOLLOWING: dict[str, tuple[frozenset[str], frozenset[str] | None]] = {
    "ls": (fs("-L --dereference"), fs("-R --recursive")),
    "du": (fs("-L --dereference"), None),
    "tree": (fs("-l"), None),
}


def _check_listing(prog: str, args: list[str]) -> ProgramCheck:
    """A listing's table, plus the folders it lists through symlinks when it recurses and follows them."""
    spec = TABLES[prog]
    out = check_spec(prog, spec, args)
    follow, recurse = _FOLLOWING[prog]
    _, seen = parse_options(prog, spec, args, ProgramCheck())
    if any(s in follow for s in seen) and (recurse is None or any(s in recurse for s in seen)):
        out.followed += [p for p, op in out.paths if op == "list"]
    return out


for _name, _spec in TABLES.items():
    register(_name, _spec)
for _name in _FOLLOWING:
    register(_name, functools.partial(_check_listing, _name))
register("tail", _check_tail)
register("egrep", TABLES["grep"])
register("fgrep", TABLES["grep"])
