"""A project's own rules and hooks (``.swebash-ai/rules.toml``), and whether the user trusts them.

Contract:
    :func:`load_project` reads the file through :func:`~swebash_ai.safety.unasked.read_unasked` (it must
    lie inside the workspace, and never leads to a protected file) and returns a :class:`ProjectRules`.
    Its ``ask`` and ``deny`` rules are always in force; its ``allow`` rules and its hooks only once the user
    trusted that exact file: ``[[trusted_projects]]`` in the user's config holds the file's path and the
    SHA-256 of its text, so a changed file asks again.

Why:
    A cloned repository is written by someone else. It may make the assistant more careful by itself; it
    must never make it less careful, nor run its programs as hooks, without the user saying so after
    reading what it asks for.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from swebash_ai.config.hooks import Hook, TrustedProject, parse_hooks
from swebash_ai.config.rules import ToolRules, parse_rule_list
from swebash_ai.errors import ConfigError
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.safety.unasked import DEFAULT_MAX_BYTES, UnaskedText, read_unasked

PROJECT_FILE = Path(".swebash-ai") / "rules.toml"


@dataclass(frozen=True)
class ProjectRules:
    """What a project's file says, and whether the user trusts it."""

    path: Path | None = None
    sha256: str = ""
    rules: ToolRules = field(default_factory=ToolRules)
    hooks: tuple[Hook, ...] = ()
    trusted: bool = False
    problem: str = ""
    """Why the file was left out (unreadable, refused, invalid): for a notice."""

    @property
    def in_force(self) -> ToolRules:
        """ask/deny always; allow only when trusted."""
        return ToolRules(tuple(r for r in self.rules.rules if self.trusted or r.decision != "allow"))

    @property
    def hooks_in_force(self) -> tuple[Hook, ...]:
        return self.hooks if self.trusted else ()

    @property
    def needs_trust(self) -> bool:
        """It would widen something (allow rules, hooks) and the user has not trusted this version."""
        return not self.trusted and (bool(self.hooks) or any(r.decision == "allow" for r in self.rules.rules))

    def summary(self) -> list[str]:
        """One line per rule and hook, for the trust prompt."""
        lines = [f"{r.decision:5}  {r.what()}" + (f"  (only in {', '.join(r.workspaces)})" if r.workspaces else "")
                 for r in self.rules.rules]
        lines += [f"hook   {h.event}: runs {' '.join(h.command)}" for h in self.hooks]
        return lines


def load_project(
    root: Path, policy: PathPolicy, trusted: Sequence[TrustedProject], max_bytes: int = DEFAULT_MAX_BYTES
) -> ProjectRules:
    """The project file under ``root``, if any (see the module docstring); never raises."""
    path = root / PROJECT_FILE
    if not path.is_file() and not path.is_symlink():
        return ProjectRules()
    got = read_unasked(path, policy, within=[root], max_bytes=max_bytes)
    if not isinstance(got, UnaskedText):
        return ProjectRules(path, problem=f"{path} was left out: {got.reason}")
    digest = hashlib.sha256(got.text.encode("utf-8")).hexdigest()
    try:
        data = tomllib.loads(got.text)
        unknown = sorted(set(data) - {"rules", "hooks"})
        if unknown:
            raise ConfigError(f"{path}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                              "(a project file has [[rules]] and [[hooks]])")
        rules = parse_rule_list(data.get("rules"), str(path), "[[rules]]", "project")
        hooks = parse_hooks(data.get("hooks"), str(path), "[[hooks]]", "project")
    except (tomllib.TOMLDecodeError, ConfigError) as exc:
        return ProjectRules(path, digest, problem=f"{path} was left out: {exc}")
    key = str(got.resolved)
    ok = any(t.path == key and t.sha256 == digest for t in trusted)
    return ProjectRules(got.resolved, digest, rules, hooks, ok)
