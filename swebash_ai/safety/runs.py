"""The programs a command runs: through wrappers, paths, nested shells, ``eval``, here-strings and ``find -exec``.

Contract:
    :func:`programs_run` takes a command line and returns :class:`Runs`: every program it starts that can be
    read from the line (each as the words it will run with, the wrappers it was found through), and the
    reasons, if any, why some program cannot be known from the line (``eval "$x"``, a shell reading its script
    from a pipe, ``xargs`` whose program comes from its input, ``python -c`` code). Deny and ask rules match
    every program found; where one cannot be known, a rule in force makes the command ask (see
    :mod:`swebash_ai.agent.decide`). :func:`same_program` says whether a word names a given program (its
    name, a path to it, a symlink to it).

Why here, beside the classifier's parser:
    A deny rule that matches only the first word of each simple command is a rule that ``env touch``,
    ``/usr/bin/touch``, ``bash -c 'touch x'`` or ``find . -exec touch {} +`` walks around. The shell removes
    quotes and escapes (``t\\ouch``, ``'tou'ch``) before the program is chosen; the parser does the same
    (tree-sitter-bash), so the words here are the words that run.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

__all__ = ["Run", "Runs", "programs_run", "same_program"]

_MAX_DEPTH = 6


@dataclass(frozen=True)
class Run:
    """One program a command starts: its words as it runs them, and what it was found through."""

    argv: tuple[str, ...]
    via: tuple[str, ...] = ()
    exact: tuple[bool, ...] = ()
    """Per word: written out (no expansion, no glob), so the word is what the program gets."""
    fed: bool = False
    """Its standard input is a pipe, a here-document or here-string, or a file: it may read a script there."""


@dataclass(frozen=True)
class Runs:
    runs: tuple[Run, ...] = ()
    unknowable: tuple[str, ...] = ()
    scripts: tuple[str, ...] = ()
    """Every shell text read: the command, and each ``sh -c``, ``eval``, here-string... script inside it."""
    assigned: tuple[str, ...] = ()
    """Variables set through a program's arguments (``env NAME=VALUE``, ``sudo NAME=VALUE``)."""


@dataclass
class _Collect:
    runs: list[Run] = field(default_factory=list)
    unknowable: list[str] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)
    assigned: list[str] = field(default_factory=list)

    def cannot(self, reason: str) -> None:
        if reason not in self.unknowable:
            self.unknowable.append(reason)


@dataclass(frozen=True)
class _Wrapper:
    """A program that runs its arguments as a command: options taking a value, flags, words before the command."""

    values: frozenset[str] = frozenset()
    flags: frozenset[str] = frozenset()
    positional: int = 0
    no_command: frozenset[str] = frozenset()  # options after which it runs no command (``command -v``)


def _w(values: str = "", flags: str = "", positional: int = 0, no_command: str = "") -> _Wrapper:
    return _Wrapper(frozenset(values.split()), frozenset(flags.split()), positional, frozenset(no_command.split()))


