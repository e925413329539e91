"""The read-only program table: what each allowlisted program's options do, and the registry the classifier reads.

Contract:
    Rule modules (:mod:`~swebash_ai.safety.command_rules`, :mod:`~swebash_ai.safety.text_rules`,
    :mod:`~swebash_ai.safety.git_rules`) describe programs with a :class:`Spec` (an option table) or a
    checker function and :func:`register` them here.  :func:`check_allowed` takes a bare program name and
    its literal arguments and returns ``None`` (not on the read-only list) or a :class:`ProgramCheck`: the
    problems that make this use unsafe (each one makes the command ``ask``, and is the reason the user
    reads) and the path arguments to hand to the path policy with the operation they perform.

    An option table lists, for one program, the options that only read (flags, and options taking a value),
    and the options with an effect (:data:`EFFECTS`: write, execute, read the environment, never end...)
    with what they do.  **An option that is in neither list makes the command ask**: the table is the proof
    that a use is read-only, so a gap in it costs a question, never a silent run.

    The same table answers a second, weaker question, the one rules ask (:mod:`~swebash_ai.safety.proven`):
    does this use run another program?  :func:`check_program` also knows programs that write but never start
    another program (``mkdir``, ``cp``: registered with ``read_only=False``, so they are not on the read-only
    list), and :attr:`ProgramCheck.contained` names the problems that are effects other than running a
    program (a write, the network...).  :func:`runs_nothing` is the answer: a use is proven not to run
    another program when the program is in the table and every problem it has is contained.  The read-only
    answer (no problem at all) implies it: the classifier and the rules ask of one table.

Why:
    A deny-list of dangerous options fails open on the one nobody listed (``git branch --sort=x NAME``
    creates a branch, ``jq '$ ENV'`` dumps the environment).  Options are parsed the way getopt does (short
    clusters ``-rf``, attached values ``-n5``, ``--opt=value``, unique long prefixes such as ``--foll`` for
    ``--follow``), because a rule that only looks for ``-f`` misses ``-nf``.  Rule modules depend on this
    module and never on each other or on the classifier, so the dependency runs one way.

Pure: standard library only; never touches the file system.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

__all__ = [
    "EFFECTS",
    "INERT",
    "PathOp",
    "ProgramCheck",
    "Spec",
    "allowed_programs",
    "check_allowed",
    "check_program",
    "fs",
    "long_match",
    "register",
    "runs_nothing",
]

PathOp = Literal["read", "list", "exists", "metadata"]
Operands = Literal["paths", "text", "none", "first_text_then_paths"]
Effect = Literal["write", "exec", "env", "forever", "input", "state", "network"]

EFFECTS: Mapping[str, str] = MappingProxyType(
    {
        "write": "writes files",
        "exec": "runs other programs",
        "env": "reads the environment, which may hold API keys",
        "forever": "never ends",
        "input": "reads a list of file names from a file",
        "state": "changes the state of the shell or the system",
        "network": "uses the network",
    }
)


@dataclass
class ProgramCheck:
    """What the allowlist found for one simple command."""

    problems: list[str] = field(default_factory=list)
    paths: list[tuple[str, PathOp]] = field(default_factory=list)
    trees: list[str] = field(default_factory=list)  # directories whose files are all read
    patterns: list[str] = field(default_factory=list)  # words taken as text (a pattern), not as paths
    scripts: list[str] = field(default_factory=list)  # shell scripts this one runs (bash -c SCRIPT)
    inner_at: int | None = None  # where the command this one runs starts in its arguments (timeout 5 CMD)
    workdir: str | None = None  # the directory the program works in, when an option moves it (git -C DIR)
    maybe_paths: list[str] = field(default_factory=list)  # words that are paths if they exist (git revisions)
    reveals_config: bool = False  # prints configuration, which may hold credentials (git config --list)
    text: list[str] = field(default_factory=list)  # operands that are only printed or compared (echo WORDS)
    followed: list[str] = field(default_factory=list)  # directories listed recursively through symlinks (ls -RL)
    contained: list[str] = field(default_factory=list)
    """Of ``problems``, those known not to start another program (a write, a state change, the network...)."""


def fs(names: str) -> frozenset[str]:
    """A set from a space-separated string (keeps the tables compact)."""
    return frozenset(names.split())


@dataclass(frozen=True)
class Spec:
    """The option table of one read-only program.

    Attributes:
        op: What the program does to its path operands (read, list, exists, metadata).
        operands: What non-option words are: ``paths`` to check, plain ``text``, ``none`` allowed, or a
            pattern followed by paths (grep).
        flags: Short options that only read and take no value (``"alh"`` for ``ls -alh``).
        long_flags: Long options that only read; an optional ``=VALUE`` is accepted (``--color=never``).
        short_values: Short options that take a required value (``-n 5``, ``-n5``).
        long_values: Long options that take a required value (``--lines 5``, ``--lines=5``).
        path_values: Of the options taking a value, those whose value is a file the program reads.
        effects: Options that do more than read, each with its effect and what it does; they make the
            command ask with that text.
        numeric: Accept ``-NUM`` (``head -5``, ``fmt -72``).
        free_options: The program takes no options (``echo``): every word is an operand.
        max_operands: More operands than this means an output file (``uniq IN OUT``).
        default_cwd: With no operand the program reads the working directory (``ls``, ``du``).
        recursive: Short and long options that make the program read whole trees below its operands.
        always_recursive: The program reads whole trees below directory operands whatever its options.
    """

    op: PathOp = "read"
    operands: Operands = "paths"
    flags: str = ""
    long_flags: frozenset[str] = frozenset()
    short_values: str = ""
    long_values: frozenset[str] = frozenset()
    path_values: frozenset[str] = frozenset()
    effects: Mapping[str, tuple[Effect, str]] = field(default_factory=dict)
    numeric: bool = False
    free_options: bool = False
    max_operands: int | None = None
    default_cwd: bool = False
    recursive: frozenset[str] = frozenset()
    always_recursive: bool = False


Checker = Callable[[list[str]], ProgramCheck]
_RULES: dict[str, Checker] = {}
_READ_ONLY: set[str] = set()

#: Programs that start no other program whatever words they are given (so a word the shell computes, ``cat
#: "$f"``, cannot turn one of them into a launcher). Each is in the table; none has an option that runs a
#: program, reads a program's name from a file or the environment, or loads code. Not here: ``sort``
#: (``--compress-program``), ``rg`` (``--pre``), ``file`` (``-z`` runs decompressors), ``less`` (``LESSOPEN``),
#: ``diff``'s cousin ``sdiff``, ``git``, ``tar``, ``find``, ``printf`` (``-v`` evaluates a subscript).
INERT: frozenset[str] = frozenset((
    ":", "true", "false", "echo", "cat", "wc", "head", "tail", "ls", "pwd", "basename", "dirname", "realpath",
    "readlink", "stat", "du", "df", "uniq", "cut", "tr", "nl", "rev", "tac", "fold", "fmt", "paste", "comm",
    "join", "expand", "unexpand", "seq", "id", "whoami", "uname", "arch", "nproc", "cmp", "diff", "grep",
    "egrep", "fgrep", "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum",
    "base32", "base64", "od", "hexdump", "xxd", "column", "tree", "cal", "uptime", "free",
    "mkdir", "rmdir", "touch", "rm", "cp", "mv", "ln", "chmod", "tee", "sleep", "truncate",
))


def register(name: str, rule: Spec | Checker, read_only: bool = True) -> None:
    """Put ``name`` in the table, judged by an option table or a checker function; ``read_only``: on the read-only
    list too (else the table only proves which of its uses start no other program: see :func:`runs_nothing`)."""
    if isinstance(rule, Spec):
        spec = rule
        _RULES[name] = lambda args: check_spec(name, spec, args)
    else:
        _RULES[name] = rule
    if read_only:
        _READ_ONLY.add(name)


def allowed_programs() -> frozenset[str]:
    """Every program name on the read-only list (after the rule modules have registered)."""
    return frozenset(_READ_ONLY)


def check_allowed(prog: str, args: list[str]) -> ProgramCheck | None:
    """The rules for a read-only program, or ``None`` when ``prog`` is not on the read-only list."""
    rule = _RULES.get(prog) if prog in _READ_ONLY else None
    return None if rule is None else rule(args)


def check_program(prog: str, args: list[str]) -> ProgramCheck | None:
    """The table's reading of any program it knows (read-only or not), or ``None`` when it is not in the table."""
    rule = _RULES.get(prog)
    return None if rule is None else rule(args)


