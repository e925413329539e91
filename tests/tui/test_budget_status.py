"""The TUI while a long turn runs and when it stops: the status bar shows what the turn spent, and a loop or a
budget is named with the Ctrl+G way on; through the app against the loopback fake server."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.frontends.tui.widgets.chat import NoticeMessage
from swebash_ai.testing.fake_server import FakeLLMServer, Reply


def notices(app: Any) -> list[str]:
    return [str(w.render()) for w in app.chat.messages() if isinstance(w, NoticeMessage)]


async def test_the_status_bar_shows_the_budget_and_a_loop_stops_with_a_way_on(
        llm_env: FakeLLMServer, make_app: Any, workspace: Path) -> None:
    (workspace / "a.txt").write_text("same\n")
    count = itertools.count(1)
    seen: list[str] = []

    def respond(body: dict[str, Any]) -> Reply:
        i = next(count)
        if i <= 3:
            return Reply.tool_calls([("exists", {"path": f"f{i}"})], usage=(2000, 100), delay=0.3)
        return Reply.tool_calls([("read_file", {"path": "a.txt"})], usage=(2000, 100))

    llm_env.responder = respond
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "read it")
        await wait_for(pilot, lambda: bool(app.status.budget), what="the budget in the status bar")
        seen.append(app.status.budget)
        await wait_for(pilot, lambda: app.controller.can_go_on, what="the loop stop", timeout=30)
        await idle(pilot)
        assert any('read_file {"path": "a.txt"} was called 5 times in a row' in line for line in notices(app))
        assert any("Ctrl+G" in line for line in notices(app))
        assert app.status.budget == ""  # the turn ended: the bar shows the session's totals alone
    assert seen[0].startswith("step ") and " of 300 · " in seen[0] and "tokens" in seen[0]
    assert len(llm_env.requests) == 8  # 3 steps, then the same read 5 times
