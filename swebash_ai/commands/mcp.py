"""``swebash-ai mcp list``: start each configured MCP server, print its state and tools, stop it.

The same start-up as a session (:class:`~swebash_ai.tools.mcp_client.McpHost`), so what this prints is what a
session would offer. Also used by ``doctor`` (:func:`check_servers`). Exit 0 when every enabled server
started, else 1.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, TextIO

from swebash_ai.safety.terminal_text import safe

if TYPE_CHECKING:
    from swebash_ai.config.settings import LoadedSettings


async def check_servers(loaded: LoadedSettings) -> list[tuple[bool, str, list[str]]]:
    """Per configured server: (started or disabled, one summary line, one line per tool)."""
    from swebash_ai.tools.mcp_client import McpHost

    host = McpHost(loaded.mcp_servers)
    try:
        await host.start()
        rows: list[tuple[bool, str, list[str]]] = []
        for server in host.servers:
            tools = []
            for t in server.tools:
                hint = t.hints()
                approve = "runs without asking" if t.remote_name in server.config.auto_approve else "asks"
                tools.append(f"{t.name}  ({approve}{'; ' + hint if hint else ''})")
            rows.append((server.state == "ready", server.summary(), tools))
        rows.extend((True, f"{name}: disabled (enabled = false)", []) for name in host.disabled)
        return rows
    finally:
        await host.aclose()


def run_mcp_list(loaded: LoadedSettings, out: TextIO) -> int:
    if not loaded.mcp_servers:
        print(f"No MCP servers configured. Add [mcp_servers.NAME] tables to {loaded.config_file} "
              "(see docs/mcp.md).", file=out)
        return 0
    rows = asyncio.run(check_servers(loaded))
    for ok, line, tools in rows:
        print(safe(("ok    " if ok else "FAIL  ") + line, visible=True), file=out)  # a server's own words
        for t in tools:
            print(safe(f"        {t}", visible=True), file=out)
    return 0 if all(ok for ok, _, _ in rows) else 1