#: Programs that run the command in their arguments (after their own options and ``positional`` words).
WRAPPERS: dict[str, _Wrapper] = {
    "command": _w(flags="-p", no_command="-v -V"),
    "builtin": _w(),
    "exec": _w(values="-a", flags="-c -l"),
    "nice": _w(values="-n --adjustment"),
    "nohup": _w(),
    "timeout": _w(values="-s --signal -k --kill-after", flags="--preserve-status --foreground -v --verbose",
                  positional=1),
    "stdbuf": _w(values="-i -o -e --input --output --error"),
    "time": _w(values="-f --format -o --output", flags="-p -v -a --portability --verbose --append"),
    "ionice": _w(values="-c --class -n --classdata", flags="-t --ignore", no_command="-p --pid -P --pgid -u --uid"),
    "chrt": _w(values="-T -P -D --sched-runtime --sched-period --sched-deadline",
               flags="-a --all-tasks -b --batch -d --deadline -f --fifo -i --idle -o --other -r --rr -R "
                     "--reset-on-fork -v --verbose", positional=1, no_command="-p --pid -m --max"),
    "taskset": _w(flags="-a --all-tasks -c --cpu-list", positional=1, no_command="-p --pid"),
    "setsid": _w(flags="-c --ctty -f --fork -w --wait"),
    "sudo": _w(values="-u --user -g --group -h --host -p --prompt -C --close-from -D --chdir -r --role -t --type "
                      "-T --command-timeout -U --other-user -R --chroot",
               flags="-A --askpass -b --background -E --preserve-env -H --set-home -n --non-interactive -P "
                     "--preserve-groups -S --stdin -k --reset-timestamp -B --bell",
               no_command="-l --list -v --validate -K --remove-timestamp -V --version"),
    "doas": _w(values="-u -C", flags="-n -L"),
    "nsenter": _w(values="-t --target -S --setuid -G --setgid --wd -w",
                  flags="-a --all -m -u -i -n -p -U -C -r -F --mount --uts --ipc --net --pid --user --cgroup"),
    "unshare": _w(flags="-m -u -i -n -p -U -C -T -f -r --mount --uts --ipc --net --pid --user --cgroup --time "
                        "--fork --map-root-user --mount-proc --kill-child"),
    "chroot": _w(values="--userspec --groups", flags="--skip-chdir", positional=1),
    "unbuffer": _w(flags="-p"),
    "fakeroot": _w(),
    "catchsegv": _w(),
    "strace": _w(values="-o -e -p -s -P -E -u -a -I -X -b -O -S", flags="-f -ff -c -C -q -qq -t -tt -ttt -T -v "
                      "-V -w -x -xx -y -yy -z -Z -k -i -r -d -D -DD -n -h"),
    "ltrace": _w(values="-o -e -p -s -a -l -u -x -n -w -A -L", flags="-f -c -C -i -r -S -t -tt -ttt -T -b -h"),
    "valgrind": _w(),
    "env": _w(values="-u --unset -C --chdir", flags="-i --ignore-environment -0 --null -v --debug"),
    "setarch": _w(flags="-R -L -B -X -3 -F -S -T -Z -v --addr-no-randomize --addr-compat-layout --32bit "
                        "--fdpic-funcptrs --sticky-timeouts --whole-seconds --short-inode --verbose", positional=1),
    **{arch: _w(flags="-R -L -B -X -3 -F -S -T -Z -v --addr-no-randomize --addr-compat-layout --32bit "
                      "--fdpic-funcptrs --sticky-timeouts --whole-seconds --short-inode --verbose")
       for arch in ("linux32", "linux64", "i386", "i486", "i586", "i686", "x86_64", "aarch64", "armv7l", "arm64",
                    "ppc", "ppc32", "ppc64", "ppc64le", "s390", "s390x", "mips", "mips64", "sparc", "sparc64",
                    "riscv64", "loongarch64", "parisc", "alpha", "ia64", "m68k")},
    "setpriv": _w(values="--reuid --regid --ruid --rgid --euid --egid --groups --inh-caps --ambient-caps "
                         "--bounding-set --securebits --pdeathsig --selinux-label --apparmor-profile "
                         "--landlock-access --landlock-rule",
                  flags="--clear-groups --keep-groups --init-groups --nnp --no-new-privs --reset-env",
                  no_command="-d --dump --list-caps -L"),
    "prlimit": _w(), "systemd-run": _w(), "dbus-run-session": _w(), "rlwrap": _w(), "firejail": _w(),
    "proot": _w(),
    "xargs": _w(values="-a --arg-file -d --delimiter -E -e --eof -L -l --max-lines -n --max-args -P --max-procs "
                       "-s --max-chars --process-slot-var",
                flags="-0 --null -o --open-tty -p --interactive -r --no-run-if-empty -t --verbose -x --exit "
                      "--show-limits"),
}

SHELLS = frozenset(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "fish", "hush", "msh",
                    "busybox-sh", "rbash", "rksh", "rzsh", "ksh93", "pdksh", "oksh", "lksh", "tcsh", "csh"])
