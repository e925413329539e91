"""MCP in the interactive app: servers start with the session, /mcp lists them, a call shows in the tool pane
with the server's name, a server that cannot start is a notice, and quitting leaves no server process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.frontends.tui.widgets.activity import ToolEntry
from swebash_ai.frontends.tui.widgets.chat import InfoMessage, NoticeMessage
from swebash_ai.testing.fake_server import Reply
from tests.mcptools._support import alive, server_table

pytestmark = pytest.mark.timeout(90)


async def test_mcp_servers_in_the_app(llm_env, make_app):
    config = Path(os.environ["SWEBASH_AI_HOME"]) / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(server_table("demo", auto_approve=["echo", "pid"])
                      + '[mcp_servers.gone]\ncommand = "/nonexistent/server"\n')
    llm_env.enqueue(Reply.tool_calls([("mcp__demo__pid", {})]), Reply.text("Got it."))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await wait_for(pilot, lambda: app.session is not None and app.session.mcp is not None
                       and all(s.state != "starting" for s in app.session.mcp.servers), what="MCP start", timeout=30)
        await wait_for(pilot, lambda: any("gone: failed" in str(n.render()) for n in app.query(NoticeMessage)),
                       what="failure notice")
        await type_and_send(pilot, "/mcp")
        await wait_for(pilot, lambda: "MCP servers" in str(app.query(InfoMessage).last().render())
                       if app.query(InfoMessage) else False, what="/mcp")
        listing = str(app.query(InfoMessage).last().render())
        assert "demo: ready, 9 tools" in listing and "mcp__demo__pid (runs without asking)" in listing
        assert "gone: failed" in listing
        await type_and_send(pilot, "what is your pid?")
        await wait_for(pilot, lambda: "Got it." in app.chat.last_reply_text(), what="answer", timeout=30)
        entry = app.query_one(ToolEntry)
        assert entry.tool_name == "mcp__demo__pid" and entry.summary.startswith("demo: pid")
        pid = int(llm_env.requests[1]["body"]["messages"][-1]["content"])
        assert alive(pid)
    assert not alive(pid)  # the app's exit ended the server
