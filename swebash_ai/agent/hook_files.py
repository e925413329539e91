"""The project files a hook runs without writing their path: found as the hook will find them.

Contract:
    :func:`indirect_files` lists, for one hook, files that decide what it runs although its command names no
    path to them (the paths it does name are :meth:`~swebash_ai.config.hooks.Hook.file_words`). It looks
    where the hook will look: in its working directory (the workspace) with its environment
    (:func:`~swebash_ai.tools.command_env.child_environment` of ours: the same ``PATH`` and ``PYTHONPATH``).

    * A program named by a bare word (``eslint``) is looked up on ``PATH`` as bash does: the first entry
      holding an executable file of that name. For every ``PATH`` entry inside the project, up to and
      including the one that holds it, that entry's file of the name is listed, present or not: a file
      created in an earlier entry later (or made executable) would run instead. Entries outside the project
      list nothing.
    * ``python -m pkg.mod`` (any word naming a Python interpreter, then ``-m``, also written with other options
      as ``-Bm``): Python imports from the working directory first, then ``PYTHONPATH``. For each of those
      inside the project, up to the first holding ``pkg`` as a package with an ``__init__`` or as a module,
      the files named like each part of the module (``pkg.py``, ``pkg.*.so``, a package's ``__init__`` and,
      for the last part, ``__main__``) are listed, and an absent name when there is none. A folder without
      an ``__init__`` (a namespace package) is imported only when no module of its name stands beside it or
      on a later entry: such modules, or their absent ``.py`` name, are listed too, and the search goes on.

    Only paths come back; :mod:`swebash_ai.agent.project` hashes them for the trust of the project.

Why not ask the interpreter (``importlib.util.find_spec``): finding ``pkg.mod`` imports ``pkg``, which would
run the project's code to decide whether to trust the project.

Out of reach, by design: what a covered program runs in turn (the packages a covered module imports, a
script a covered program reads, ``env x``, ``sh -c '...'``, ``uv run x``). Trust covers the entry points.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # loaded with the project's hooks (agent/project.py)
    from swebash_ai.config.hooks import Hook

__all__ = ["IndirectFile", "indirect_files"]

_PYTHON = re.compile(r"(python|pypy)(\d+(\.\d+)*)?")
_OPTION_WITH_VALUE = frozenset("XWQ")  # short options that take a value, attached or as the next word
_LONG_WITH_VALUE = frozenset({"--check-hash-based-pycs"})
_MAX_NAMES = 64
"""At most this many files named like one module part are listed (a directory holding more asks for care)."""


@dataclass(frozen=True)
class IndirectFile:
    path: Path
    """Absolute, not resolved (the project resolves and hashes it)."""
    via: str
    """How the hook reaches it: ``eslint on PATH``, ``python -m tools.check``."""


def indirect_files(hook: Hook, cwd: Path, env: Mapping[str, str]) -> list[IndirectFile]:
    """The files ``hook`` runs without naming them (see the module docstring), in a stable order."""
    out: list[IndirectFile] = []
    program = hook.command[0]
    if "/" not in program:
        out += _on_path(program, cwd, env)
    module = _module(hook.command)
    if module is not None:
        out += _module_files(module, cwd, env)
    return list(dict.fromkeys(out))


def _inside(path: Path, root: Path) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(root)


def _on_path(program: str, cwd: Path, env: Mapping[str, str]) -> list[IndirectFile]:
    root = Path(os.path.realpath(cwd))
    out: list[IndirectFile] = []
    for entry in env.get("PATH", os.defpath).split(os.pathsep):
        directory = cwd / (entry or ".")  # an empty entry is the working directory, a relative one below it
        candidate = directory / program
        found = candidate.is_file() and os.access(candidate, os.X_OK)
        if _inside(directory, root):
            how = f"{program} on PATH" + ("" if found or not candidate.exists() else ", not executable")
            out.append(IndirectFile(candidate, how))
        if found:
            break
    return out


def _module(command: tuple[str, ...]) -> str | None:
    """The module of ``python [options] -m MODULE``, wherever the interpreter word stands (``uv run python``)."""
    words = iter(command)
    for word in words:
        if _PYTHON.fullmatch(word.rsplit("/", 1)[-1]):
            break
    else:
        return None
    for word in words:
        if word.startswith("--"):
            if word in _LONG_WITH_VALUE:
                next(words, None)
            elif word == "--":
                return None  # a script follows
            continue
        if not word.startswith("-") or word == "-":
            return None  # a script, or code on stdin: not a module
        flags = word[1:]  # short options may be written together: -Bm pkg, -Im pkg, -mpkg
        for n, flag in enumerate(flags):
            if flag == "m":
                return flags[n + 1 :] or next(words, None)
            if flag == "c":
                return None  # code: not a module
            if flag in _OPTION_WITH_VALUE:
                if not flags[n + 1 :]:
                    next(words, None)
                break
    return None


def _module_files(module: str, cwd: Path, env: Mapping[str, str]) -> list[IndirectFile]:
    parts = module.split(".")
    if not all(p.isidentifier() for p in parts):
        return []
    root = Path(os.path.realpath(cwd))
    via = f"python -m {module}"
    search = [cwd] + [cwd / e for e in env.get("PYTHONPATH", "").split(os.pathsep) if e]
    out: list[IndirectFile] = []
    for directory in search:
        # A folder without an __init__ does not end the search: a module of the name further on wins over it.
        found = _package(directory / parts[0]) or _module_beside(directory, parts[0])
        if _inside(directory, root):
            out += [IndirectFile(p, via) for p in _chain(directory, parts)]
        if found:
            break
    return out


def _chain(directory: Path, parts: list[str]) -> list[Path]:
    """The files importing ``parts`` from ``directory`` would run: each package's ``__init__``, the module or
    the last package's ``__main__``; a name with nothing there, so that one created later asks again."""
    out: list[Path] = []
    current = directory
    for n, part in enumerate(parts):
        package = current / part
        if not package.is_dir():
            out += list(_named(current, part)) or [current / f"{part}.py"]
            if not os.path.lexists(package):
                out.append(package)  # a package created there later would be imported instead
            break
        if not _package(package):  # a namespace folder: a module of its name beside it is imported instead
            out += list(_named(current, part)) or [current / f"{part}.py"]
        out += list(_named(package, "__init__")) or [package / "__init__.py"]
        if n == len(parts) - 1:
            out += list(_named(package, "__main__")) or [package / "__main__.py"]
        current = package
    return out


def _importable(name: str, stem: str) -> bool:
    """``name`` is a file Python imports as module ``stem`` (source, bytecode or an extension of any version)."""
    rest = name[len(stem) :]
    return rest in (".py", ".pyc") or (rest.startswith(".") and rest.endswith((".so", ".pyd")))


def _module_beside(directory: Path, stem: str) -> bool:
    return any(_importable(p.name, stem) for p in _named(directory, stem))


def _package(folder: Path) -> bool:
    """A regular package: a folder with an ``__init__`` Python imports (one without is a namespace package)."""
    return folder.is_dir() and _module_beside(folder, "__init__")


def _named(directory: Path, stem: str) -> Iterator[Path]:
    """Files in ``directory`` named ``stem`` or ``stem.*`` (a source, bytecode or compiled module), sorted."""
    try:
        with os.scandir(directory) as entries:
            names = sorted(e.name for e in entries if (e.name == stem or e.name.startswith(stem + "."))
                           and not e.is_dir())
    except OSError:
        return iter(())
    return iter([directory / name for name in names[:_MAX_NAMES]])
