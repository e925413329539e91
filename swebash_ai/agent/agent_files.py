"""Finding the agents a session may start: the built-in ones, the user's files and the project's.

Contract:
    :func:`load_agents` reads, in this order (a later one of the same name wins): the built-in agents
    (:data:`~swebash_ai.config.agents.BUILTIN_AGENTS`), the user's ``~/.claude/agents/*.md`` and
    ``<config dir>/agents/*.md``, then the project's ``.claude/agents``, ``.opencode/agent(s)`` and
    ``.swebash-ai/agents`` (the repository root, or the working directory outside one). Every file is read
    through :func:`~swebash_ai.safety.unasked.read_unasked` (a project's must stay inside the project); a
    refused, unreadable or malformed file is reported in :attr:`Agents.notices`, never silently skipped.

    A project's agents are listed always and started only when the project is trusted (its
    ``.swebash-ai/rules.toml`` trusted with ``swebash-ai trust``), as its hooks are: a cloned repository
    must not choose the model the user's code is sent to, nor the instructions a helper follows, unasked.
    Until then :attr:`AgentSpec.in_force` is false and a ``task`` call naming it is refused, saying why.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from swebash_ai.agent.instructions import repository_root
from swebash_ai.config.agents import BUILTIN_AGENTS, AgentSpec, Scope, parse_agent
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.safety.unasked import DEFAULT_MAX_BYTES, UnaskedRefusal, read_unasked

__all__ = ["Agents", "agent_dirs", "load_agents", "project_agent_files"]

MAX_FILES = 100
"""Files read per folder; a folder with more is cut (and says so)."""


@dataclass(frozen=True)
class Agents:
    """The agents found, by name, and what was left out."""

    agents: dict[str, AgentSpec] = field(default_factory=dict)
    notices: tuple[str, ...] = ()

    def get(self, name: str) -> AgentSpec | None:
        return self.agents.get(name.strip().lstrip("@").lower())

    def usable(self) -> list[AgentSpec]:
        return [a for a in self.agents.values() if a.in_force]


def agent_dirs(cwd: Path, config_dir: Path) -> list[tuple[Path, Scope, Path | None]]:
    """(folder, scope, the folder its files must stay in), in the order they are read."""
    home = Path.home()
    return [(home / ".claude" / "agents", "user", None), (config_dir / "agents", "user", None), *_project_dirs(cwd)]


def _project_dirs(cwd: Path) -> list[tuple[Path, Scope, Path | None]]:
    top = repository_root(cwd.resolve()) or cwd.resolve()
    return [(top / sub, "project", top) for sub in (Path(".claude", "agents"), Path(".opencode", "agent"),
                                                   Path(".opencode", "agents"), Path(".swebash-ai", "agents"))]


def load_agents(cwd: Path, config_dir: Path, policy: PathPolicy, *, project_trusted: bool,
                known_tools: frozenset[str] | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> Agents:
    """The agents in force for a session in ``cwd`` (see the module docstring); never raises."""
    found = {a.name: a for a in BUILTIN_AGENTS}
    notices: list[str] = []
    for folder, scope, within in agent_dirs(cwd, config_dir):
        for path in _entries(folder, notices):
            got = read_unasked(path, policy, within=(within,) if within else (), max_bytes=max_bytes)
            if isinstance(got, UnaskedRefusal):
                what = "Refused agent file" if got.guarded else "Cannot read agent file"
                notices.append(f"{what} {path}: {got.reason}.")
                continue
            spec = parse_agent(got.text, path, scope, known_tools)
            if isinstance(spec, str):
                notices.append(f"Agent file {path} is not used: {spec}.")
                continue
            if scope == "project" and not project_trusted:
                if spec.name in found:  # an untrusted file never takes the place of one in force
                    notices.append(f"Agent file {path} waits for the project to be trusted; the "
                                   f"{found[spec.name].origin} agent {spec.name!r} is used meanwhile.")
                    continue
                spec = replace(spec, in_force=False)
            found[spec.name] = spec
    return Agents(found, tuple(notices))


def project_agent_files(cwd: Path) -> list[tuple[Path, Path]]:
    """(file, the folder it must stay in) for every project agent file :func:`load_agents` would read: what
    trusting the project covers (agent/project.py), so a file changed or added after the trust asks again."""
    return [(path, within) for folder, _scope, within in _project_dirs(cwd) if within is not None
            for path in _entries(folder, [])]


def _entries(folder: Path, notices: list[str]) -> list[Path]:
    try:
        with os.scandir(folder) as it:
            names = sorted(e.name for e in it if e.name.endswith(".md") and not e.name.startswith("."))
    except OSError:
        return []  # no folder is the common case
    if len(names) > MAX_FILES:
        notices.append(f"{folder} holds {len(names)} agent files; only the first {MAX_FILES} are read.")
    return [folder / n for n in names[:MAX_FILES]]
