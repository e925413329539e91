"""The language servers swebash-ai knows, by language, and the user's ``[lsp.NAME]`` tables over them.

Contract:
    :data:`DEFAULT_SERVERS` is the table: per server the languages it checks, the file extensions that
    select it, the command that starts it (speaking LSP over stdio), and its root markers (the files that
    mark a project's root: a server is shared by every file under one root). :func:`merge_servers` lays the
    user's tables over it (add a server, change one's command or markers, ``enabled = false`` turns one
    off); :func:`choose` picks, for a file, the first enabled server of its language whose program is
    found (:func:`find_program`: the project's ``.venv/bin`` and ``node_modules/.bin``, then ``PATH``).
    Nothing here starts or downloads anything: a server whose program is not found is simply not chosen,
    and the caller says so.

A user's table is tried before the built-in ones of its language (a server named by the user is the one
they want); among the built-in ones, the order of the table (for Python: ty, basedpyright, pyright, ruff,
pylsp: the ones that report type errors first).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from swebash_ai.errors import ConfigError

__all__ = ["DEFAULT_SERVERS", "ServerSpec", "choose", "find_program", "language_of", "merge_servers", "root_for"]


@dataclass(frozen=True)
class ServerSpec:
    """One language server: what it checks and how it starts."""

    name: str
    languages: tuple[str, ...]
    extensions: tuple[str, ...]
    command: tuple[str, ...]
    root_markers: tuple[str, ...] = (".git",)
    enabled: bool = True
    user: bool = False
    """From the user's (or a trusted project's) ``[lsp.NAME]`` table rather than the built-in table."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    """``initializationOptions`` sent to the server (a user's ``settings`` key)."""

    @property
    def program(self) -> str:
        return self.command[0]


_PY = (".py", ".pyi")
_PY_ROOT = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "ty.toml", "pyrightconfig.json", ".git")
_TS = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")

DEFAULT_SERVERS: tuple[ServerSpec, ...] = (
    # ty reports undefined names and type errors, starts in milliseconds, and is a binary wheel: the default.
    ServerSpec("ty", ("python",), _PY, ("ty", "server"), _PY_ROOT),
    ServerSpec("basedpyright", ("python",), _PY, ("basedpyright-langserver", "--stdio"), _PY_ROOT),
    ServerSpec("pyright", ("python",), _PY, ("pyright-langserver", "--stdio"), _PY_ROOT),
    # ruff reports syntax errors and undefined names (no type errors): better than nothing.
    ServerSpec("ruff", ("python",), _PY, ("ruff", "server"), (*_PY_ROOT[:-1], "ruff.toml", ".ruff.toml", ".git")),
    ServerSpec("pylsp", ("python",), _PY, ("pylsp",), _PY_ROOT),
    ServerSpec("typescript-language-server", ("typescript",), _TS, ("typescript-language-server", "--stdio"),
               ("tsconfig.json", "jsconfig.json", "package.json", ".git")),
    ServerSpec("gopls", ("go",), (".go",), ("gopls",), ("go.work", "go.mod", ".git")),
    ServerSpec("rust-analyzer", ("rust",), (".rs",), ("rust-analyzer",), ("Cargo.toml", ".git")),
    ServerSpec("bash-language-server", ("bash",), (".sh", ".bash"), ("bash-language-server", "start"), (".git",)),
    ServerSpec("clangd", ("c",), (".c", ".h", ".cc", ".cpp", ".hpp", ".cxx"), ("clangd",),
               ("compile_commands.json", "compile_flags.txt", ".clangd", ".git")),
)


def language_of(path: Path, servers: Sequence[ServerSpec]) -> str | None:
    """The language of ``path`` by its extension (``None``: no server in the table checks such files)."""
    suffix = path.suffix.lower()
    for spec in servers:
        if suffix in spec.extensions:
            return spec.languages[0]
    return None


def find_program(program: str, root: Path, path_env: str | None = None) -> str | None:
    """Where ``program`` is: the project's ``.venv/bin`` or ``node_modules/.bin`` (a tool the project pins),
    then ``PATH``; ``None`` when it is nowhere. A path given in the command is taken as it is."""
    if os.sep in program:
        where = Path(program).expanduser()
        return str(where) if where.is_file() and os.access(where, os.X_OK) else None
    for local in (root / ".venv" / "bin", root / "node_modules" / ".bin"):
        found = shutil.which(program, path=str(local))
        if found is not None:
            return found
    return shutil.which(program, path=path_env if path_env is not None else os.environ.get("PATH", os.defpath))


def root_for(path: Path, markers: Sequence[str], workspace: Path) -> Path:
    """The nearest folder above ``path`` holding one of ``markers``, not above ``workspace`` (the workspace
    when none does): one server runs per root."""
    stop = workspace.resolve()
    here = path.resolve().parent
    while True:
        if any((here / marker).exists() for marker in markers):
            return here
        if here == stop or here.parent == here or stop not in here.parents:
            return stop
        here = here.parent


def choose(path: Path, servers: Sequence[ServerSpec], workspace: Path,
           path_env: str | None = None) -> tuple[ServerSpec | None, Path, str | None, list[str]]:
    """The server for ``path``: ``(spec, root, program, looked_for)``; ``spec`` is ``None`` when none of its
    language is enabled and found (``looked_for`` names the programs tried, for the message)."""
    language = language_of(path, [s for s in servers if s.enabled])
    if language is None:
        return None, workspace, None, []
    looked: list[str] = []
    candidates = [s for s in servers if s.enabled and language in s.languages]
    candidates.sort(key=lambda s: not s.user)  # stable: the user's first, then the table's order
    for spec in candidates:
        root = root_for(path, spec.root_markers, workspace)
        program = find_program(spec.program, root, path_env)
        if program is not None:
            return spec, root, program, looked
        looked.append(spec.program)
    return None, workspace, None, looked


def merge_servers(tables: Mapping[str, Mapping[str, Any]],
                  base: Sequence[ServerSpec] = DEFAULT_SERVERS) -> tuple[ServerSpec, ...]:
    """``base`` with the user's tables laid over it: a table named like a built-in server changes it (any key it
    gives); another name adds a server, which needs ``command`` and ``extensions``.

    Raises:
        ConfigError: a new server without ``command`` or ``extensions``.
    """
    out = {spec.name: spec for spec in base}
    for name, table in tables.items():
        spec = out.get(name)
        if spec is None:
            if not table.get("command") or not table.get("extensions"):
                raise ConfigError(f"[lsp.{name}] is a new language server: it needs 'command' and 'extensions'.")
            spec = ServerSpec(name, (name,), (), tuple(table["command"]))
        exts = tuple(e if e.startswith(".") else "." + e for e in table.get("extensions", spec.extensions))
        out[name] = replace(
            spec, command=tuple(table.get("command", spec.command)), extensions=tuple(e.lower() for e in exts),
            languages=tuple(table.get("languages", spec.languages)),
            root_markers=tuple(table.get("root_markers", spec.root_markers)),
            enabled=table.get("enabled", spec.enabled), settings=dict(table.get("settings", spec.settings)),
            user=True,
        )
    return tuple(out.values())
