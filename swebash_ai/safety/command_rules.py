"""Read-only rules for programs whose arguments are code: test, printf, sed, awk, jq, find, wrappers and shells.

Contract:
    Importing this module registers a checker per program with :func:`swebash_ai.safety.programs.register`.
    Each checker returns a :class:`~swebash_ai.safety.programs.ProgramCheck`; any problem makes the command
    ask, with that problem as the reason.  Wrappers (``timeout``, ``nice``, ``stdbuf``) say where the command
    they run starts (``inner_at``), and shells (``bash -c``/``bash -lc``) hand back their script
    (``scripts``): the classifier judges those with the same rules, so a wrapper is exactly as safe as
    what it wraps.

Why:
    These programs evaluate part of their arguments.  Bash evaluates a variable name's subscript and the
    operands of ``-eq``... in ``[[ ]]`` as arithmetic, and arithmetic runs command substitution *whatever
    the quoting* (``test -v 'a[$(id)]'``); sed, awk and jq programs can write files, run commands and read
    the environment.  So each is allowed only when its code is proven to be plain: a variable name without
    a computed subscript, integer literals, a print-only sed script, an awk program without ``system``,
    pipes, ``getline``, ``ENVIRON`` or output redirection, a jq filter that never names the environment.

Pure: standard library only.
"""

from __future__ import annotations

import functools
import re

from swebash_ai.safety.programs import ProgramCheck, Spec, fs, parse_options, register

__all__ = ["FIND_FORBIDDEN", "SHELL_PROGRAMS"]

# -- test, [ and [[ ---------------------------------------------------------------------------------

_TEST_NAME_OPS = fs("-v -R")  # the operand is a variable name, its subscript evaluated as arithmetic
_TEST_ARITH_OPS = fs("-eq -ne -lt -le -gt -ge")  # in [[ ]] both operands are evaluated as arithmetic
_TEST_OPERATORS = fs(
    "! ( ) -a -o && || = == != < > =~ -nt -ot -ef -z -n -b -c -d -e -f -g -h -k -p -r -s -t -u -w -x -G -L -N "
    "-O -S"
) | _TEST_NAME_OPS | _TEST_ARITH_OPS
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[(?:[0-9]+|@|\*)\])?")
_INTEGER = re.compile(r"[+-]?[0-9]+")


def _check_test(prog: str, args: list[str]) -> ProgramCheck:
    """``test``/``[``/``[[``: existence checks on paths; variable names and arithmetic proven literal."""
    out = ProgramCheck()
    closing = {"[": "]", "[[": "]]"}.get(prog)
    words = args[:-1] if closing and args and args[-1] == closing else list(args)
    skip: set[int] = set()
    for k, a in enumerate(words):
        if a in _TEST_NAME_OPS and k + 1 < len(words):
            name = words[k + 1]
            skip.add(k + 1)
            if not _PLAIN_NAME.fullmatch(name):
                out.problems.append(
                    f"{prog} {a} {name!r}: bash evaluates a variable name's subscript as arithmetic, which can run "
                    "commands (only plain names such as NAME or NAME[0] run without asking)"
                )
        elif a in _TEST_ARITH_OPS:
            for n in (k - 1, k + 1):
                operand = words[n] if 0 <= n < len(words) else ""
                skip.add(n)
                if not _INTEGER.fullmatch(operand):
                    out.problems.append(
                        f"{prog} ... {a} {operand!r}: bash can evaluate the operands of {a} as arithmetic, which "
                        "can run commands (only integer literals run without asking)"
                    )
    for k, a in enumerate(words):
        if k not in skip and a not in _TEST_OPERATORS:
            out.paths.append((a, "exists"))
    return out


def _check_printf(args: list[str]) -> ProgramCheck:
    out = ProgramCheck()
    if args and args[0] != "--" and args[0].startswith("-v"):
        out.problems.append(
            "printf -v assigns a shell variable, and bash evaluates its subscript, which can run commands"
        )
    out.text += args  # a format and values: printed, never run or opened
    return out


def _check_command_lookup(args: list[str]) -> ProgramCheck:
    """``command -v NAME``/``command -V NAME``: says what a name would run, like ``type``; never runs it."""
    out = ProgramCheck()
    if not args or args[0] not in ("-v", "-V") or len(args) < 2 or any(a.startswith("-") for a in args[1:]):
        out.problems.append("command runs a program, bypassing functions and aliases (only `command -v NAME`, "
                            "which prints what NAME is, runs without asking)")
    else:
        out.text += args[1:]
    return out


