"""Project instructions in the app: they reach the request, and /context shows them with the token budget."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from swebash_ai.tui.widgets.chat import InfoMessage
from swebash_ai.tui.widgets.reply import AssistantMessage


async def test_instructions_reach_the_request_and_context_shows_them(
    llm_env: FakeLLMServer, make_app, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_text("Use tabs, never spaces.\n")
    llm_env.enqueue(Reply.text("Noted."))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "hello")
        await wait_for(pilot, lambda: bool(app.query(AssistantMessage)), what="answer")
        await idle(pilot)
        await type_and_send(pilot, "/context")
        await wait_for(pilot, lambda: any("Token budget" in str(w.render()) for w in app.query(InfoMessage)),
                       what="/context")
        text = str(app.query(InfoMessage).last().render())
    system = llm_env.requests[-1]["body"]["messages"][0]
    assert system["role"] == "system" and "Use tabs, never spaces." in system["content"]
    assert str(workspace / "AGENTS.md") in text
    for part in ("instructions", "tools", "history", "total"):
        assert part in text
    assert "(2 of 2 messages sent)" in text


async def test_app_session_saves_what_the_model_was_offered_for_export(llm_env: FakeLLMServer, make_app) -> None:
    import io
    import json

    from swebash_ai.cli import export_sessions

    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "echo hi"})]), Reply.text("Done."))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "say hi")
        await wait_for(pilot, lambda: bool(app.query(AssistantMessage)), what="answer")
        await idle(pilot)
    out = io.StringIO()
    assert export_sessions(None, every=False, fmt="openai", out=out) == 0
    (record,) = [json.loads(line) for line in out.getvalue().splitlines()]
    offered = llm_env.requests[0]["body"]
    assert record["tools"] == offered["tools"]
    assert record["messages"][0] == offered["messages"][0]
    assert [m["role"] for m in record["messages"]] == ["system", "user", "assistant", "tool", "assistant"]
    assert record["messages"][3]["tool_call_id"] == record["messages"][2]["tool_calls"][0]["id"]
