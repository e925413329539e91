"""Per-program rules for the command policy: the read-only allowlist and the danger table.

Contract:
    :func:`check_allowed` takes a bare program name and its literal arguments and returns either
    ``None`` (not on the read-only list) or a :class:`ProgramCheck`: the problems that make this
    particular use unsafe (each one makes the command ``ask``) and the path arguments to hand to the
    path policy with the operation they perform (plus whole trees read recursively, and words taken
    as patterns).  What a command that is not on the list may do is explained by
    :mod:`swebash_ai.safety.dangers`.

Why:
    The allowlist decides what runs without asking, so it must only contain programs whose every
    accepted flag is known not to write, execute or wait forever.  Flags are parsed the way getopt does
    (short clusters ``-rf``, attached values ``-n5``, ``--opt=value``, unique long prefixes such as
    ``--foll`` for ``--follow``), because a rule that only looks for ``-f`` misses ``-nf``.

Pure: standard library and :mod:`swebash_ai.safety.paths` only; reads the file system (glob,
realpath) but never changes it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "ProgramCheck",
    "Spec",
    "check_allowed",
]

PathOp = Literal["read", "list", "exists", "metadata"]
Operands = Literal["paths", "text", "none", "first_text_then_paths"]


@dataclass
class ProgramCheck:
    """What the allowlist found for one simple command."""

    problems: list[str] = field(default_factory=list)
    paths: list[tuple[str, PathOp]] = field(default_factory=list)
    trees: list[str] = field(default_factory=list)  # directories whose files are all read
    patterns: list[str] = field(default_factory=list)  # words taken as text (a pattern), not as paths


@dataclass(frozen=True)
class Spec:
    """Flag rules of one read-only program.

    ``forbidden_short``/``forbidden_long``: flags that write, execute, follow forever or read file lists.
    ``short_values``/``long_values``: flags taking a *required* value (an optional value such as
    ``--color[=WHEN]`` is only ever attached with ``=``, so those are not listed: listing them would
    swallow the next word, e.g. the file in ``grep --color pat FILE``); ``path_values``: of those,
    the ones naming a file to read.
    ``operands``: what non-option words are (paths to check, plain text, none allowed ...).
    """

    op: PathOp = "read"
    operands: Operands = "paths"
    forbidden_short: str = ""
    forbidden_long: frozenset[str] = frozenset()
    short_values: str = ""
    long_values: frozenset[str] = frozenset()
    path_values: frozenset[str] = frozenset()
    max_operands: int | None = None
    default_cwd: bool = False
    why: str = ""


def _pairs(text: str) -> dict[str, str]:
    """``"a=1 b=2"`` as a dict (keeps the tables compact)."""
    return dict(w.split("=", 1) for w in text.split())


def _fs(names: str) -> frozenset[str]:
    """A set from a space-separated string (keeps the tables compact)."""
    return frozenset(names.split())


SPECS: dict[str, Spec] = {
    "ls": Spec(
        op="list", short_values="ITw",
        long_values=_fs("--block-size --hide --ignore --tabsize --time-style --width"), default_cwd=True,
    ),
    "cat": Spec(),
    "head": Spec(short_values="nc", long_values=_fs("--bytes --lines")),
    "tail": Spec(
        forbidden_short="fF", forbidden_long=_fs("--follow --pid --retry"), short_values="ncs",
        long_values=_fs("--bytes --lines --max-unchanged-stats --sleep-interval"),
        why="follows the file forever",
    ),
    "wc": Spec(forbidden_long=_fs("--files0-from"), why="reads a list of file names from a file"),
    "pwd": Spec(operands="none"),
    "true": Spec(operands="text"),
    "false": Spec(operands="text"),
    "echo": Spec(operands="text"),
    "printf": Spec(operands="text", forbidden_short="v", why="assigns a shell variable"),
    "grep": Spec(
        operands="first_text_then_paths", short_values="efmABCdD",
        long_values=_fs(
            "--after-context --before-context --binary-files --context --devices --directories --exclude "
            "--exclude-dir --exclude-from --file --group-separator --include --label --max-count --regexp"
        ),
        path_values=_fs("--exclude-from --file -f"),
    ),
    "rg": Spec(
        operands="first_text_then_paths", forbidden_short="z",
        forbidden_long=_fs("--hostname-bin --pre --pre-glob --search-zip"), short_values="efgtTmABCjMrEd",
        long_values=_fs(
            "--after-context --before-context --color --colors --context --context-separator "
            "--dfa-size-limit --encoding --engine --field-match-separator --file --glob --iglob "
            "--ignore-file --max-columns --max-count --max-depth --max-filesize --path-separator "
            "--regex-size-limit --regexp --replace --sort --sortr --threads --type --type-add --type-not"
        ),
        path_values=_fs("--file --ignore-file -f"), why="runs another program on the files",
    ),
    "sort": Spec(
        forbidden_short="oT",
        forbidden_long=_fs("--compress-program --files0-from --output --temporary-directory"),
        short_values="ktSTo",
        long_values=_fs(
            "--batch-size --buffer-size --field-separator --key --parallel --random-source --sort"
        ),
        path_values=_fs("--random-source"), why="writes to a file or runs a program",
    ),
    "uniq": Spec(
        short_values="fsw", long_values=_fs("--check-chars --skip-chars --skip-fields"), max_operands=1,
    ),
    "cut": Spec(
        short_values="bcdf", long_values=_fs("--bytes --characters --delimiter --fields --output-delimiter"),
    ),
    "tr": Spec(operands="text"),
    "diff": Spec(
        short_values="UCIxXSLDFW",
        long_values=_fs(
            "--exclude --exclude-from --from-file --ifdef --ignore-matching-lines --label --palette "
            "--show-function-line --starting-file --tabsize --to-file --width"
        ),
        path_values=_fs("--exclude-from --from-file --to-file -X"),
    ),
    "file": Spec(
        forbidden_short="fC", forbidden_long=_fs("--compile --files-from"), short_values="mePF",
        long_values=_fs("--exclude --magic-file --parameter --separator"),
        path_values=_fs("--magic-file -m"), why="reads names from a file or writes a compiled magic file",
    ),
    "stat": Spec(op="metadata", short_values="ct", long_values=_fs("--format --printf")),
    "du": Spec(
        op="list", forbidden_long=_fs("--files0-from"), short_values="dtBX",
        long_values=_fs("--block-size --exclude --exclude-from --max-depth --threshold --time-style"),
        path_values=_fs("--exclude-from -X"), default_cwd=True, why="reads a list of file names from a file",
    ),
    "df": Spec(op="metadata", short_values="Btx", long_values=_fs("--block-size --exclude-type --type")),
    "which": Spec(operands="text"),
    "type": Spec(operands="text"),
    "basename": Spec(operands="text", short_values="s", long_values=_fs("--suffix")),
    "dirname": Spec(operands="text"),
    "realpath": Spec(op="metadata", long_values=_fs("--relative-base --relative-to")),
    "date": Spec(
        operands="text", forbidden_short="sf", forbidden_long=_fs("--file --set"), short_values="dIr",
        long_values=_fs("--date --reference --rfc-3339"), path_values=_fs("--reference -r"),
        why="sets the clock or reads dates from a file",
    ),
    "uname": Spec(operands="none"),
    "whoami": Spec(operands="none"),
    "id": Spec(operands="text"),
    "hostname": Spec(
        operands="none", forbidden_short="bF", forbidden_long=_fs("--boot --file"),
        why="changes the host name",
    ),
    "tree": Spec(
        op="list", forbidden_short="oR", forbidden_long=_fs("--fromfile --output"), short_values="LPIHT",
        long_values=_fs("--charset --filelimit --gitfile --sort --timefmt"), default_cwd=True,
        why="writes its output to a file",
    ),
    "test": Spec(op="exists"),
    "[": Spec(op="exists"),
    "seq": Spec(operands="text"),
    "nproc": Spec(operands="none"),
    "sha256sum": Spec(forbidden_short="c", forbidden_long=_fs("--check"), why="reads names from a file"),
    "md5sum": Spec(forbidden_short="c", forbidden_long=_fs("--check"), why="reads names from a file"),
}  # fmt: skip

def _long_match(name: str, options: frozenset[str]) -> str | None:
    """GNU-style: an exact long option, or a unique-enough prefix of one (``--foll`` is ``--follow``)."""
    if name in options:
        return name
    if len(name) >= 3:
        for o in options:
            if o.startswith(name):
                return o
    return None


def _check_spec(prog: str, spec: Spec, args: list[str]) -> ProgramCheck:
    out = ProgramCheck()
    operands: list[str] = []
    i = 0
    only_operands = False
    why = f" ({spec.why})" if spec.why else ""
    while i < len(args):
        a = args[i]
        i += 1
        if only_operands or a == "-" or not a.startswith("-") or prog in {"test", "["}:
            operands.append(a)
            continue
        if a == "--":
            only_operands = True
            continue
        if a.startswith("--"):
            name, eq, value = a.partition("=")
            if _long_match(name, spec.forbidden_long):
                out.problems.append(f"{prog} {name} is not allowed without asking{why}")
                continue
            takes = _long_match(name, spec.long_values)
            if takes and not eq and i < len(args):
                value = args[i]
                i += 1
            if takes and takes in spec.path_values and value:
                out.paths.append((value, "read"))
            continue
        # Short cluster: -abc, -n5, -n 5.
        j = 1
        while j < len(a):
            ch = a[j]
            j += 1
            if ch in spec.forbidden_short:
                out.problems.append(f"{prog} -{ch} is not allowed without asking{why}")
                break
            if ch in spec.short_values:
                value = a[j:]
                if not value and i < len(args):
                    value = args[i]
                    i += 1
                if f"-{ch}" in spec.path_values and value:
                    out.paths.append((value, "read"))
                break
    if spec.operands == "first_text_then_paths":
        has_pattern_opt = any(
            x.startswith(("--regexp", "--file"))
            or (x.startswith("-") and not x.startswith("--") and any(c in "ef" for c in x[1:]))
            for x in args
        )
        lists_files = prog == "rg" and any(x in ("--files", "--type-list") for x in args)
        if operands and not has_pattern_opt and not lists_files:
            out.patterns.append(operands[0])
            operands = operands[1:]
        recursive = prog == "rg" or any(
            x in ("--recursive", "--dereference-recursive", "--directories=recurse", "recurse")
            or (x.startswith("-") and not x.startswith("--") and any(c in "rR" for c in x[1:]))
            for x in args
        )
        if not operands and recursive:
            operands = ["."]
        out.paths += [(o, spec.op) for o in operands]
        if recursive:
            out.trees += operands
    elif spec.operands == "paths":
        if not operands and spec.default_cwd:
            operands = ["."]
        if prog == "diff":  # diff DIR1 DIR2 reads the files in both; -r reads whole trees
            out.trees += operands
        if prog in {"test", "["}:
            operands = [o for o in operands if not re.fullmatch(r"-\w+|[!=<>()\]]|!=|==", o)]
        out.paths += [(o, spec.op) for o in operands]
    elif spec.operands == "none" and operands:
        out.problems.append(f"{prog} with arguments {' '.join(operands)!r} may change settings")
    if spec.max_operands is not None and len(operands) > spec.max_operands:
        out.problems.append(f"{prog} with {len(operands)} file arguments writes to the last one")
    return out


_SED_ADDR = r"(?:\d+(?:~\d+)?|\$|/(?:[^/\\\n]|\\.)*/I?)"
_SED_CMD_RE = re.compile(rf"^\s*(?:{_SED_ADDR}(?:\s*,\s*(?:{_SED_ADDR}|\+\d+))?)?\s*!?\s*[pP=lqQ]?\s*$")


def _check_sed(args: list[str]) -> ProgramCheck:
    out = ProgramCheck()
    quiet = False
    scripts: list[str] = []
    operands: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a in ("-n", "--quiet", "--silent"):
            quiet = True
        elif a in (
            "-E",
            "-r",
            "-s",
            "-u",
            "-z",
            "--regexp-extended",
            "--separate",
            "--unbuffered",
            "--null-data",
            "--posix",
            "--sandbox",
        ):
            pass
        elif a in ("-e", "--expression") and i < len(args):
            scripts.append(args[i])
            i += 1
        elif a.startswith("--expression="):
            scripts.append(a.partition("=")[2])
        elif re.fullmatch(r"-[nEruzs]+", a):
            quiet = quiet or "n" in a
        elif a.startswith("-") and a != "-":
            out.problems.append(
                f"sed option {a} is not on the read-only list (-i edits files, "
                "-f reads a script that may write or execute)"
            )
        else:
            operands.append(a)
    if not scripts and operands:
        scripts.append(operands.pop(0))
    if not quiet:
        out.problems.append("sed without -n: only print-only scripts like sed -n '5,10p' are auto-allowed")
    for s in scripts:
        for part in re.split(r"[;\n]", s):
            if not _SED_CMD_RE.match(part):
                out.problems.append(
                    f"sed script {s!r} is not a plain print (it may write files with w, run commands with e, or edit)"
                )
                break
    out.paths += [(o, "read") for o in operands]
    return out


_JQ_DANGER_RE = re.compile(r"\$ENV|\benv\b|\binput_filename\b|\bimport\b|\binclude\b|\$__prog")


def _check_jq(args: list[str]) -> ProgramCheck:
    out = ProgramCheck()
    operands: list[str] = []
    filter_given = False
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a in ("--arg", "--argjson"):
            i += 2
        elif a in ("--slurpfile", "--rawfile"):
            if i + 1 < len(args):
                out.paths.append((args[i + 1], "read"))
            i += 2
        elif a in ("-f", "--from-file") and i < len(args):
            out.paths.append((args[i], "read"))
            filter_given = True
            i += 1
        elif a in ("--args", "--jsonargs"):
            out.problems.append(f"jq {a} is not on the read-only list")
        elif a in ("-L", "--indent", "--tab") or a.startswith("-L"):
            if a == "--indent" or a == "-L":
                i += 1
        elif a.startswith("-") and a != "-":
            pass
        else:
            operands.append(a)
    if operands and not filter_given:
        flt = operands.pop(0)
        if _JQ_DANGER_RE.search(flt):
            out.problems.append("jq filter reads the environment or other files ($ENV, env, import)")
    out.paths += [(o, "read") for o in operands]
    return out


FIND_FORBIDDEN: dict[str, str] = {
    "-exec": "runs a command on each file",
    "-execdir": "runs a command on each file",
    "-ok": "runs a command on each file",
    "-okdir": "runs a command on each file",
    "-delete": "deletes every file it finds",
    "-fprint": "writes to a file",
    "-fprint0": "writes to a file",
    "-fprintf": "writes to a file",
    "-fls": "writes to a file",
    "-files0-from": "reads names from a file",
}


FIND_VALUE_PRIMARIES = _fs(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -regextype -type -xtype -size "
    "-mtime -mmin -atime -amin -ctime -cmin -used -user -group -uid -gid -perm -links -inum -samefile "
    "-maxdepth -mindepth -lname -ilname -fstype -context -printf"
)
FIND_FLAG_PRIMARIES = _fs(
    "-print -print0 -ls -prune -quit -true -false -not -and -or -a -o -empty -executable -readable "
    "-writable -nouser -nogroup -depth -d -mount -xdev -follow -noleaf -daystart -ignore_readdir_race "
    "-noignore_readdir_race -warn -nowarn -help -version"
)


def _check_find(args: list[str]) -> ProgramCheck:
    out = ProgramCheck()
    i = 0
    while i < len(args) and (args[i] in ("-H", "-L", "-P") or args[i].startswith("-D")):
        i += 2 if args[i] == "-D" else 1
    starts: list[str] = []
    while i < len(args) and not args[i].startswith(("-", "(", "!", ")")):
        starts.append(args[i])
        i += 1
    rest = args[i:]
    for a in rest:
        if a in FIND_FORBIDDEN:
            out.problems.append(f"find {a} {FIND_FORBIDDEN[a]}")
    j = 0
    while j < len(rest):  # every primary must be known (find has no abbreviations)
        a = rest[j]
        j += 1
        if a in FIND_VALUE_PRIMARIES or a.startswith("-newer"):
            j += 1
        elif a.startswith("-") and a not in FIND_FLAG_PRIMARIES and a not in FIND_FORBIDDEN:
            out.problems.append(f"find {a} is not on the read-only list of find primaries")
    out.paths += [(p, "list") for p in (starts or ["."])]
    return out


def _check_git(args: list[str]) -> ProgramCheck:
    from swebash_ai.safety.git_rules import check_git  # git's rules build on this module's types

    return check_git(args)


_CUSTOM: dict[str, Callable[[list[str]], ProgramCheck]] = {
    "find": _check_find,
    "sed": _check_sed,
    "jq": _check_jq,
    "git": _check_git,
}
ALLOWED_PROGRAMS: frozenset[str] = frozenset(SPECS) | frozenset(_CUSTOM) | _fs("egrep fgrep")


def check_allowed(prog: str, args: list[str]) -> ProgramCheck | None:
    """Rules for a read-only program, or None when ``prog`` is not on the read-only list."""
    if prog in _CUSTOM:
        return _CUSTOM[prog](args)
    spec = SPECS.get("grep" if prog in ("egrep", "fgrep") else prog)
    if spec is None:
        return None
    return _check_spec(prog, spec, args)