def _check_loop_control(prog: str, args: list[str]) -> ProgramCheck:
    """``break``/``continue`` with at most one operand, a loop count written as digits."""
    out = ProgramCheck()
    if len(args) > 1 or (args and not args[0].isdigit()):
        out.problems.append(f"{prog} {' '.join(args)}: only `{prog}` or `{prog} N` (a loop count) runs without asking")
    return out


# -- sed ----------------------------------------------------------------------------------------------

_SED_ADDR = r"(?:\d+(?:~\d+)?|\$|/(?:[^/\\\n]|\\.)*/I?)"
_SED_CMD_RE = re.compile(rf"^\s*(?:{_SED_ADDR}(?:\s*,\s*(?:{_SED_ADDR}|\+\d+))?)?\s*!?\s*[pP=lqQ]?\s*$")
# s/RE/REPLACEMENT/FLAGS with flags that neither write (w) nor run (e): g, p, i, I, m, M, a number.
_SED_SUBST_RE = re.compile(
    rf"^\s*(?:{_SED_ADDR}(?:\s*,\s*(?:{_SED_ADDR}|\+\d+))?)?\s*!?\s*"
    r"s([/|:,#@])(?:(?!\1)[^\\\n]|\\.)*\1(?:(?!\1)[^\\\n]|\\.)*\1[gpiImM0-9]*\s*$"
)
_SED_FLAGS = fs("-E -r -s -u -z --regexp-extended --separate --unbuffered --null-data --posix --sandbox --debug")


def _sed_parts(script: str) -> list[str]:
    """The commands of a sed script: split at ``;``, newlines and braces, but not inside ``s`` commands.

    A split inside an ``s`` command only makes a part that is not a plain print, so it asks: splitting never
    hides a command.  Braces group commands (``/a/,/b/{p}``); their address stands as a part of its own.
    """
    return re.split(r"[;\n{}]", script)


def _check_sed(args: list[str]) -> ProgramCheck:
    """sed: only ``-n`` with print-only scripts (``sed -n '5,10p'``); every other command may write or run."""
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
        elif a in _SED_FLAGS:
            pass
        elif a == "--":
            operands += args[i:]
            break
        elif a in ("-e", "--expression") and i < len(args):
            scripts.append(args[i])
            i += 1
        elif a.startswith("--expression="):
            scripts.append(a.partition("=")[2])
        elif re.fullmatch(r"-[nEruzs]+", a):
            quiet = quiet or "n" in a
        elif a.startswith("-") and a != "-":
            out.problems.append(
                f"sed {a}: not a known read-only option of sed (-i edits files, -f reads a script that may "
                "write or run commands)"
            )
        else:
            operands.append(a)
    if not scripts and operands:
        scripts.append(operands.pop(0))
    if not quiet:
        out.problems.append("sed without -n: only print-only scripts like sed -n '5,10p' are auto-allowed")
    for s in scripts:
        if any(not (_SED_CMD_RE.match(part) or _SED_SUBST_RE.match(part)) for part in _sed_parts(s)):
            out.problems.append(
                f"sed script {s!r} is not a plain print (sed can write files with w, run commands with e, "
                "read files with r, or edit)"
            )
    out.paths += [(o, "read") for o in operands]
    return out


# -- awk ----------------------------------------------------------------------------------------------

_AWK_DANGERS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bsystem\s*\("), "runs commands with system()"),
    (re.compile(r"\|"), "pipes to or from a command (|)"),
    (re.compile(r"\bgetline\b"), "reads other files or commands with getline"),
    (re.compile(r"\bENVIRON\b"), "reads the environment (ENVIRON), which may hold API keys"),
    (re.compile(r"\bARG[VC]\b"), "changes which files it reads (ARGV)"),
    (re.compile(r"\bPROCINFO\b"), "reads process information (PROCINFO)"),
    # gawk's SYMTAB reaches every variable by a computed name: SYMTAB["ENV" "IRON"], SYMTAB["ARG" "V"][1]
    (re.compile(r"\bSYMTAB\b"), "reaches any variable by name (SYMTAB), ENVIRON and ARGV included"),
    (re.compile(r"@"), "loads extensions or other source files (@load, @include)"),
)
_AWK_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_AWK_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _awk_code(program: str) -> str:
    """The program with string literals blanked, when that can be done reliably; else the program as is.

    A ``/`` may start a regular expression or divide, and only a full awk parser can tell, so with a ``/``
    anywhere nothing is blanked (``print /"/ > "out"`` must not be read as a string hiding the ``>``).
    """
    return program if "/" in program else _AWK_STRING.sub('""', program)


