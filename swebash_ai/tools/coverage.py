"""Which kinds of work the model's tools cover, and which are on in a given configuration (``doctor``).

The categories are the ones a complete coding agent needs (shell, files, search, find, process control,
plan, questions to the user, web, MCP). For each, :func:`coverage` lists the built-in tools that cover it
and, for every tool not offered, the setting that keeps it out; a category no tool of this version covers
says so rather than pretending.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from swebash_ai.config.settings import Settings
    from swebash_ai.tools.registry import Tool

__all__ = ["CATEGORIES", "CategoryCoverage", "coverage"]

CATEGORIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("shell", ("run_command",)),
    ("files (read)", ("read_file", "list_dir", "exists", "metadata")),
    ("files (write)", ("write_file", "edit_file")),
    ("search", ("search",)),
    ("find", ("find_files",)),
    ("process", ("read_process", "stop_process")),
    ("plan", ("update_plan",)),
    ("ask", ("ask_user",)),
    ("web", ("web_search", "fetch_url")),
)
"""(category, the built-in tools that cover it). MCP servers are a category of their own (see ``coverage``)."""

_SWITCHES = {"fs": "tools_fs", "exec": "tools_exec", "web": "tools_web", "plan": "tools_plan", "ask": "tools_ask"}


@dataclass(frozen=True)
class CategoryCoverage:
    name: str
    offered: tuple[str, ...]
    """Tools of this category the model is offered here."""
    held_back: tuple[tuple[str, str], ...]
    """(tool, why it is not offered)."""
    note: str = ""

    @property
    def enabled(self) -> bool:
        return bool(self.offered)


def why_not_offered(settings: Settings, t: Tool) -> str | None:
    """The setting that keeps ``t`` from the model, or ``None`` when it is offered."""
    switch = _SWITCHES.get(t.category)
    if switch is not None and not getattr(settings, switch):
        return f"{switch} = false: the setting, or --tools / --no-tools"
    if t.name in settings.tools_deny:
        return "named in tools_deny"
    if settings.tools_allow and t.name not in settings.tools_allow:
        return "not named in tools_allow"
    return None


def coverage(settings: Settings, tools: Sequence[Tool], mcp_servers: Sequence[str] = ()) -> list[CategoryCoverage]:
    """Every category with its tools, offered or held back (and why), for these settings."""
    by_name = {t.name: t for t in tools}
    out: list[CategoryCoverage] = []
    for name, members in CATEGORIES:
        offered: list[str] = []
        held: list[tuple[str, str]] = []
        for member in members:
            t = by_name.get(member)
            why = "not in this version" if t is None else why_not_offered(settings, t)
            if why is None:
                offered.append(member)
            else:
                held.append((member, why))
        note = ""
        if name == "shell" and offered and settings.exec_sandbox != "none" and not settings.exec_sandbox_network:
            hosts = ", ".join(settings.sandbox_allow_hosts)
            note = ("commands run without network (exec_sandbox_network = false)" if not hosts else
                    f"commands reach only {hosts} (sandbox_allow_hosts, through the proxy)")
        if name == "process" and offered:
            starter = by_name.get("run_command")
            note = (f"started by run_command(background=true), up to {settings.background_max_running} at once, "
                    "all stopped when the session ends") if starter is not None and \
                why_not_offered(settings, starter) is None else "run_command is not offered, so none can start"
        out.append(CategoryCoverage(name, tuple(offered), tuple(held), note))
    if mcp_servers:
        out.append(CategoryCoverage("MCP", tuple(f"{s} (server)" for s in mcp_servers), (),
                                    "their tools are listed when the servers start (swebash-ai mcp list)"))
    else:
        out.append(CategoryCoverage("MCP", (), (), "no [mcp_servers.NAME] configured (see docs/mcp.md)"))
    return out
