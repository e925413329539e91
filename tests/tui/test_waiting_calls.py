"""A call that started early but only waits in the question line is shown as waiting, not running, and the
pane lists a response's calls in the model's order (see ``widgets/activity.py``)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import TEST_TOOLS
from textual.app import App
from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.frontends.tui.screens.ask import AskScreen
from swebash_ai.frontends.tui.screens.confirm import ConfirmScreen
from swebash_ai.frontends.tui.widgets import activity
from swebash_ai.frontends.tui.widgets.activity import ActivityPane, ToolEntry
from swebash_ai.testing.fake_server import Reply
from swebash_ai.tools.ask import ask_user

TOOLS = [*TEST_TOOLS, ask_user]


class PaneHost(App[None]):
    def compose(self) -> Any:
        yield ActivityPane(id="activity")


def order(pane: ActivityPane) -> list[str]:
    return [entry.call_id for entry in pane.query_children(ToolEntry)]


async def test_a_question_behind_an_approval_waits_below_it_without_a_clock(llm_env, make_app) -> None:
    # ask_user's policy allows it outright, so it starts while the response streams, before run_command (which
    # needs approval) has started at all; its question must wait for that approval.
    llm_env.enqueue(
        Reply.tool_calls([("run_command", {"command": "danger-touch made"}), ("ask_user", {"question": "Which?"})]),
        Reply.text("ok"),
    )
    app = make_app(tools=TOOLS)
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "make it")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="confirmation modal")
        pane = app.activity
        await wait_for(pilot, lambda: len(pane.entries) == 2, what="both calls in the pane")
        command, question = sorted(pane.entries.values(), key=lambda e: e.tool_name != "run_command")
        assert order(pane) == [command.call_id, question.call_id]  # the model's order, though ask_user started first
        await wait_for(pilot, lambda: question.state == "queued", what="the question shown as waiting")
        assert question.status_text() == "○ waiting for earlier calls"  # no running clock
        assert command.state == "waiting"
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, AskScreen), what="the question, after the approval")
        assert question.state == "waiting"
        await pilot.press(*"yes", "enter")
        await idle(pilot)
        assert question.state == "done" and command.state == "done"
        assert order(pane) == [command.call_id, question.call_id]


@pytest.fixture
def fake_clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [100.0]
    monkeypatch.setattr(activity, "clock", lambda: now[0])
    return now


async def test_the_clock_starts_when_the_turn_comes_and_a_shown_question_is_not_overwritten(fake_clock) -> None:
    app = PaneHost()
    async with app.run_test() as pilot:
        pane = app.query_one(ActivityPane)
        pane.start("c2", "ask_user", "Which?", {}, response_id="r", position=1)
        pane.wait("c2", "response")
        await pilot.pause()
        assert pane.entries["c2"].status_text() == "○ waiting for the response to end"
        fake_clock[0] += 6
        pane.wait("c2", "earlier_calls")
        assert pane.entries["c2"].status_text() == "○ waiting for earlier calls"
        pane.start("c1", "run_command", "$ make", {}, response_id="r", position=0)
        pane.start("c3", "read_file", "a.txt", {}, response_id="r", position=2)
        pane.start("d1", "read_file", "b.txt", {}, response_id="next", position=0)
        await pilot.pause()
        assert order(pane) == ["c1", "c2", "c3", "d1"]
        fake_clock[0] += 1
        pane.resume("c2")
        assert pane.entries["c2"].status_text() == "● running · 0.0s"  # not the 7 s it waited
        # The approver showed c1's question before the events said c1 waits: it stays "waiting for approval".
        pane.set_state("c1", "waiting")
        pane.wait("c1", "earlier_calls")
        pane.resume("c1")
        assert pane.entries["c1"].state == "waiting"