def _awk_redirects(program: str) -> bool:
    """True when a print or printf statement may send its output to a file (``print $1 > "out"``).

    Statements are split at braces and semicolons only (awk continues a statement over a newline after a
    comma or a backslash), and a ``>`` after ``print`` outside parentheses counts as a redirection.  When the
    strings could not be blanked, the whole program is one statement: any ``>`` after a ``print`` asks.
    """
    text = _awk_code(program)
    # Unblanked strings may hold braces or semicolons: then the whole program is one statement.
    statements = [text] if text is program else re.split(r"[{};]", text)
    for statement in statements:
        m = re.search(r"\bprintf?\b", statement)
        if m is None:
            continue
        depth = 0
        for ch in statement[m.end() :]:
            depth += ch == "("
            depth -= ch == ")"
            if ch == ">" and depth <= 0:
                return True
    return False


def _check_awk(args: list[str]) -> ProgramCheck:
    """awk: ``-F``/``-v`` only, and a program that neither runs commands nor writes nor reads beyond its files."""
    out = ProgramCheck()
    operands: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if operands or a == "-" or not a.startswith("-"):
            operands.append(a)
        elif a == "--":
            operands += args[i:] or [""]
            break
        elif a in ("-F", "-v", "--field-separator", "--assign"):
            i += 1
        elif a.startswith(("-F", "-v", "--field-separator=", "--assign=")):
            pass
        else:
            out.problems.append(
                f"awk {a}: not a known read-only option of awk (-f reads a program file, others load code or "
                "write files)"
            )
    if not operands:
        return out
    program, files = operands[0], operands[1:]
    for pattern, what in _AWK_DANGERS:
        if pattern.search(_awk_code(program).replace("||", "  ")):
            out.problems.append(f"the awk program {what}")
    if _awk_redirects(program):
        out.problems.append("the awk program writes its output to a file (print > FILE)")
    out.paths += [(f, "read") for f in files if not _AWK_ASSIGNMENT.match(f)]
    return out


# -- jq -----------------------------------------------------------------------------------------------

_JQ_DANGERS: tuple[tuple[re.Pattern[str], str], ...] = (
    # jq reads ``$ ENV`` (with blanks or a comment after the $) just like ``$ENV``.
    (re.compile(r"\$(?:\s|#[^\n]*(?:\n|$))*(?:ENV|__prog_args)\b"), "reads the environment ($ENV)"),
    (re.compile(r"\benv\b"), "reads the environment (env)"),
    (re.compile(r"\binput_filename\b"), "reads file names (input_filename)"),
    (re.compile(r"\b(?:import|include)\b"), "loads modules from files (import, include)"),
    (re.compile(r"\bget_(?:search_list|prog_origin|jq_origin)\b"), "reads jq's own paths"),
)
_JQ = Spec(
    flags="nrjascCMSeRh",
    long_flags=fs(
        "--null-input --raw-input --slurp --compact-output --raw-output --raw-output0 --join-output "
        "--ascii-output --sort-keys --color-output --monochrome-output --tab --seq --stream --stream-errors "
        "--exit-status --unbuffered --help --version --args --jsonargs"
    ),
    short_values="fL",
    long_values=fs("--indent --from-file"),
    path_values=fs("-f --from-file"),
)


_JQ_ONE_VALUE = fs("--indent --from-file")


