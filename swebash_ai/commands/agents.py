"""``swebash-ai agents``: the agents a ``task`` call may start, and where each comes from (the TUI's ``/agents``).

Every agent is listed with its origin (built-in, a user file, a project file), whether it can be started (a
project's agents wait for the project to be trusted), its tools, model, mode and turn limit, and what of its
file was not used; then the files that were left out and why. See docs/agents.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TextIO

from swebash_ai.agent.agent_files import Agents, load_agents
from swebash_ai.commands.rules import project_of
from swebash_ai.config.settings import LoadedSettings
from swebash_ai.safety.terminal_text import safe
from swebash_ai.session import session_path_policy


def find(loaded: LoadedSettings, cwd: Path) -> Agents:
    from swebash_ai.tools import builtin_tools

    project = project_of(loaded, cwd)
    return load_agents(cwd, loaded.locations.config_dir, session_path_policy(loaded, cwd),
                       project_trusted=project.trusted, known_tools=frozenset(t.name for t in builtin_tools()),
                       max_bytes=loaded.settings.fs_max_size)


def render_agents(found: Agents, *, enabled: bool = True) -> str:
    """The listing as plain text (file contents shown with their control characters made visible)."""
    lines = [] if enabled else ["The task tool is off (SWEBASH_AI_SUBAGENTS=false, or tools_allow is set): "
                                "no agent is started."]
    for spec in found.agents.values():
        state = "" if spec.in_force else ("  (waits until the project is trusted: swebash-ai trust; a project "
                                          "without .swebash-ai/rules.toml needs one, even empty)")
        lines.append(f"{spec.name}  [{spec.origin}]{state}")
        lines.append(f"    {spec.description}")
        tools = "the main assistant's" if spec.tools is None else ", ".join(spec.tools) or "none"
        extra = [f"tools: {tools}"]
        if spec.disallowed:
            extra.append(f"not: {', '.join(spec.disallowed)}")
        extra.append(f"model: {spec.model or 'the main one'}")
        if spec.mode:
            extra.append(f"mode: {spec.mode} (or stricter)")
        if spec.max_turns:
            extra.append(f"max turns: {spec.max_turns}")
        lines.append("    " + "; ".join(extra))
        lines += [f"    note: {note}" for note in spec.notes]
    lines += [f"! {notice}" for notice in found.notices]
    return "\n".join(safe(line, visible=True) for line in lines)


def run_agents(loaded: LoadedSettings, cwd: Path, *, as_json: bool = False, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    found = find(loaded, cwd)
    s = loaded.settings
    enabled = s.subagents and not s.tools_allow
    if as_json:
        rows = [{"name": a.name, "description": a.description, "scope": a.scope,
                 "path": str(a.path) if a.path else None, "in_force": a.in_force, "tools": a.tools,
                 "disallowed_tools": a.disallowed, "model": a.model, "mode": a.mode, "max_turns": a.max_turns,
                 "notes": a.notes} for a in found.agents.values()]
        out.write(json.dumps({"enabled": enabled, "agents": rows, "notices": found.notices}, indent=1) + "\n")
    else:
        out.write(render_agents(found, enabled=enabled) + "\n")
    return 0
