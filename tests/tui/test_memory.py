"""Project instructions in the app: they reach the request, and /context shows them with the token budget."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.frontends.tui.widgets.chat import InfoMessage, NoticeMessage
from swebash_ai.frontends.tui.widgets.reply import AssistantMessage
from swebash_ai.testing.fake_server import FakeLLMServer, Reply


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
        notices = [str(w.render()) for w in app.query(NoticeMessage)]
    system = llm_env.requests[-1]["body"]["messages"][0]
    assert system["role"] == "system" and "Use tabs, never spaces." in system["content"]
    assert str(workspace / "AGENTS.md") in text
    for part in ("instructions", "tools", "history", "total"):
        assert part in text
    assert "(2 of 2 messages sent)" in text
    assert any("Following instructions from" in n and str(workspace / "AGENTS.md") in n for n in notices)


async def test_unreadable_instructions_are_reported_at_start(llm_env: FakeLLMServer, make_app,
                                                             workspace: Path) -> None:
    (workspace / "AGENTS.md").write_bytes(b"\xff\xfe not text")
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await wait_for(pilot, lambda: bool(app.query(NoticeMessage)), what="warning")
        (notice,) = [str(w.render()) for w in app.query(NoticeMessage)]
        assert "Cannot read instructions" in notice and "not UTF-8" in notice
        assert app.session is not None and not app.session.instructions.files


async def test_app_session_saves_what_the_model_was_offered_for_export(llm_env: FakeLLMServer, make_app) -> None:
    import io
    import json

    from swebash_ai.commands.export import export_sessions

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


async def test_compact_command_summarizes_and_the_next_request_uses_it(llm_env: FakeLLMServer, make_app) -> None:
    from swebash_ai.agent.compaction import SUMMARY_PREFIX, SUMMARY_SYSTEM
    from swebash_ai.agent.conversation import Conversation
    from swebash_ai.frontends.tui.widgets.chat import NoticeMessage
    from swebash_ai.testing.fake_server import check_openai_messages

    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "echo one"})]), Reply.text("First done."),
                    Reply.text("Second done."), Reply.text("We echoed one, then talked twice."),
                    Reply.text("Third done."))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        for text, n in (("first", 1), ("second", 2)):
            await type_and_send(pilot, text)
            await wait_for(pilot, lambda n=n: len(app.query(AssistantMessage)) == n and not app.busy, what=text)
        await type_and_send(pilot, "/compact")
        await wait_for(pilot, lambda: any("Compacted" in str(w.render()) for w in app.query(NoticeMessage)),
                       what="/compact " + " | ".join(str(w.render()) for w in app.chat.messages()))
        assert "We echoed one" in str(app.query(NoticeMessage).last().render())
        await type_and_send(pilot, "third")
        await wait_for(pilot, lambda: len(app.query(AssistantMessage)) == 3 and not app.busy, what="third")
        assert app.session is not None
        saved = Conversation.load(app.session.session_file)
    summary_req = llm_env.requests[3]["body"]
    assert summary_req["messages"][0]["content"] == SUMMARY_SYSTEM
    assert "echo one" in summary_req["messages"][1]["content"]
    sent = llm_env.requests[-1]["body"]["messages"]
    assert sent[1]["content"].startswith(SUMMARY_PREFIX) and "echoed one" in sent[1]["content"]
    assert [m["role"] for m in sent[2:]] == ["user", "assistant", "user"]  # the last turn stays verbatim
    assert sent[2]["content"] == "second" and check_openai_messages(sent) == []
    assert saved.messages[0]["content"].startswith(SUMMARY_PREFIX)


async def test_refused_instruction_file_is_notified_and_listed_by_context(
    llm_env: FakeLLMServer, make_app, workspace: Path, isolated_env: Path, monkeypatch
) -> None:
    (isolated_env / ".ssh").mkdir()
    (isolated_env / ".ssh" / "id_rsa").write_text("CANARY-TUI-KEY\n")
    (workspace / "AGENTS.md").symlink_to(isolated_env / ".ssh" / "id_rsa")
    llm_env.enqueue(Reply.text("Noted."))
    app = make_app()
    notes: list[str] = []
    real_notify = app.notify
    monkeypatch.setattr(app, "notify", lambda message, **kw: (notes.append(str(message)), real_notify(message, **kw)))
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await wait_for(pilot, lambda: bool(app.query(NoticeMessage)), what="warning")
        await type_and_send(pilot, "hello")
        await wait_for(pilot, lambda: bool(app.query(AssistantMessage)), what="answer")
        await idle(pilot)
        await type_and_send(pilot, "/context")
        await wait_for(pilot, lambda: any("Token budget" in str(w.render()) for w in app.query(InfoMessage)),
                       what="/context")
        context = str(app.query(InfoMessage).last().render())
        notices = [str(w.render()) for w in app.query(NoticeMessage)]
    assert "CANARY-TUI-KEY" not in llm_env.requests[-1]["body"]["messages"][0]["content"]
    assert any(str(workspace / "AGENTS.md") in n and "credentials/secrets" in n for n in notes)
    assert any("Refused instructions" in n and str(workspace / "AGENTS.md") in n for n in notices)
    assert "Instruction files refused (left out):" in context
    assert f"{workspace / 'AGENTS.md'}: access to this path is not allowed" in context
