"""/stats in the app: the current session's tool calls, decisions and model requests, after a real turn."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.frontends.tui.widgets.chat import InfoMessage
from swebash_ai.frontends.tui.widgets.reply import AssistantMessage
from swebash_ai.testing.fake_server import FakeLLMServer, Reply


async def test_stats_shows_this_sessions_calls(llm_env: FakeLLMServer, make_app, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("hello\n")
    llm_env.enqueue(Reply.tool_calls([("read_file", {"path": "notes.txt"})], usage=(90, 6)),
                    Reply.text("It says hello.", usage=(150, 4)))
    app = make_app()
    async with app.run_test(size=(120, 50)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "what is in notes.txt?")
        await wait_for(pilot, lambda: bool(app.query(AssistantMessage)), what="answer")
        await idle(pilot)
        await type_and_send(pilot, "/stats")
        await wait_for(pilot, lambda: any("Tool calls" in str(w.render()) for w in app.query(InfoMessage)),
                       what="/stats")
        text = str(app.query(InfoMessage).last().render())
    assert f"session {app.session.conversation.id}" in text
    (row,) = [line for line in text.splitlines() if line.startswith("read_file")]
    assert row.split()[1:3] == ["1", "1"]  # one call, one ok
    assert "2 requests, 0 failed" in text and "first token p50" in text
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "turns with tool calls" in text and "240 in" in text
