"""``[[hooks]]`` and ``[[trusted_projects]]`` tables, as data loaded with the settings.

A hook is a program the user names, run at a point of the tool loop with a JSON object on stdin::

    [[hooks]]
    event = "before_tool"            # before_tool | after_tool | turn_end
    tool = "run_command"             # optional: a tool name or glob
    prefix = ["git", "push"]         # optional: only commands starting with these words
    command = ["./scripts/policy-check"]
    timeout = 10                     # seconds (default 10)

Running them is :mod:`swebash_ai.agent.hooks`. ``[[trusted_projects]]`` (``path``, ``sha256``) records the
project files (rules and hooks) the user trusted, by the hash of what they read and of the project files its
hooks run (see :func:`swebash_ai.agent.project.load_project`); written by ``swebash-ai trust`` and the TUI's
prompt, never by a repository.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from swebash_ai.config.rules import _problems
from swebash_ai.errors import ConfigError

HookEvent = Literal["before_tool", "after_tool", "turn_end"]


class Hook(BaseModel):
    """One ``[[hooks]]`` table."""

    # Built at the first table read: most configurations have none, and a start would pay for it anyway.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    event: HookEvent
    command: tuple[str, ...]
    """The program and its arguments (an argv, not a shell line)."""
    tool: str | None = None
    prefix: tuple[str, ...] | None = None
    timeout: float = Field(default=10.0, gt=0, le=600)
    name: str = ""
    """Shown in notices (``hook:NAME (config)``) and the audit log (``hook:config:NAME``); default: the
    program's file name."""
    origin: str = Field(default="config", exclude=True)
    """Where it was read: ``config`` (the user's config file), ``profile.NAME`` or ``project``."""

    @field_validator("command")
    @classmethod
    def _argv(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value or any(not w or "\x00" in w for w in value):
            raise ValueError('a hook command is a non-empty list of words, e.g. ["./check", "--strict"]')
        return value

    @property
    def short_name(self) -> str:
        return self.name or self.command[0].rsplit("/", 1)[-1]

    @property
    def label(self) -> str:
        """Who decided, for the audit log: ``hook:config:NAME``, ``hook:profile.work:NAME``, ``hook:project:NAME``."""
        return f"hook:{self.origin}:{self.short_name}"

    def describe(self) -> str:
        """The hook and where it was read, as people read it (as a rule says ``(project #2)``)."""
        return f"hook:{self.short_name} ({self.origin})"

    def file_words(self) -> tuple[str, ...]:
        """The words of ``command`` taken as files the hook runs or reads, relative to the workspace: the
        program when written as a path (``./check.sh``; a bare name is looked up on ``PATH``), then every
        later word that looks like a file: not an option, no blank, and a ``/`` or a dot (``scripts/x.py``,
        ``check.sh``, ``.env``; not ``.`` or ``..``). A bounded, conservative rule: trust of a project covers
        these files (agent/project.py) and accept-edits never writes them unasked (agent/decide.py)."""
        program, *rest = self.command
        words = [program] if "/" in program else []
        words += [w for w in rest if not w.startswith("-") and not any(c.isspace() for c in w)
                  and ("/" in w or ("." in w and w not in (".", "..")))]
        return tuple(words)


@dataclass(frozen=True)
class TrustedProject:
    path: str
    sha256: str


@dataclass(frozen=True)
class HookConfig:
    hooks: tuple[Hook, ...] = ()
    trusted: tuple[TrustedProject, ...] = field(default_factory=tuple)


def parse_hooks(raw: Any, where: str, label: str, origin: str) -> tuple[Hook, ...]:
    """Validate one ``hooks`` array.

    Raises:
        ConfigError: not an array of tables, an unknown key, a bad event, command or timeout.
    """
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(h, Mapping) for h in raw):
        raise ConfigError(f"{where}: {label} must be an array of tables (event = ..., command = [...]).")
    out = []
    for n, body in enumerate(raw, 1):
        if "origin" in body:
            raise ConfigError(f"{where}: {label} #{n}: unknown key 'origin'.")
        try:
            hook = Hook(**dict(body))
        except ValidationError as exc:
            raise ConfigError(f"{where}: {label} #{n}: " + "; ".join(_problems(exc.errors())) + ".",
                              hint="See docs/approvals.md (Hooks).") from None
        out.append(hook.model_copy(update={"origin": origin}))
    return tuple(out)


def parse_trusted(raw: Any, where: str) -> tuple[TrustedProject, ...]:
    """``[[trusted_projects]]``: path and sha256 strings.

    Raises:
        ConfigError: not an array of tables with those two strings.
    """
    if raw is None:
        return ()
    ok = isinstance(raw, list) and all(
        isinstance(t, Mapping) and set(t) == {"path", "sha256"} and all(isinstance(v, str) for v in t.values())
        for t in raw
    )
    if not ok:
        raise ConfigError(f"{where}: [[trusted_projects]] must be tables of path and sha256 strings "
                          "(written by `swebash-ai trust`).")
    return tuple(TrustedProject(t["path"], t["sha256"]) for t in raw)
