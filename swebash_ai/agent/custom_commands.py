"""Custom slash commands: prompt templates kept as Markdown files, ``/NAME args`` to send one.

Contract:
    :func:`load_commands` finds ``commands/NAME.md`` in the user's config directory and
    ``.swebash-ai/commands/NAME.md`` in the project (the repository root, or the working directory outside
    a repository). A project command shadows a user command of the same name (the :class:`CustomCommand`
    says which file it hides); a built-in command wins over both (a notice says the file is not used). A
    file may open with front matter (``---`` lines) whose ``description:`` is shown in /help and the
    palette; every other key is ignored. :meth:`CustomCommand.expand` puts the arguments where the text
    says ``$ARGUMENTS`` (after the text when it does not say it).

Why:
    A command is only text the user asked to send: it never changes tools, modes, approvals or rules, and
    what it expands to is sent as the user's message, never run (a ``!`` line in it is text). A project's
    command files come from whoever wrote the repository, and git stores symlinks: each file is read through
    :func:`~swebash_ai.safety.unasked.read_unasked`, a project's must stay inside the project, and a refused
    or unreadable file is reported, never silently skipped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from swebash_ai.agent.instructions import repository_root
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.safety.unasked import DEFAULT_MAX_BYTES, UnaskedRefusal, read_unasked
from swebash_ai.storage.locations import short_path

__all__ = ["BUILTIN_COMMANDS", "CommandSet", "CustomCommand", "command_dirs", "load_commands", "parse_file"]

BUILTIN_COMMANDS: frozenset[str] = frozenset({
    "help", "clear", "new", "model", "ollama", "login", "profile", "tools", "agents", "rules", "mcp", "ps", "theme",
    "undo", "save", "sessions", "context", "stats", "compact", "exit", "diagnostics",
})
"""The interactive app's own commands (its /help lists them); a command file cannot take their names."""

MAX_COMMANDS = 200
"""Files read per folder; a folder with more is cut (and says so)."""
ARGUMENTS = "$ARGUMENTS"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")

Scope = Literal["user", "project"]


@dataclass(frozen=True)
class CustomCommand:
    """One command file in force."""

    name: str
    """Without the slash, lower case."""
    path: Path
    scope: Scope
    description: str
    template: str
    shadows: Path | None = None
    """The user's file of the same name that this project command hides."""

    def expand(self, arguments: str) -> str:
        """The prompt to send: ``$ARGUMENTS`` replaced, or the arguments after the text."""
        arguments = arguments.strip()
        if ARGUMENTS in self.template:
            return self.template.replace(ARGUMENTS, arguments).strip()
        return f"{self.template.strip()}\n\n{arguments}" if arguments else self.template.strip()

    @property
    def origin(self) -> str:
        """Where it comes from, for /help: ``project`` or ``user``, and what it hides."""
        hides = f"; shadows {short_path(self.shadows)}" if self.shadows else ""
        where = f".swebash-ai/commands/{self.path.name}" if self.scope == "project" else short_path(self.path)
        return f"{self.scope}: {where}{hides}"


@dataclass(frozen=True)
class CommandSet:
    commands: dict[str, CustomCommand] = field(default_factory=dict)
    notices: tuple[str, ...] = ()
    """Files left out and why: refused by the guard, unreadable, a bad name, a built-in's name."""
    left_out: dict[str, str] = field(default_factory=dict)
    """The same notices by command name, to answer ``/NAME`` with why it did nothing."""

    def get(self, name: str) -> CustomCommand | None:
        return self.commands.get(name.lstrip("/").lower())


def command_dirs(cwd: Path, config_dir: Path) -> list[tuple[Path, Scope, Path | None]]:
    """(folder, scope, the folder its files must stay in) in the order they are read: user, then project."""
    top = repository_root(cwd.resolve()) or cwd.resolve()
    return [(config_dir / "commands", "user", None), (top / ".swebash-ai" / "commands", "project", top)]


def parse_file(text: str) -> tuple[str, str]:
    """(description, template) of a command file: front matter between ``---`` lines is taken off."""
    lines = text.lstrip("\ufeff").split("\n")
    if not lines or lines[0].strip() != "---":
        return "", text
    for i, line in enumerate(lines[1:], 1):
        if line.strip() == "---":
            description = ""
            for entry in lines[1:i]:
                key, sep, value = entry.partition(":")
                if sep and key.strip().lower() == "description":
                    description = value.strip().strip("\"'")
            return " ".join(description.split())[:200], "\n".join(lines[i + 1:])
    return "", text  # no closing line: it was not front matter


def load_commands(
    cwd: Path,
    config_dir: Path,
    policy: PathPolicy,
    *,
    builtins: Collection[str] = BUILTIN_COMMANDS,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> CommandSet:
    """Read the command files in force for a session in ``cwd`` (see the module docstring); never raises."""
    found: dict[str, CustomCommand] = {}
    notices: list[str] = []
    left_out: dict[str, str] = {}
    for folder, scope, within in command_dirs(cwd, config_dir):
        for path in _entries(folder, notices):
            name = path.name[:-3].lower()
            if not _NAME.match(path.name[:-3]):
                notices.append(f"Command file {path} is not used: a name is letters, digits, - and _.")
                continue
            if name in builtins:
                notices.append(f"Command file {path} is not used: /{name} is a built-in command, which wins.")
                left_out[name] = notices[-1]
                continue
            got = read_unasked(path, policy, within=(within,) if within else (), max_bytes=max_bytes)
            if isinstance(got, UnaskedRefusal):
                what = "Refused command file" if got.guarded else "Cannot read command file"
                notices.append(f"{what} {path}: {got.reason}. /{name} is left out.")
                left_out[name] = notices[-1]
                continue
            description, template = parse_file(got.text)
            if not template.strip():
                notices.append(f"Command file {path} is empty; /{name} is left out.")
                left_out[name] = notices[-1]
                continue
            before = found.get(name)
            shadows = before.path if before is not None and before.scope == "user" and scope == "project" else None
            found[name] = CustomCommand(name, path, scope, description, template, shadows)
            left_out.pop(name, None)  # a project file stands in for a refused user file
    return CommandSet(dict(sorted(found.items())), tuple(notices), left_out)


def _entries(folder: Path, notices: list[str]) -> list[Path]:
    """The ``*.md`` entries of any kind (a link, a FIFO: judging them is ``read_unasked``'s job)."""
    try:
        with os.scandir(folder) as it:
            names = sorted(e.name for e in it if e.name.endswith(".md") and not e.name.startswith("."))
    except OSError:
        return []  # no folder is the common case; an unreadable one has nothing to offer either
    if len(names) > MAX_COMMANDS:
        notices.append(f"{folder} holds {len(names)} command files; only the first {MAX_COMMANDS} are read.")
    return [folder / n for n in names[:MAX_COMMANDS]]