#: Package runners that run the command after their own options: ``npx touch x``, ``npm exec -- touch x``. Each
#: with its options taking a value, its flags, and the options whose value is a shell script it runs.
_LAUNCHERS: dict[tuple[str, ...], tuple[frozenset[str], frozenset[str], frozenset[str]]] = {
    ("npx",): (frozenset({"-p", "--package", "--cache", "--userconfig", "-w", "--workspace"}),
               frozenset({"-y", "--yes", "--no", "-q", "--quiet", "--no-install", "--ignore-existing", "-ws",
                          "--workspaces", "--include-workspace-root"}), frozenset({"-c", "--call"})),
    ("npm", "exec"): (frozenset({"-p", "--package", "-w", "--workspace"}),
                      frozenset({"-y", "--yes", "--no", "-ws", "--workspaces", "--include-workspace-root"}),
                      frozenset({"-c", "--call"})),
    ("pnpm", "dlx"): (frozenset({"--package"}), frozenset({"--silent", "-s"}), frozenset({"-c",
                                                                                    "--shell-mode"})),
    ("yarn", "dlx"): (frozenset({"-p", "--package"}), frozenset({"-q", "--quiet"}), frozenset()),
    ("bunx",): (frozenset({"-p", "--package"}), frozenset({"--bun", "--no-install", "--silent"}), frozenset()),
}
#: Tools whose subcommand runs the command that follows it: ``uv run pytest``, ``bundle exec rake``.
_RUNNERS: dict[str, str] = {"uv": "run", "poetry": "run", "pipenv": "run", "bundle": "exec", "pnpm": "exec",
                            "conda": "run", "direnv": "exec", "pixi": "run", "hatch": "run", "pdm": "run"}
#: Interpreters whose inline code can start any program, with the options that take that code.
CODE_OPTIONS: dict[str, frozenset[str]] = {
    "python": frozenset({"-c"}), "perl": frozenset({"-e", "-E"}), "ruby": frozenset({"-e"}),
    "node": frozenset({"-e", "--eval", "-p", "--print"}), "nodejs": frozenset({"-e", "--eval", "-p", "--print"}),
    "deno": frozenset({"eval"}), "bun": frozenset({"-e", "--eval"}), "php": frozenset({"-r"}),
    "lua": frozenset({"-e"}), "osascript": frozenset({"-e"}), "pwsh": frozenset({"-c", "-Command"}),
    "tclsh": frozenset(), "expect": frozenset({"-c"}),
}
_SHELL_LONG = frozenset({"--norc", "--noprofile", "--posix", "--login", "--noediting", "--restricted", "--verbose"})
_SETS_PATH = re.compile(r"(?:^|[\s;&|({`])(?:export\s+|declare\s+(?:-x\s+)?)?PATH\+?=")
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
_SOURCES = frozenset({".", "source"})


def programs_run(command: str) -> Runs:
    """Every program ``command`` starts that its text shows, and why any other cannot be known."""
    return _cached(command)


@lru_cache(maxsize=512)
def _cached(command: str) -> Runs:
    out = _Collect()
    _read(command, (), out, 0)
    return Runs(tuple(out.runs), tuple(out.unknowable), tuple(out.scripts), tuple(out.assigned))


def _read(text: str, via: tuple[str, ...], out: _Collect, depth: int) -> None:
    from swebash_ai.safety.shell_parse import CONTROL_RE, parse

    if depth > _MAX_DEPTH:
        out.cannot("shells nested too deeply to follow")
        return
    if CONTROL_RE.search(text):
        out.cannot("control characters that the shell may read differently")
        return
    parsed = parse(text)
    if parsed is None:
        out.cannot("a syntax error: cannot read which programs it runs")
        return
    out.scripts.append(text)
    if _SETS_PATH.search(text):
        out.cannot("the command sets PATH, so the programs it runs are looked up elsewhere")
    feeds = _shell_inputs(text) if "<<" in text else []
    piped = {idx for pipeline in parsed.pipelines for idx in pipeline[1:]}
    reads = any(op == "read" for _, op in parsed.file_targets)
    for index, cmd in enumerate(parsed.commands):
        if not cmd.words:
            continue
        head = cmd.words[0]
        if not head.literal or head.glob or head.refs:
            out.cannot(f"the program is named by an expansion ({head.raw})")
            continue
        stdin = "pipe" if index in piped else None
        fed = next((i for i, (program, _) in enumerate(feeds) if program == os.path.basename(head.text)), None)
        if fed is not None:
            stdin = feeds.pop(fed)[1]
        start = len(out.runs)
        _unwrap(tuple(w.text for w in cmd.words), tuple(w.literal and not w.glob for w in cmd.words), via, out, depth,
                stdin)
        if stdin is not None or reads:  # what it (and what it starts) reads may be a script
            out.runs[start:] = [dataclasses.replace(run, fed=True) for run in out.runs[start:]]