def runs_nothing(prog: str, args: list[str]) -> list[str]:
    """Why this use of ``prog`` is not proven to start no other program (empty: proven).

    Proven means: the program is in the table, and every problem its table finds is a contained effect
    (:attr:`ProgramCheck.contained`): an unknown option, an option that runs code and a checker's own
    refusal all leave it unproven."""
    check = check_program(prog, args)
    if check is None:
        return [f"{prog} is not in the table of programs known not to start others"]
    return [p for p in check.problems if p not in check.contained]


def long_match(name: str, options: frozenset[str] | Mapping[str, object]) -> str | None:
    """GNU-style: an exact long option, or a prefix of one (``--foll`` is ``--follow``); ``None`` if neither."""
    if name in options:
        return name
    if len(name) >= 3:
        hits = [o for o in options if o.startswith(name)]
        if hits:
            return sorted(hits)[0]
    return None


def effect_problem(prog: str, option: str, spec_effect: tuple[Effect, str]) -> str:
    """The reason a user reads for an option with an effect: ``sort -o writes its output to a file``."""
    _, what = spec_effect
    return f"{prog} {option} {what}"


def _effect(out: ProgramCheck, problem: str, effect: Effect) -> None:
    out.problems.append(problem)
    if effect != "exec":
        out.contained.append(problem)


