"""Proven: whether a command runs only what its text shows, each program known not to start another.

Contract:
    :func:`unproven` takes a command line and returns the reasons it is *not* proven (an empty list: proven).
    A command is proven when

    * every program it runs can be read from the line (:func:`~swebash_ai.safety.runs.programs_run`: through
      wrappers, nested shells, ``eval`` of literals, ``find -exec``, ``npx``...), named by a bare name or by a
      path to the program of that name on ``PATH`` (never ``/proc/self/fd/3`` nor ``/dev/fd/3``);
    * each program is one whose starting of others is followed there (a wrapper, a shell, ``find``), or is
      covered by an allow rule (``covered``), or is in the classifier's option table used with options and
      inputs the table knows not to start another program (:func:`~swebash_ai.safety.programs.runs_nothing`:
      the same table the read-only allowlist is, which also knows programs that write, such as ``mkdir``);
      a word the shell computes (``"$f"``, a glob) is accepted only by a program that starts no other program
      whatever its words (:data:`~swebash_ai.safety.programs.INERT`);
    * every shell construct in it is one the parse follows: no variable set but those known to be data
      (:func:`~swebash_ai.safety.programs.safe_variable`: not ``BASH_ENV``, ``ENV``, ``BASH_FUNC_*``,
      ``BASH_CMDS``, ``PATH``, ``GIT_*``...), no subscript or arithmetic bash evaluates (``$((x))``,
      ``${a[$i]}``, ``test -v``, ``[[ -eq ]]``, ``let``, ``read``, ``declare -n``), no ``trap``.

    Anything else is not proven, with the reason. It never runs anything.

    :func:`effect_option` finds the words after an allow rule's prefix that make the program run other code or
    write elsewhere (the allow rule then does not cover the command).

Why one predicate, and why the list is of what is allowed:
    Rules must hold through every spelling of a program, and a list of the ways to start one always misses
    the next (``gdb -ex``, ``tar -I``, ``trap``, ``BASH_ENV``). So with a deny or ask rule in force a command
    runs without a person only when it is proven (:mod:`swebash_ai.agent.decide`); the classifier's read-only
    answer is the stronger reading of the same table, so both ask one question of one table.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Sequence
from typing import Any

from swebash_ai.config.rules import GLOBAL_OPTIONS
from swebash_ai.safety.programs import INERT, runs_nothing, safe_variable

__all__ = ["GIT_REDIRECTS", "PROJECT_LAUNCHERS", "effect_option", "git_redirect", "git_variables", "unproven"]

#: git's variables that point it at other configuration, repositories or programs. A command that sets one
#: replaces the guard the executor puts on a repository's own program-running config (``GIT_CONFIG_COUNT``).
GIT_REDIRECTS: frozenset[str] = frozenset((
    "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_NAMESPACE",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS", "GIT_SSH", "GIT_SSH_COMMAND",
    "GIT_SSH_VARIANT", "GIT_EXTERNAL_DIFF", "GIT_EXEC_PATH", "GIT_ASKPASS", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
    "GIT_PAGER", "GIT_PROXY_COMMAND", "GIT_TEMPLATE_DIR", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_SHALLOW_FILE", "GIT_REPLACE_REF_BASE", "GIT_ALLOW_PROTOCOL", "GIT_PROTOCOL_FROM_USER",
))

#: Programs whose starting of others :mod:`~swebash_ai.safety.runs` follows and that run nothing else themselves.
_FOLLOWED_OTHERS = frozenset(("eval", "find", "watch", "flock", "su", "runuser", "script", "sg", "busybox"))
#: Launchers that find the program they run in the project (``node_modules/.bin``, the virtualenv, a
#: registry) and run project code of their own (install scripts, build hooks, ``.envrc``, a Gemfile): neither
#: they nor what they run is proven by a name; only an allow rule covers them.
PROJECT_LAUNCHERS = frozenset(("npx", "bunx", "npm", "pnpm", "yarn", "uv", "poetry", "pipenv", "bundle", "conda",
                               "direnv", "pixi", "hatch", "pdm"))
_PLAIN_EXPANSION = re.compile(
    r"\$\{#?(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])(?:\[(?:[0-9]+|@|\*)\])?"
    r"(?:\}|(?::?[-=+?]|##?|%%?|//?|\^\^?|,,?)[^}]*\})")
#: The operators of ``[[ ]]`` that evaluate their operand's value as arithmetic or a subscript, which runs any
#: ``$(...)`` inside it (``x='a[$(touch M)]'; [[ $x -eq 1 ]]``). ``[``/``test`` split a computed word into
#: operators of its own, so there no computed word is proven.
_EVALUATING = frozenset(("-v", "-R", "-eq", "-ne", "-lt", "-le", "-gt", "-ge"))
_FD_PATH = re.compile(r"^/(?:proc/[^/]+/fd|dev/fd)/|^/dev/std(?:in|out|err)$")


def git_redirect(name: str) -> bool:
    """Whether setting ``name`` points git at other configuration, repositories or programs."""
    return name in GIT_REDIRECTS or name.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "GIT_TRACE"))


def unproven(command: str, cwd: str | None = None, covered: Callable[[Sequence[str]], int | None] | None = None,
             named: Sequence[str] = ()) -> list[str]:
    """Why ``command`` is not proven to run only proven programs (see the module docstring); empty: proven.

    ``covered`` says how many words of a program's argv an allow rule covers (``None``: none covers it); such a
    program is proven when nothing after them can name another program (:func:`_covered_words`). ``named``: the
    programs the deny and ask rules in force name."""
    from swebash_ai.safety.runs import SHELLS, WRAPPERS, programs_run

    found = programs_run(command)
    why = list(found.unknowable)
    why += [_variable_reason(name) for name in found.assigned if not safe_variable(name)]
    for script in found.scripts:
        why += _constructs(script)
    followed = set(WRAPPERS) | SHELLS | _FOLLOWED_OTHERS
    for run in found.runs:
        word = run.argv[0]
        name = os.path.basename(word)
        args = list(run.argv[1:])
        start = covered(run.argv) if covered is not None else None
        if start is not None:
            why += _covered_words(run, start, named)
            continue
        if "/" in word:
            reason = _by_path(word, name, cwd)
            if reason:
                why.append(reason)
                continue
        launched = next((v for v in run.via if v in PROJECT_LAUNCHERS), None)
        if launched is not None:
            why.append(f"{launched} runs {name} as the project names it (node_modules/.bin, a virtualenv...), not "
                       f"the program the table knows: only an allow rule for {name} covers it")
            continue
        if name in followed:
            continue  # what it starts was read from the line (or made the line unknowable above)
        exact = run.exact[1:] if len(run.exact) == len(run.argv) else (False,) * len(args)
        if name not in INERT:
            computed = [a for a, e in zip(args, exact, strict=True) if not e]
            if computed and name == "[[":  # [[ parses its operators first: a value stays a string, but for these
                evaluating = sorted(_EVALUATING & {a for a, e in zip(args, exact, strict=True) if e})
                if evaluating:
                    why.append(f"[[ {evaluating[0]} evaluates {computed[0] or 'a computed word'} as arithmetic or a "
                               "subscript, which can run commands")
                continue
            if computed:
                why.append(f"{name} is given a word the shell computes ({computed[0]}), which could be an option "
                           f"that runs a program")
                continue
            if "xargs" in run.via:
                why.append(f"xargs adds words from its input to {name}'s, which could be options that run a program")
                continue
        why += runs_nothing(name, args)
        if name == "git" and not why:
            why += _git_configs(found.runs, args, cwd or os.getcwd())
    return list(dict.fromkeys(why))


def _git_configs(runs: Sequence[Any], args: list[str], cwd: str) -> list[str]:
    """The program-running settings of every repository git may read here: the one in ``cwd``, and those the
    line moves to (``cd sub && git diff``, ``git -C sub diff``: a nested repository's own config)."""
    from swebash_ai.safety.git_rules import git_config_dangers
    from swebash_ai.safety.programs import check_program

    dirs = [cwd]
    for run in runs:  # every cd the line holds, in order (cd may fail: the earlier folders stay possible)
        if os.path.basename(run.argv[0]) not in ("cd", "pushd", "popd"):
            continue
        words = [w for w in run.argv[1:] if w not in ("-P", "-L", "--")]
        if os.path.basename(run.argv[0]) == "popd" or not words:
            words = ["~"] if not words and os.path.basename(run.argv[0]) == "cd" else []
        elif len(words) != 1 or words[0].startswith(("-", "+")):
            return [f"{' '.join(run.argv)}: git may run in a folder whose repository config cannot be checked"]
        dirs += [os.path.join(d, os.path.expanduser(w)) for d in dirs for w in words]
        if len(dirs) > 64:
            return ["it changes directory too often to check the config of each repository git may read"]
    check = check_program("git", args)
    if check is not None and check.workdir is not None:
        dirs = [os.path.join(d, os.path.expanduser(check.workdir)) for d in dirs]
    return [why for d in dict.fromkeys(dirs) for why in git_config_dangers(d)]


_CODE_LIKE = re.compile(r"[\s;|&$`()<>!{}'\"\\]")


def _covered_words(run: Any, start: int, named: Sequence[str]) -> list[str]:
    """What an allow rule cannot cover after its prefix, with a deny or ask rule in force: the rule is the user's
    word about the program, not about a program the words hand it (``gdb -ex 'shell touch'``, ``tar -I touch``,
    ``python3 - <<< CODE``). So no word may read as code (blanks, shell characters), name a program a rule names,
    or be computed by the shell; and a program the table does not prove may not read a script from its input."""
    name = os.path.basename(run.argv[0])
    words = run.argv[start:]
    exact = run.exact[start:] if len(run.exact) == len(run.argv) else (False,) * len(words)
    if run.fed and runs_nothing(name, list(run.argv[1:])):
        return [f"{name} reads its input, which may be a script it runs"]
    for word, plain in zip(words, exact, strict=True):
        if not plain and name not in INERT:
            return [f"{name} is given a word the shell computes ({word}), which could name a program"]
        if _CODE_LIKE.search(word):
            return [f"{name} is given {word[:40]!r}, which reads as code it may run"]
        parts = {word, word.partition("=")[2], *word.split(",")}
        hit = next((p for p in parts if p and os.path.basename(p) in named), None)
        if hit is not None:
            return [f"{name} is given {word!r}, which names {os.path.basename(hit)}, a program your rules name"]
    return []


def _by_path(word: str, name: str, cwd: str | None) -> str | None:
    """A program named by a path is proven only as the program of that name on PATH, spelled as PATH spells it
    (``/usr/bin/cat``). A relative path, a ``..``, or a symlink outside PATH's folders is resolved when the
    command runs, after the line may have changed the directory (``cd d && ../../usr/bin/cat``) or the link
    (``ln -sfn /usr/bin/touch ./cat-link && $PWD/cat-link``): what it names now proves nothing then."""
    if _FD_PATH.search(word):
        return f"runs {word}: a program read from an open file, which cannot be known"
    found = shutil.which(name)
    full = os.path.realpath(os.path.join(cwd or os.getcwd(), os.path.expanduser(word)))
    on_path = {os.path.join(os.path.normpath(d), name) for d in os.environ.get("PATH", os.defpath).split(os.pathsep)
               if d.startswith("/")}
    if (found is None or os.path.realpath(found) != full or word != os.path.normpath(word)
            or word not in on_path):
        return f"runs {word} by path: not proven to be the program {name}"
    return None


def _variable_reason(name: str) -> str:
    if git_redirect(name):
        return f"sets {name}, which points git at other configuration, repositories or programs"
    return f"sets {name}, which is not known to be only data: a program may take code or other programs from it"


def git_variables(command: str) -> list[str]:
    """The variables a command sets (before a program, with ``env``, ``export``, ``declare``, ``read``) that point
    git at other configuration, repositories or programs: a way to run a program, whatever runs git."""
    from swebash_ai.safety.runs import programs_run

    found = programs_run(command)
    names = list(found.assigned)
    for script in found.scripts:
        names += _set_names(script)
    return [n for n in dict.fromkeys(names) if git_redirect(n)]


def _set_names(script: str) -> list[str]:
    """Every variable name a script assigns, declares or exports (``NAME=x``, ``export NAME``, ``a[i]=x``)."""
    from swebash_ai.safety.shell_parse import _get_parser

    names: list[str] = []
    stack: list[Any] = [_get_parser().parse(script.encode("utf-8", errors="surrogateescape")).root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type == "variable_assignment":
            target = node.child_by_field_name("name")
            if target is not None and target.type == "subscript":
                target = target.child_by_field_name("name")
            names.append(target.text.decode(errors="replace") if target is not None else "")
        elif node.type == "declaration_command":
            names += [c.text.decode(errors="replace") for c in node.named_children if c.type == "variable_name"]
    return names


def _constructs(script: str) -> list[str]:
    """The shell constructs of one script that run code the parse does not follow."""
    from swebash_ai.safety.shell_parse import _get_parser, parse

    parsed = parse(script)
    if parsed is None:
        return ["a syntax error: cannot read what it runs"]
    why = [f"it {p}" for p in parsed.problems if "arithmetic" in p]
    stack: list[Any] = [_get_parser().parse(script.encode("utf-8", errors="surrogateescape")).root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        kind = node.type
        text = node.text.decode(errors="replace")
        if kind == "variable_assignment":
            target = node.child_by_field_name("name")
            if target is not None and target.type == "subscript":
                index = target.child_by_field_name("index")
                if index is None or not index.text.decode(errors="replace").isdigit():
                    why.append(f"assigns {text[:40]}: bash evaluates the subscript, which can run commands")
                target = target.child_by_field_name("name")
            name = target.text.decode(errors="replace") if target is not None else ""
            if not safe_variable(name):
                why.append(_variable_reason(name))
        elif kind == "declaration_command":
            words = [c.text.decode(errors="replace") for c in node.children]
            options = [w for w in words[1:] if w.startswith(("-", "+"))]
            if any(o not in ("-x", "-r", "-rx", "-xr", "-g") for o in options):
                why.append(f"{words[0]} {options[0]}: declares a variable whose value bash evaluates or follows "
                           "(only -x and -r are proven)")
            for child in node.named_children:
                if child.type == "variable_name" and not safe_variable(child.text.decode(errors="replace")):
                    why.append(_variable_reason(child.text.decode(errors="replace")))
        elif kind == "unset_command":
            for child in node.named_children:
                name = child.text.decode(errors="replace").strip("'\"")
                if not name.startswith("-") and not safe_variable(name):
                    why.append(f"unsets {name}: it can change what runs, or evaluate a subscript")
        elif kind == "expansion" and not _PLAIN_EXPANSION.fullmatch(text):
            why.append(f"expands {text[:40]}: bash evaluates part of it (a subscript, an offset, an indirection or "
                       "a transformation), which can run commands")
        elif kind == "c_style_for_statement":
            why.append("uses an arithmetic for loop, whose expressions bash evaluates")
    return why


# -- what an allow rule does not cover ------------------------------------------------------------------------

#: Options that make a program run other code, take its configuration from elsewhere, or write files beyond
#: its usual work, wherever they stand after an allow rule's prefix (``git log -p --ext-diff``).
_ANY_PROGRAM = frozenset((
    "--exec", "--exec-path", "--output", "--config", "--config-env", "--ext-diff", "--textconv", "--upload-pack",
    "--receive-pack", "--open-files-in-pager", "--pre", "--script-shell", "--node-options", "--userconfig",
    "--globalconfig", "--rcfile", "--init-file", "--eval", "--require", "--import", "--loader", "--plugin",
    "--preload", "--template", "--git-dir", "--work-tree", "--extcmd", "--tool", "--run", "--command", "--shell",
    "--editor", "--pager", "--hooks-path", "--sequence-editor", "--output-file", "--log-file",
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprintf", "-fls",
))
_PER_PROGRAM: dict[str, frozenset[str]] = {
    "git": frozenset(("-c", "-C", "-O", "-x")),
    "sort": frozenset(("-o",)),
    "rg": frozenset(("--pre",)),
    "tar": frozenset(("-I", "--use-compress-program", "--to-command", "--checkpoint-action")),
    "pytest": frozenset(("-p", "-c", "--rootdir", "--basetemp", "--junitxml", "--confcutdir")),
    "npm": frozenset(("-c", "--call")),
    "make": frozenset(("-f", "-C", "-I", "-E")),
    "python": frozenset(("-c", "-m")),
    "python3": frozenset(("-c", "-m")),
}


def effect_option(argv: Sequence[str], start: int) -> str | None:
    """The first word from ``argv[start:]`` that an allow rule's prefix does not cover, or ``None``."""
    program = os.path.basename(argv[0]) if argv else ""
    risky = _ANY_PROGRAM | _PER_PROGRAM.get(program, frozenset()) | frozenset(GLOBAL_OPTIONS.get(program, ()))
    for word in argv[start:]:
        if program == "make" and "=" in word and not word.startswith("-"):
            return word  # make CC='touch x': a variable that names the programs its recipes run
        if not word.startswith("-") or word in ("-", "--"):
            continue
        name = word.split("=", 1)[0]
        if name in risky:
            return word
        if not word.startswith("--") and any(len(o) == 2 and o != "-" and word.startswith(o) for o in risky
                                             if not o.startswith("--")):
            return word
    return None
