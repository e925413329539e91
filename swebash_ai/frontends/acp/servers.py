"""The editor's MCP servers where no sandbox works: each is put to the person before it starts.

A server the client names in ``session/new`` is a program nobody said yes to. Where a sandbox works it runs
in it (``sandbox = true``, see :meth:`~swebash_ai.frontends.acp.server.SwebashAgent._with_servers`); where none
does, it would run with all of the person's rights, so it starts only after a yes to that server: a
``tool_call`` naming the server and its command line, then a permission request (start it / do not). A no, a
cancelled request, no answer within ``acp_permission_timeout`` or an editor that cannot answer leaves it
unstarted, and the editor is told why.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from acp import schema

from swebash_ai.frontends.acp.updates import text_content

if TYPE_CHECKING:
    from swebash_ai.config.mcp import McpServerConfig
    from swebash_ai.frontends.acp.asking import EditorApprover
    from swebash_ai.session import Session


def sandbox_works(settings: Any) -> bool:
    """Whether the sandbox of unasked commands works here (then an editor's server runs in it)."""
    from swebash_ai.sandbox.confine import backend_setting
    from swebash_ai.sandbox.detect import choose

    return choose(backend_setting(settings)).ok


def _question(config: McpServerConfig) -> tuple[str, str]:
    from swebash_ai.safety.terminal_text import safe

    line = shlex.join([config.command or "", *config.args])
    fence = "```"
    while fence in line:
        fence += "`"
    title = f"Start the editor's MCP server {config.name}: {line}"
    text = "\n".join([f"The editor asks to start the MCP server `{config.name}`:", "", fence, line, fence, "",
                      f"- in {config.cwd}",
                      "- no sandbox works here: it would run with all of your rights (your files, your keys, "
                      "the network)",
                      "- every tool of it still asks before it runs"])
    return safe(title, visible=True), safe(text, visible=True)


async def ask_for_servers(session: Session, approver: EditorApprover, servers: list[McpServerConfig],
                          send: Callable[[Any], Awaitable[None]]) -> list[str]:
    """Put each server to the person; the allowed ones join the session's servers (unconfined), to start with
    them. Returns one line per server left unstarted."""
    allowed = dict(session.loaded.mcp_servers)
    lines = []
    for config in servers:
        title, text = _question(config)
        call_id = approver.ids.start(f"mcp-{config.name}")
        await send(schema.ToolCallStart(session_update="tool_call", tool_call_id=call_id, title=title,
                                        kind="execute", status="pending", content=[text_content(text)]))
        yes = await approver.ask_to_start(call_id, title, text)
        outcome = "Starting it." if yes else "Not started."
        await send(schema.ToolCallProgress(session_update="tool_call_update", tool_call_id=call_id,
                                           status="completed" if yes else "failed",
                                           content=[text_content(text), text_content(outcome)]))
        if yes:
            allowed[config.name] = config
        else:
            lines.append(f"MCP server {config.name!r} was not started: no sandbox works here, and it was not "
                         "allowed to run with all of your rights.")
    session.loaded = dataclasses.replace(session.loaded, mcp_servers=allowed)
    return lines