def unknown_problem(prog: str, option: str) -> str:
    """The reason for an option the table does not know."""
    return f"{prog} {option}: not a known read-only option of {prog} (unknown options ask)"


def parse_options(prog: str, spec: Spec, args: list[str], out: ProgramCheck) -> tuple[list[str], list[str]]:
    """Walk ``args`` as getopt would: record problems and path values in ``out``.

    Returns:
        ``(operands, seen)``: the non-option words, and the options seen (long names, ``-x`` for short ones).
    """
    operands: list[str] = []
    seen: list[str] = []
    effect_longs = {k: v for k, v in spec.effects.items() if k.startswith("--")}
    i = 0
    only_operands = False
    while i < len(args):
        a = args[i]
        i += 1
        if spec.free_options or only_operands or a == "-" or not a.startswith("-"):
            operands.append(a)
            continue
        if a == "--":
            only_operands = True
            continue
        if a.startswith("--"):
            name, eq, value = a.partition("=")
            exact = name in spec.long_values or name in spec.long_flags  # getopt: an exact name wins
            hit = None if exact else long_match(name, effect_longs)
            if hit is not None:
                _effect(out, effect_problem(prog, name, spec.effects[hit]), spec.effects[hit][0])
                continue
            takes = long_match(name, spec.long_values)
            if takes is not None:
                if not eq:
                    if i >= len(args):
                        out.problems.append(f"{prog} {name} needs a value")
                        continue
                    value = args[i]
                    i += 1
                seen += [takes, f"{takes}={value}"]
                if takes in spec.path_values:
                    out.paths.append((value, "read"))
                continue
            flag = long_match(name, spec.long_flags)
            if flag is None:
                out.problems.append(unknown_problem(prog, name))
                continue
            seen.append(flag)
            continue
        if spec.numeric and a[1:].isdigit():
            continue
        j = 1  # a short cluster: -abc, -n5, -n 5
        while j < len(a):
            ch = a[j]
            j += 1
            if f"-{ch}" in spec.effects:
                _effect(out, effect_problem(prog, f"-{ch}", spec.effects[f"-{ch}"]), spec.effects[f"-{ch}"][0])
                break
            if ch in spec.short_values:
                value = a[j:]
                if not value:
                    if i >= len(args):
                        out.problems.append(f"{prog} -{ch} needs a value")
                        break
                    value = args[i]
                    i += 1
                seen += [f"-{ch}", f"-{ch}={value}"]
                if f"-{ch}" in spec.path_values:
                    out.paths.append((value, "read"))
                break
            if ch in spec.flags:
                seen.append(f"-{ch}")
                continue
            if spec.numeric and ch.isdigit():
                continue
            out.problems.append(unknown_problem(prog, f"-{ch}"))
            break
    return operands, seen