def _unwrap(argv: tuple[str, ...], literal: tuple[bool, ...], via: tuple[str, ...], out: _Collect, depth: int,
            stdin: str | None) -> None:
    """Record ``argv`` and follow what it runs in turn."""
    if not argv:
        return
    out.runs.append(Run(argv, via, literal))
    name = os.path.basename(argv[0])
    args, lits = argv[1:], literal[1:]
    here = (*via, name)
    if name in _SOURCES:
        out.cannot(f"{name} runs the commands of a file")
    elif name == "eval":
        if all(lits):
            _read(" ".join(args), here, out, depth + 1)
        else:
            out.cannot("eval of text that is not written out (a variable or a substitution)")
    elif name in SHELLS or (name == "busybox" and args[:1] in (("sh",), ("ash",))):
        _shell(name, args[1:] if name == "busybox" else args, lits, here, out, depth, stdin)
    elif name == "busybox" and args:
        _unwrap(args, lits, here, out, depth, stdin)
    elif name in ("su", "runuser"):
        _string_option(name, args, lits, ("-c", "--command"), here, out, depth, "runs a shell reading its input")
    elif name == "script":
        _string_option(name, args, lits, ("-c", "--command"), here, out, depth, "runs an interactive shell")
    elif name == "sg":  # sg GROUP [-c] 'COMMAND': the command is a string for sh -c
        rest = args[2:] if args[1:2] == ("-c",) else args[1:]
        if rest and all(lits[len(args) - len(rest):]):
            _read(" ".join(rest), here, out, depth + 1)
        elif rest:
            out.cannot("sg runs text that is not written out")
    elif (name in ("alias", "coproc") or (name == "shopt" and "expand_aliases" in args)
          or (name in _RUNNERS and args[:1] == (_RUNNERS[name],))):
        if name in _RUNNERS:
            _runner(name, args[1:], lits[1:], here, out, depth)
        else:
            out.cannot(f"{name} changes or hides which program a word runs")
    elif name == "git" and any(a in ("-c", "--config-env") or a.startswith(("-c", "--config-env="))
                               for a in args[:_first_operand(args)]):
        out.cannot("git -c sets configuration that can name a program git runs (core.sshCommand, aliases...)")
    elif name == "flock":
        _flock(args, lits, here, out, depth)
    elif name == "find":
        _find(args, lits, here, out, depth)
    elif name == "watch":
        _watch(args, lits, here, out, depth)
    elif (name,) in _LAUNCHERS or (name, *args[:1]) in _LAUNCHERS or (name == "npm" and args[:1] == ("x",)):
        key = (name,) if (name,) in _LAUNCHERS else (name, "exec" if args[0] == "x" else args[0])
        _launcher(" ".join(key), _LAUNCHERS[key], args[len(key) - 1:], lits[len(key) - 1:], here, out, depth)
    elif name == "parallel":
        out.cannot("parallel builds its commands from its input and arguments")
    elif name in WRAPPERS:
        _wrapped(name, args, lits, here, out, depth, stdin)
    elif _interpreter(name) is not None:
        codes = CODE_OPTIONS[_interpreter(name) or ""]
        if any(a in codes or any(a.startswith(c) and len(c) == 2 and not c.startswith("--") for c in codes)
               for a in args):
            out.cannot(f"{name} runs code given on the command line, which can start any program")
    elif name in _AWKS and any("system" in a or "|" in a for a in args):
        out.cannot(f"{name} code that runs commands (system() or a pipe)")