def _check_jq(args: list[str]) -> ProgramCheck:
    """jq: known options; a filter that never names the environment or loads modules; files are read paths."""
    out = ProgramCheck()
    rest: list[str] = []
    i = 0
    # One pass, left to right, as jq reads them: an option's value is never taken for an option
    # (``jq -L --arg . FILE``: jq takes ``--arg`` as the library directory, then ``.`` and FILE).
    while i < len(args):
        a = args[i]
        if a in _JQ_ONE_VALUE or (a.startswith("-") and not a.startswith("--") and len(a) == 2 and a[1] in "fL"):
            rest += args[i : i + 2]
            i += 2
            continue
        if re.fullmatch(r"-[A-Za-z]+L.*", a):  # jq reads -nL as "library directory L", getopt as -n -L VALUE
            out.problems.append(f"jq {a}: write -L on its own (jq and getopt read this cluster differently)")
            return out
        if a in ("--arg", "--argjson", "--slurpfile", "--rawfile"):
            if i + 2 >= len(args):
                out.problems.append(f"jq {a} needs a name and a value")
                return out
            if a in ("--slurpfile", "--rawfile"):
                out.paths.append((args[i + 2], "read"))
            i += 3
            continue
        rest.append(a)
        i += 1
    operands, seen = parse_options("jq", _JQ, rest, out)
    from_file = "-f" in seen or "--from-file" in seen
    if operands and not from_file:
        flt = operands.pop(0)
        out.problems += [f"the jq filter {what}" for pattern, what in _JQ_DANGERS if pattern.search(flt)]
    if "--args" in seen or "--jsonargs" in seen:
        operands = []  # positional words are values for $ARGS, not files
    out.paths += [(o, "read") for o in operands]
    return out


# -- find ---------------------------------------------------------------------------------------------

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
FIND_VALUE_PRIMARIES = fs(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -regextype -type -xtype -size "
    "-mtime -mmin -atime -amin -ctime -cmin -used -user -group -uid -gid -perm -links -inum -samefile "
    "-maxdepth -mindepth -lname -ilname -fstype -context -printf"
)
FIND_FLAG_PRIMARIES = fs(
    "-print -print0 -ls -prune -quit -true -false -not -and -or -a -o -empty -executable -readable "
    "-writable -nouser -nogroup -depth -d -mount -xdev -follow -noleaf -daystart -ignore_readdir_race "
    "-noignore_readdir_race -warn -nowarn -help -version ! ( ) ,"
)


def _check_find(args: list[str]) -> ProgramCheck:
    """find: every primary must be known (find has no abbreviations); actions that run or write ask."""
    out = ProgramCheck()
    i = 0
    while i < len(args) and (args[i] in ("-H", "-L", "-P") or args[i].startswith(("-D", "-O"))):
        i += 2 if args[i] == "-D" else 1
    starts: list[str] = []
    while i < len(args) and not args[i].startswith(("-", "(", "!", ")")):
        starts.append(args[i])
        i += 1
    rest = args[i:]
    # Any word that names an action asks, even where find would read it as a value (-name -delete): cheap
    # to ask, and a miscounted value can never hide an action.
    out.problems += [f"find {a} {FIND_FORBIDDEN[a]}" for a in rest if a in FIND_FORBIDDEN]
    j = 0
    while j < len(rest) and not out.problems:
        a = rest[j]
        j += 1
        if a in FIND_VALUE_PRIMARIES or re.fullmatch(r"-newer(?:[aBcm][aBcmt])?", a):
            j += 1
        elif a not in FIND_FLAG_PRIMARIES:
            out.problems.append(f"find {a}: not a known read-only primary of find (unknown primaries ask)")
            break
    out.paths += [(p, "list") for p in (starts or ["."])]
    if "-L" in args[:i] or "-follow" in rest:  # walks through symlinks: lists what they point to
        out.followed += starts or ["."]
    return out


# -- date ---------------------------------------------------------------------------------------------

_DATE = Spec(
    operands="text", flags="uR", long_flags=fs("--utc --universal --rfc-email --iso-8601 --debug --help --version"),
    short_values="dr", long_values=fs("--date --reference --rfc-3339"), path_values=fs("-r --reference"),
    effects={"-s": ("state", "sets the system clock"), "--set": ("state", "sets the system clock"),
             "-f": ("input", "reads dates from a file"), "--file": ("input", "reads dates from a file")},
)  # fmt: skip


def _check_date(args: list[str]) -> ProgramCheck:
    out = ProgramCheck()
    iso = [a for a in args if a.startswith("-I")]  # -I, -Iseconds: an optional value attached
    operands, _ = parse_options("date", _DATE, [a for a in args if a not in iso], out)
    for o in operands:
        if not o.startswith("+"):
            out.problems.append(f"date {o}: an operand that is not a +FORMAT sets the system clock")
    return out


# -- wrappers and shells ------------------------------------------------------------------------------