def check_spec(prog: str, spec: Spec, args: list[str]) -> ProgramCheck:
    """Judge one use of a program described by an option table."""
    out = ProgramCheck()
    operands, seen = parse_options(prog, spec, args, out)
    recursive = spec.always_recursive or any(s in spec.recursive for s in seen)
    if spec.operands == "first_text_then_paths":
        pattern_given = any(s in ("-e", "-f", "--regexp", "--file") for s in seen)
        lists_only = any(s in ("--files", "--type-list") for s in seen)
        if operands and not pattern_given and not lists_only:
            out.patterns.append(operands[0])
            operands = operands[1:]
        if not operands and recursive:
            operands = ["."]
        out.paths += [(o, spec.op) for o in operands]
        if recursive:
            out.trees += operands
    elif spec.operands == "paths":
        if not operands and spec.default_cwd:
            operands = ["."]
        out.paths += [(o, spec.op) for o in operands]
        if recursive:
            out.trees += operands
    elif spec.operands == "text":
        out.text += operands
    elif spec.operands == "none" and operands:
        _effect(out, f"{prog} with arguments {' '.join(operands)!r} may change settings", "state")
    if spec.max_operands is not None and len(operands) > spec.max_operands:
        _effect(out, f"{prog} with {len(operands)} file arguments writes to the last one", "write")
    return out


# -- the variables a command may set ---------------------------------------------------------------------------

#: Upper-case variables a command may set (before a program, with ``env``, ``export``, ``read``) and still be
#: proven: each is read by programs only as data (a language, a time zone, a width, a switch). Every other
#: upper-case name may point a program at other code (``BASH_ENV``, ``PATH``, ``LD_PRELOAD``, ``GIT_DIR``,
#: ``PYTHONSTARTUP``, ``PS4``, ``LESSOPEN``, ``EDITOR``...), so it is not proven. Lower-case names are the shell
#: script's own, except those zsh ties to its search paths (``path``, ``fpath``...).
SAFE_VARIABLES: frozenset[str] = frozenset((
    "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_NUMERIC", "LC_TIME", "TZ", "TERM",
    "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "CI", "DEBUG", "VERBOSE",
    "NODE_ENV", "RUST_BACKTRACE", "RUST_LOG", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED",
    "PYTHONIOENCODING", "PYTHONUTF8", "CGO_ENABLED", "GOOS", "GOARCH", "TMPDIR", "OMP_NUM_THREADS", "PORT",
))
_ZSH_TIED = frozenset(("path", "fpath", "module_path", "cdpath", "manpath", "mailpath", "psvar", "fignore"))


def safe_variable(name: str) -> bool:
    """Whether a command may set (or export, or read into, or unset) the variable ``name`` and stay proven."""
    if name in SAFE_VARIABLES:
        return True
    return bool(name) and name not in _ZSH_TIED and name.replace("_", "a").isalnum() and name.islower() \
        and not name[0].isdigit()
