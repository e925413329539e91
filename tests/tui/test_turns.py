"""Full turns through the app against the loopback fake LLM server (the real openai client)."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.frontends.tui.screens.confirm import ConfirmScreen
from swebash_ai.frontends.tui.widgets.activity import ToolEntry
from swebash_ai.frontends.tui.widgets.chat import ErrorMessage, NoticeMessage, UserMessage
from swebash_ai.frontends.tui.widgets.reply import AssistantMessage
from swebash_ai.testing.fake_server import FakeLLMServer, Reply

RM = [("run_command", {"command": "rm -rf canary"})]


def tool_messages(server: FakeLLMServer) -> list[dict[str, object]]:
    """Tool results in the last request the server received."""
    return [m for m in server.requests[-1]["body"]["messages"] if m.get("role") == "tool"]


def chat_text(app: object) -> str:
    out = []
    for w in app.chat.messages():  # type: ignore[attr-defined]
        out.append(w.source if isinstance(w, AssistantMessage) else str(w.render()))
    return "\n".join(out)


async def test_streamed_answer_appears(llm_env, make_app):
    llm_env.enqueue(Reply.text("Hello **world**, this is the answer.\n\n```python\nprint(1)\n```\n", usage=(10, 5)))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "hi there")
        await wait_for(pilot, lambda: bool(app.query(AssistantMessage)), what="answer")
        await idle(pilot)
        assert "this is the answer" in app.query(AssistantMessage).last().source
        assert app.query(UserMessage).last().render() is not None
        assert app.status.tokens == 15
        assert app.session is not None and app.session.session_file.exists()  # saved automatically
    assert llm_env.requests[-1]["body"]["messages"][-1] == {"role": "user", "content": "hi there"}


async def test_the_status_bar_shows_cached_prompt_tokens_only_when_there_are_some(llm_env, make_app):
    llm_env.enqueue(Reply.text("First.", usage=(900, 20)),
                    Reply.text("Second.", usage=(12_000, 300), cached_tokens=8_100))
    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "one")
        await wait_for(pilot, lambda: app.status.tokens == 920, what="first usage")
        await idle(pilot)
        assert "920 tokens" in str(app.status.render()) and "cached" not in str(app.status.render())
        await type_and_send(pilot, "two")
        await wait_for(pilot, lambda: app.status.cached == 8_100, what="cached usage")
        await idle(pilot)
        assert "13.2k tokens (8.1k cached)" in str(app.status.render())


async def test_tool_call_shows_in_pane_and_finishes(llm_env, make_app):
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "echo hello from tool"})]), Reply.text("Done."))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "say hello")
        await wait_for(pilot, lambda: bool(app.query(ToolEntry)), what="tool entry")
        await idle(pilot)
        entry = app.query_one(ToolEntry)
        assert entry.tool_name == "run_command"
        assert entry.summary == "$ echo hello from tool"
        assert entry.state == "done" and entry.exit_code == 0
        assert "done" in entry.status_text() and "exit 0" in entry.status_text()
        assert "hello from tool" in entry.output_text
        assert entry.expanded  # opened itself when output arrived
        entry.focus()
        await pilot.press("enter")
        assert not entry.expanded
        assert "Done." in app.query(AssistantMessage).last().source
    assert "hello from tool" in tool_messages(llm_env)[-1]["content"]


async def _start_dangerous(pilot, app, server):
    server.enqueue(Reply.tool_calls(RM), Reply.text("OK then."))
    await idle(pilot)
    await type_and_send(pilot, "clean up")
    await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="confirmation modal")


async def test_deny_does_not_run_and_tells_the_model(llm_env, make_app, workspace: Path):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await _start_dangerous(pilot, app, llm_env)
        screen = app.screen
        assert isinstance(screen, ConfirmScreen)
        assert screen.request.tool == "run_command" and "rm -rf canary" in screen.request.detail
        assert app.query_one(ToolEntry).state == "waiting"
        await pilot.press("n")
        await idle(pilot)
        assert not (workspace / "canary").exists()
        assert app.query_one(ToolEntry).state == "denied"
        assert app.session is not None and app.session.conversation.is_valid()
    denial = tool_messages(llm_env)[-1]["content"]
    assert str(denial).startswith("Denied") and "denied" in str(denial)


async def test_escape_in_the_modal_denies(llm_env, make_app, workspace: Path):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await _start_dangerous(pilot, app, llm_env)
        await pilot.press("escape")
        await idle(pilot)
        assert not (workspace / "canary").exists()
        assert app.busy is False
    assert str(tool_messages(llm_env)[-1]["content"]).startswith("Denied")


async def test_allow_once_runs_it(llm_env, make_app, workspace: Path):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await _start_dangerous(pilot, app, llm_env)
        await pilot.press("y")
        await idle(pilot)
        assert (workspace / "canary").exists()
        assert app.query_one(ToolEntry).state == "done"
    assert tool_messages(llm_env)[-1]["content"] == "created canary"


async def test_allow_for_session_does_not_ask_again(llm_env, make_app, workspace: Path):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await _start_dangerous(pilot, app, llm_env)
        await pilot.press("a")
        await idle(pilot)
        assert (workspace / "canary").exists()
        (workspace / "canary").unlink()
        llm_env.enqueue(Reply.tool_calls(RM), Reply.text("Again."))
        await type_and_send(pilot, "once more")
        await idle(pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        assert (workspace / "canary").exists()
        assert [e.state for e in app.query(ToolEntry)] == ["done", "done"]


async def test_describe_asks_the_model_and_shows_it(llm_env, make_app, workspace: Path):
    llm_env.enqueue(Reply.tool_calls(RM), Reply.text("It deletes the file canary."), Reply.text("Fine."))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "clean up")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="modal")
        await pilot.press("d")
        screen = app.screen
        assert isinstance(screen, ConfirmScreen)
        await wait_for(pilot, lambda: "deletes the file" in str(screen.explanation.render()), what="explanation")
        await pilot.press("n")
        await idle(pilot)
        assert not (workspace / "canary").exists()


async def test_escape_cancels_mid_stream(llm_env, make_app):
    words = " ".join(f"word{i}" for i in range(400))
    llm_env.enqueue(Reply.text(words, chunk_size=8, delay=0.02), Reply.text("Second answer."))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "talk a lot")
        await wait_for(pilot, lambda: "word3" in app.chat.last_reply_text(), what="streaming")
        await pilot.press("escape")
        await idle(pilot)
        session = app.session
        assert session is not None and session.conversation.is_valid()
        shown = app.chat.last_reply_text()
        assert "word3" in shown and "word399" not in shown
        assert shown in app.query(AssistantMessage).last().source  # the partial answer stays on screen
        assert any("Cancelled" in str(n.render()) for n in app.query(NoticeMessage))
        # the app is usable afterwards
        await type_and_send(pilot, "next")
        await wait_for(pilot, lambda: "Second answer." in app.chat.last_reply_text(), what="next")


async def test_escape_cancels_mid_command(llm_env, make_app):
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "sleep 20"})]), Reply.text("After."))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "wait")
        await wait_for(pilot, lambda: bool(app.query(ToolEntry)) and app.query_one(ToolEntry).has_output,
                       what="command output")
        entry = app.query_one(ToolEntry)
        assert entry.state == "running" and "running" in entry.status_text()
        await pilot.press("escape")
        await idle(pilot)
        assert entry.state == "cancelled"
        assert app.session is not None and app.session.conversation.is_valid()
        assert "tick 1" in entry.output_text


async def test_ctrl_c_cancels_a_turn_then_twice_on_idle_quits(llm_env, make_app):
    llm_env.enqueue(Reply.text("x " * 500, chunk_size=2, delay=0.02))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "go")
        await wait_for(pilot, lambda: "x x" in app.chat.last_reply_text(), what="stream")
        await pilot.press("ctrl+c")
        await idle(pilot)
        assert app.is_running
        await pilot.press("ctrl+c")
        assert app.is_running
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_code == 0


async def test_provider_error_is_a_chat_message(llm_env, make_app):
    llm_env.enqueue(Reply.error(401, "Incorrect API key provided"))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "hello")
        await wait_for(pilot, lambda: bool(app.query(ErrorMessage)), what="error")
        await idle(pilot)
        text = str(app.query_one(ErrorMessage).render())
        assert "Authentication" in text
        assert app.is_running


async def test_bang_command_runs_through_the_tool(llm_env, make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "!echo from the user")
        await wait_for(pilot, lambda: bool(app.query(ToolEntry)), what="entry")
        await idle(pilot)
        entry = app.query_one(ToolEntry)
        assert entry.state == "done" and "from the user" in entry.output_text
    assert llm_env.requests == []  # no model involved


async def test_a_bang_command_resumes_as_the_command_it_was(llm_env, make_app):
    """Resumed, a ``!command`` is what it was live: the command in the chat, the call and its output in the tool
    pane; never the note the model read shown as if the user had typed it."""
    llm_env.enqueue(Reply.text("Seen it."))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "!echo from the user")
        await wait_for(pilot, lambda: bool(app.query(ToolEntry)) and not app.busy, what="the command")
        await type_and_send(pilot, "what did it print?")
        await wait_for(pilot, lambda: "Seen it." in app.chat.last_reply_text(), what="answer")
        await idle(pilot)
        live = [str(m.render()) for m in app.query(UserMessage)]

    resumed = make_app(resume_latest=True)
    async with resumed.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await wait_for(pilot, lambda: bool(resumed.query(ToolEntry)), what="the resumed call")
        said = [str(m.render()) for m in resumed.query(UserMessage)]
        assert said == live and "!echo from the user" in said[0], said
        assert not any("I ran" in s for s in said)
        entry = resumed.query_one(ToolEntry)
        assert entry.tool_name == "run_command" and entry.state == "done"
        assert "from the user" in entry.output_text


async def test_ctrl_c_while_the_modal_is_open_cancels_and_denies(llm_env, make_app, workspace: Path):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await _start_dangerous(pilot, app, llm_env)
        await pilot.press("ctrl+c")
        await idle(pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        assert not (workspace / "canary").exists()
        assert app.query_one(ToolEntry).state == "cancelled"
        assert app.session is not None and app.session.conversation.is_valid()
        assert app.is_running


async def test_two_questions_in_one_response_are_asked_one_after_the_other(llm_env, make_app, workspace: Path):
    """Two calls that need approval in one response: the second modal opens right after the first closes
    (the first may still be leaving the screen stack when the second is pushed: no fixed id may clash)."""
    llm_env.enqueue(
        Reply.tool_calls([("run_command", {"command": "rm -rf one"}), ("run_command", {"command": "rm -rf two"})]),
        Reply.text("Both done."),
    )
    asked: list[object] = []
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "clean both")
        for name in ("one", "two"):
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen not in asked,
                           what=f"modal for {name}")
            asked.append(app.screen)
            assert f"rm -rf {name}" in app.screen.request.detail
            await pilot.press("y")
        await wait_for(pilot, lambda: any("Both done." in m.source for m in app.query(AssistantMessage)),
                       what="answer")
        assert [e.state for e in app.query(ToolEntry)] == ["done", "done"]
    assert (workspace / "one").read_text() == (workspace / "two").read_text() == "ran\n"  # the test double's mark


async def test_a_resumed_tool_call_is_shown_as_it_was_live(llm_env, make_app):
    """Resumed, a call's entry reads as it did live: its one-line summary (not its arguments as JSON) and its
    state, without a duration, which the session does not keep (not a made-up "0.0s")."""
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "false"})]), Reply.text("Done."))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "run it")
        await wait_for(pilot, lambda: "Done." in app.chat.last_reply_text(), what="answer")
        await type_and_send(pilot, "!echo typed")
        await wait_for(pilot, lambda: len(app.query(ToolEntry)) == 2 and not app.busy, what="the command")
        await idle(pilot)
        live = [(e.summary, e.state) for e in app.query(ToolEntry)]
    assert live == [("$ false", "failed"), ("$ echo typed", "done")]

    resumed = make_app(resume_latest=True)
    async with resumed.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await wait_for(pilot, lambda: len(resumed.query(ToolEntry)) == 2, what="the resumed calls")
        entries = list(resumed.query(ToolEntry))
        assert [(e.summary, e.state) for e in entries] == live
        assert [e.status_text() for e in entries] == ["✗ failed", "✓ done"]
