"""The tool pane and results the conversation set aside (agent/result_store.py): its records of earlier calls keep
no copy of them, and show them again, read back, when the user browses back."""

from __future__ import annotations

import json
import time
from pathlib import Path

from swebash_ai.agent.result_store import ASIDE
from swebash_ai.config.settings import load_settings
from swebash_ai.frontends.tui.widgets import activity
from swebash_ai.frontends.tui.widgets.activity import ToolEntry
from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from tests.tui.tui_helpers import idle, type_and_send, wait_for

CALLS = activity.LIVE_ENTRIES + 4  # in one response: the first four go behind the "earlier" line at once


def text_of(n: int) -> str:
    return f"file {n}\n" + f"contents of file {n}, " * 40


async def test_records_drop_the_results_set_aside_and_browsing_back_reads_them(
    llm_env: FakeLLMServer, make_app, workspace: Path
) -> None:
    for n in range(CALLS):
        (workspace / f"f{n}.txt").write_text(text_of(n))
    (workspace / "tiny.txt").write_text("tiny\n")
    llm_env.enqueue(Reply.tool_calls([("read_file", {"path": f"f{n}.txt"}) for n in range(CALLS)]),
                    Reply.text("Read them all."),
                    Reply.tool_calls([("read_file", {"path": "tiny.txt"})]), Reply.text("Nothing more."))
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "read every file")
        await wait_for(pilot, lambda: not app.busy and len(app.session.conversation.messages) > CALLS + 2,
                       what="the first turn")
        pane = app.activity
        assert not any(ASIDE in m for m in app.session.conversation.messages)  # the last turn stays
        await type_and_send(pilot, "and the tiny one?")
        await wait_for(pilot, lambda: not app.busy and app.session.conversation.messages[-1].get("content")
                       == "Nothing more.", what="the second turn")
        await idle(pilot)
        messages = app.session.conversation.messages
        assert sum(1 for m in messages if ASIDE in m) == CALLS  # every result of the first turn
        # The call of the second turn pushed the five oldest behind the "earlier" line; the turn's end set
        # their results aside, and the records let go of their copies.
        assert len(pane.earlier) == CALLS + 1 - activity.LIVE_ENTRIES
        assert all(r.aside and r.output == "" for r in pane.earlier)
        first_turn = {m["tool_call_id"] for m in messages if ASIDE in m} & set(pane.entries)
        assert first_turn and first_turn <= pane._aside_live  # live entries keep their text until they go

        pane.earlier_line.focus()
        await pilot.press("enter")  # browse back: the earlier calls come back with their output read back
        await pilot.pause()
        first = pane.query_children(ToolEntry).first()
        assert first.call_id not in first_turn and first.state == "done"
        assert "contents of file 0" in first.output_text and "file 0" in first.output_text


async def test_a_resumed_session_keeps_its_old_results_aside_and_shows_them(make_app) -> None:
    turns = activity.LIVE_ENTRIES + 6
    lines: list[dict[str, object]] = [{"meta": {"id": "aside", "created": time.time(), "title": "aside"}}]
    for t in range(turns):
        lines += [{"role": "user", "content": f"question {t}"},
                  {"role": "assistant", "content": None, "tool_calls": [
                      {"id": f"c{t}", "type": "function",
                       "function": {"name": "read_file", "arguments": json.dumps({"path": f"f{t}.txt"})}}]},
                  {"role": "tool", "tool_call_id": f"c{t}", "name": "read_file", "content": text_of(t)},
                  {"role": "assistant", "content": f"Answer {t}."}]
    folder = load_settings().locations.sessions_dir
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "aside.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    app = make_app(resume="aside")
    async with app.run_test(size=(140, 40)) as pilot:
        await idle(pilot)
        await wait_for(pilot, lambda: any("Resumed session" in str(m.render()) for m in app.chat.messages()),
                       what="the resumed conversation")
        conv = app.session.conversation
        assert [m.get("tool_call_id") for m in conv.messages if ASIDE in m] == [f"c{t}" for t in range(turns - 1)]
        pane = app.activity
        assert [r.call_id for r in pane.earlier] == [f"c{t}" for t in range(turns - activity.LIVE_ENTRIES)]
        assert all(r.aside and r.output == "" and r.state == "done" for r in pane.earlier)
        newest = list(pane.query_children(ToolEntry))
        assert f"contents of file {turns - 2}" in newest[-2].output_text  # an entry: read back when shown
        pane.earlier_line.focus()
        await pilot.press("enter")
        await pilot.pause()
        first = pane.query_children(ToolEntry).first()
        assert first.call_id == "c0" and "contents of file 0" in first.output_text