def _wrapper(
    prog: str, args: list[str], values: frozenset[str], flags: frozenset[str], positional: int
) -> ProgramCheck:
    """A program that runs a command: skip its own options and ``positional`` words, and point at the command."""
    out = ProgramCheck()
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "-":
        a = args[i]
        i += 1
        if a == "--":
            break
        if a.startswith("--"):
            name, eq, _ = a.partition("=")
            if name in values:
                i += 0 if eq else 1
            elif name not in flags:
                out.problems.append(f"{prog} {a}: not a known option of {prog} (unknown options ask)")
                return out
        elif a[:2] in values:
            i += 1 if len(a) == 2 else 0
        elif a not in flags and not (prog == "nice" and a[1:].isdigit()):
            out.problems.append(f"{prog} {a}: not a known option of {prog} (unknown options ask)")
            return out
    i += positional
    if i >= len(args):
        if prog != "nice":
            out.problems.append(f"{prog} without a command to run")
        return out
    out.inner_at = i
    return out


register("timeout", lambda a: _wrapper("timeout", a, fs("-s -k --signal --kill-after"),
                                       fs("--preserve-status --foreground -v --verbose"), 1))
register("nice", lambda a: _wrapper("nice", a, fs("-n --adjustment"), fs(""), 0))
register("stdbuf", lambda a: _wrapper("stdbuf", a, fs("-i -o -e --input --output --error"), fs(""), 0))

SHELL_PROGRAMS = fs("bash sh zsh dash")
_SHELL_FLAGS = frozenset("lceuxv")
_SHELL_LONG = fs("--login --norc --noprofile --posix")


def _check_shell(prog: str, args: list[str]) -> ProgramCheck:
    """``bash -c SCRIPT`` / ``bash -lc SCRIPT``: allowed when the script itself is proven read-only."""
    out = ProgramCheck()
    if args == ["--version"]:  # prints the version and exits before reading any start-up file
        return out
    command_mode = False
    operands: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if operands:
            operands.append(a)
        elif a in _SHELL_LONG:
            continue
        elif a in ("-o", "+o") and i < len(args) and args[i] in ("pipefail", "errexit", "nounset", "xtrace"):
            i += 1
        elif len(a) > 1 and a[0] == "-" and set(a[1:]) <= _SHELL_FLAGS:
            command_mode = command_mode or "c" in a
        else:
            if a.startswith(("-", "+")):
                out.problems.append(f"{prog} {a}: not a known option of {prog} (unknown options ask)")
                return out
            operands.append(a)
    if not command_mode:
        out.problems.append(f"{prog} without -c runs a script file or reads commands: cannot check them")
    elif len(operands) != 1:
        out.problems.append(f"{prog} -c with arguments after the script: cannot check what the script does with them")
    else:
        out.scripts.append(operands[0])
    return out


# -- version probes -----------------------------------------------------------------------------------

# ``python3 --version`` and the like: the one argument that prints a version and exits, nothing else.
# Not cargo/rustc/rustup (a workspace rust-toolchain.toml can name the binary they run), go (a go.mod toolchain
# line fetches and runs another go), docker (reads ~/.docker/config.json), pip/uv/deno/bun (read workspace config).
VERSION_PROBES: dict[str, frozenset[str]] = {
    **dict.fromkeys(("python", "python3"), fs("--version -V")),
    "node": fs("--version -v"),
    **dict.fromkeys(("gcc", "g++", "cc", "clang", "make", "cmake", "ruby"), fs("--version")),
    "perl": fs("--version -v"),
    "java": fs("-version --version"),
    "javac": fs("-version --version"),
}


def _check_version(prog: str, args: list[str]) -> ProgramCheck:
    out = ProgramCheck()
    if len(args) != 1 or args[0] not in VERSION_PROBES[prog]:
        out.problems.append(f"{prog} runs code; only `{prog} {sorted(VERSION_PROBES[prog])[0]}` runs without asking")
    return out


for _probe in VERSION_PROBES:
    register(_probe, functools.partial(_check_version, _probe))
for _shell in SHELL_PROGRAMS:
    register(_shell, functools.partial(_check_shell, _shell))
for _test in ("test", "[", "[["):
    register(_test, functools.partial(_check_test, _test))
register("printf", _check_printf)
register("command", _check_command_lookup)
for _control in ("break", "continue"):
    register(_control, functools.partial(_check_loop_control, _control))
register("sed", _check_sed)
for _awk in ("awk", "gawk", "mawk", "nawk"):
    register(_awk, _check_awk)
register("jq", _check_jq)
register("find", _check_find)
register("date", _check_date)