def _launcher(name: str, spec: tuple[frozenset[str], frozenset[str], frozenset[str]], args: tuple[str, ...],
              lits: tuple[bool, ...], via: tuple[str, ...], out: _Collect, depth: int) -> None:
    """``npx [options] CMD...``, ``npm exec [options] -- CMD...``, ``npm exec -c 'SCRIPT'``."""
    values, flags, scripts = spec
    i = 0
    while i < len(args) and args[i].startswith("-"):
        option, eq, value = args[i].partition("=")
        i += 1
        if option == "--":
            break
        if option in scripts:
            text = value if eq else (args[i] if i < len(args) else "")
            if not lits[i - (1 if eq else 0)]:
                out.cannot(f"{name} {option} of text that is not written out")
            else:
                _read(text, via, out, depth + 1)
            return
        if option in values:
            i += 0 if eq else 1
        elif option not in flags:
            out.cannot(f"{name} {option}: an option not known here, so where its command starts is not known")
            return
    if i < len(args):
        if not lits[i]:
            out.cannot(f"the program {name} runs is named by an expansion ({args[i]})")
            return
        _unwrap(args[i:], lits[i:], via, out, depth, None)


def _first_operand(args: Sequence[str]) -> int:
    """Where a git-like program's subcommand stands (its global options come before it)."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in ("-c", "-C", "--config-env", "--git-dir", "--work-tree", "--namespace") else 1
    return i


def _runner(name: str, args: tuple[str, ...], lits: tuple[bool, ...], via: tuple[str, ...], out: _Collect,
            depth: int) -> None:
    """``uv run [options] CMD...``: the command after the options; an option not known ends the reading."""
    i = 0
    if i < len(args) and args[i] == "--":
        i += 1
    elif i < len(args) and args[i].startswith("-"):
        out.cannot(f"{name} {_RUNNERS[name]} {args[i]}: an option not known here, so where its command starts "
                   "is not known")
        return
    if i < len(args):
        _unwrap(args[i:], lits[i:], via, out, depth, None)


def _interpreter(name: str) -> str | None:
    base = name.rstrip("0123456789.")
    return base if base in CODE_OPTIONS else None


def _wrapped(name: str, args: tuple[str, ...], lits: tuple[bool, ...], via: tuple[str, ...], out: _Collect,
             depth: int, stdin: str | None) -> None:
    spec = WRAPPERS[name]
    i = 0
    replace: str | None = None
    while i < len(args):
        word = args[i]
        if name in ("env", "sudo", "doas") and "=" in word and not word.startswith("-"):
            if word.startswith("PATH="):
                out.cannot(f"{name} sets PATH, so the programs it runs are looked up elsewhere")
            out.assigned.append(word.partition("=")[0])
            i += 1  # NAME=VALUE
            continue
        if not word.startswith("-") or word == "-":
            if name == "env" and word == "-":
                i += 1
                continue
            break
        i += 1
        if word == "--":
            break
        option, eq, value = word.partition("=")
        if name == "env" and option in ("-S", "--split-string"):  # env -S '-i CMD': more words of env's own
            rest = value if eq else (args[i] if i < len(args) else "")
            _read(" ".join(["env", rest, *args[i + (0 if eq else 1):]]), via[:-1], out, depth + 1)
            return
        if (name == "xargs" and option in ("-I", "-i", "--replace")) or (name == "xargs" and word.startswith("-I")):
            replace = value if eq else (word[2:] if len(word) > 2 else (args[i] if i < len(args) else "{}"))
            i += 0 if eq or len(word) > 2 or option in ("-i", "--replace") else 1
            continue
        if option in spec.no_command or word in spec.no_command:
            return
        if option in spec.values:
            i += 0 if eq else 1
        elif word[:2] in spec.values and len(word) > 2 and not word.startswith("--"):
            pass  # -n5: the value is attached
        elif option in spec.flags or word in spec.flags or (name == "nice" and word[1:].isdigit()):
            pass
        elif len(word) > 2 and not word.startswith("--") and all(f"-{c}" in spec.flags for c in word[1:]):
            pass  # a cluster of flags: -fw
        else:
            out.cannot(f"{name} {word}: an option not known here, so where its command starts is not known")
            return
    i += spec.positional
    if i >= len(args):
        if name == "xargs":
            out.runs.append(Run(("echo",), via, (True,)))  # xargs without a command runs echo
        elif name in ("sudo", "doas") and stdin is None:
            out.cannot(f"{name} without a command")
        return
    if name == "xargs":
        if replace is not None and replace in args[i]:
            out.cannot("xargs takes the program's name from its input")
            return
        if not lits[i]:
            out.cannot(f"the program xargs runs is named by an expansion ({args[i]})")
            return
    _unwrap(args[i:], lits[i:], via, out, depth, stdin)


def _shell(name: str, args: tuple[str, ...], lits: tuple[bool, ...], via: tuple[str, ...], out: _Collect,
           depth: int, stdin: str | None) -> None:
    """``sh -c SCRIPT`` reads SCRIPT; ``sh`` reads its input (a here-string or here-document is read too)."""
    i = 0
    command_mode = False
    while i < len(args):
        word = args[i]
        if word in ("-o", "+o", "-O", "+O") and i + 1 < len(args):
            i += 2
            continue
        if word == "--":
            i += 1
            break
        if len(word) > 1 and word[0] in "-+" and not word.startswith("--"):
            command_mode = command_mode or "c" in word[1:]
            i += 1
            continue
        if word in ("--version", "--help"):
            return  # prints and exits before reading any script
        if word.startswith("--"):
            if word not in _SHELL_LONG:  # --rcfile FILE, --init-file FILE: a file of commands it runs
                out.cannot(f"{name} {word}: an option not known here, which may run other code")
                return
            i += 1
            continue
        break
    if command_mode:
        if i >= len(args):
            out.cannot(f"{name} -c without a script")
        elif not lits[i]:
            out.cannot(f"{name} -c of text that is not written out (a variable or a substitution)")
        else:
            _read(args[i], via, out, depth + 1)
        return
    if i < len(args):
        out.cannot(f"{name} runs the script file {args[i]}")
    elif stdin is None or stdin == "pipe":
        out.cannot(f"{name} reads the commands it runs from its input")
    elif stdin.startswith("\x00"):
        out.cannot(f"{name} reads a here-document that expands variables or substitutions")
    else:
        _read(stdin, via, out, depth + 1)


def _string_option(name: str, args: tuple[str, ...], lits: tuple[bool, ...], options: tuple[str, ...],
                   via: tuple[str, ...], out: _Collect, depth: int, without: str, bare_runs: bool = False) -> None:
    for i, word in enumerate(args):
        option, eq, value = word.partition("=")
        if option in options:
            text = value if eq else (args[i + 1] if i + 1 < len(args) else "")
            if not (lits[i] and (eq or (i + 1 < len(lits) and lits[i + 1]))):
                out.cannot(f"{name} {option} of text that is not written out")
            else:
                _read(text, via, out, depth + 1)
            return
    if bare_runs and args and not args[0].startswith("-"):
        _unwrap(args, lits, via, out, depth, None)
        return
    out.cannot(f"{name} {without}")


def _flock(args: tuple[str, ...], lits: tuple[bool, ...], via: tuple[str, ...], out: _Collect, depth: int) -> None:
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] in ("-c", "--command"):
            _string_option("flock", args[i:], lits[i:], ("-c", "--command"), via, out, depth, "")
            return
        i += 2 if args[i] in ("-w", "--timeout", "-E", "--conflict-exit-code") else 1
    if i + 1 < len(args):  # flock FILE CMD... (a lone FD runs nothing)
        rest = args[i + 1:]
        if rest[0] in ("-c", "--command"):
            _string_option("flock", rest, lits[i + 1:], ("-c", "--command"), via, out, depth, "")
        else:
            _unwrap(rest, lits[i + 1:], via, out, depth, None)


def _find(args: tuple[str, ...], lits: tuple[bool, ...], via: tuple[str, ...], out: _Collect, depth: int) -> None:
    i = 0
    while i < len(args):
        if args[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "+")), len(args))
            words, flags = args[i + 1:end], lits[i + 1:end]
            if words and (not flags[0] or "{}" in words[0]):
                out.cannot("find -exec runs a program named by a file name or an expansion")
            elif words:
                _unwrap(words, flags, via, out, depth, None)
            i = end
        i += 1


def _watch(args: tuple[str, ...], lits: tuple[bool, ...], via: tuple[str, ...], out: _Collect, depth: int) -> None:
    i, direct = 0, False
    while i < len(args) and args[i].startswith("-"):
        word = args[i]
        direct = direct or word in ("-x", "--exec")
        i += 2 if word in ("-n", "--interval", "-q", "--equexit") else 1
    if i >= len(args):
        return
    if direct:
        _unwrap(args[i:], lits[i:], via, out, depth, None)
    elif all(lits[i:]):
        _read(" ".join(args[i:]), via, out, depth + 1)
    else:
        out.cannot("watch runs text that is not written out")


def _shell_inputs(text: str) -> list[tuple[str, str]]:
    """Here-strings and here-documents in the order written, each with the program word of the command it feeds.

    A here-document whose delimiter is unquoted expands ``$`` and backticks: its text is marked unknowable
    (a leading NUL) when it holds either, and so is a here-string that is not plain text."""
    from swebash_ai.safety.shell_parse import _get_parser

    tree = _get_parser().parse(text.encode())
    found: list[tuple[str, str]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        kids = list(node.children)
        command = kids[0] if node.type == "redirected_statement" and kids else node
        if command.type == "command":
            name = command.child_by_field_name("name")
            program = os.path.basename(name.text.decode()) if name is not None and name.text else ""
            for redirect in kids[1:] if command is not node else kids:
                body = _input_text(redirect)
                if body is not None:
                    found.append((program, body))
        stack.extend(reversed(kids))
    return found


def _input_text(redirect: Any) -> str | None:
    kids = list(redirect.children)
    if redirect.type == "herestring_redirect" and len(kids) >= 2:
        value = kids[-1]
        raw = str(value.text.decode())
        if value.type == "raw_string":
            return raw[1:-1]
        if value.type == "word" and not any(c in raw for c in "$`\\'\""):
            return raw
        if value.type == "string" and not any(c in raw[1:-1] for c in "$`\\"):
            return raw[1:-1]
        return "\x00"
    if redirect.type == "heredoc_redirect":
        start = next((k for k in kids if k.type == "heredoc_start"), None)
        body = next((k for k in kids if k.type == "heredoc_body"), None)
        if body is None:
            return ""
        text = str(body.text.decode())
        quoted = start is not None and any(q in start.text.decode() for q in "'\"\\")
        if not quoted and ("$" in text or "`" in text or "\\" in text):
            return "\x00"
        return text
    return None


# -- naming a program ---------------------------------------------------------------------------------------


def same_program(word: str, program: str, cwd: str | None = None, path: str | None = None) -> bool:
    """Whether ``word`` (a command's first word) starts ``program``: its name, a path ending in it, or any name
    or path that resolves to the same file as ``program`` found on PATH (a symlink, ``./bin/../touch``), or to
    a copy of it (the same bytes)."""
    if os.path.basename(word) == os.path.basename(program):
        return True
    target = _resolve(program, cwd, path)
    found = _resolve(word, cwd, path) if target is not None else None
    return found is not None and (found == target or _same_bytes(found, str(target)))


def missing_program(word: str, cwd: str | None = None) -> bool:
    """A program named by a path that does not exist (yet): a link or a copy made earlier in the same command."""
    if "/" not in word:
        return False
    return not os.path.exists(os.path.join(cwd or os.getcwd(), os.path.expanduser(word)))


def _same_bytes(a: str, b: str) -> bool:
    try:
        if os.path.getsize(a) != os.path.getsize(b):
            return False
        with open(a, "rb") as fa, open(b, "rb") as fb:
            return fa.read(4 << 20) == fb.read(4 << 20)
    except OSError:
        return False


def _resolve(word: str, cwd: str | None, path: str | None) -> str | None:
    try:
        if "/" in word:
            full = os.path.join(cwd or os.getcwd(), os.path.expanduser(word))
            return os.path.realpath(full) if os.path.isfile(full) else None
        found = shutil.which(word, path=path)
        return os.path.realpath(found) if found else None
    except (OSError, ValueError):
        return None
