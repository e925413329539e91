"""A helper agent in the TUI: its calls show live in its task call's entry, which closes when it is done; its
question comes through the same dialog, naming the agent; /agents lists the agents."""

from __future__ import annotations

import asyncio
from typing import Any

from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.frontends.tui.screens.confirm import ConfirmScreen
from swebash_ai.testing.fake_server import Reply

CHILD = "agent, started by the main assistant"


def responder(parent: list[Reply], child: list[Reply]) -> Any:
    def answer(body: dict[str, Any]) -> Reply:
        return (child if CHILD in body["messages"][0]["content"] else parent).pop(0)

    return answer


async def test_a_helpers_calls_show_in_its_group_and_its_question_names_it(llm_env, make_app, workspace) -> None:
    (workspace / "notes.txt").write_text("hello\n")
    llm_env.responder = responder(
        [Reply.tool_calls([("task", {"description": "look around", "prompt": "read and touch"}, "t1")]),
         Reply.text("the helper is done")],
        [Reply.tool_calls([("read_file", {"path": "notes.txt"}), ("run_command", {"command": "danger-touch x"})]),
         Reply.text("read it", delay=0.05)],
    )
    app = make_app()
    async with app.run_test(size=(140, 45)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "go")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the helper's question")
        for _ in range(3):
            await pilot.pause()
        group = app.activity.entries["t1"]
        assert group.expanded and group.state == "running"  # open while the helper works
        assert "[general] ▸ notes.txt" in group.output_text or "[general] ▸ read_file" in group.output_text
        assert "[general agent]" in app.screen.request.summary  # type: ignore[attr-defined]
        await pilot.press("n")
        await wait_for(pilot, lambda: group.state == "done", what="the task call done")
        await asyncio.sleep(0.1)
        await idle(pilot)
        assert "[general] ✓ read_file: ok" in group.output_text
        assert "[general] ⊘ run_command: denied" in group.output_text
        assert not group.expanded  # closed when done
        assert set(app.activity.entries) == {"t1"}  # the helper's calls are in its group, not beside it


async def test_slash_agents_lists_them(llm_env, make_app) -> None:
    app = make_app()
    async with app.run_test(size=(140, 45)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "/agents")
        await idle(pilot)
        shown = " ".join(str(w.render()) for w in app.chat.query("NoticeMessage"))
        assert "explore  [built-in]" in shown and "general  [built-in]" in shown
