"""Long sessions: a resumed session of 1,000 messages and a turn of many tool calls keep the tool pane to a
bounded number of widgets, and every earlier call stays reachable (see ``widgets/activity.py``)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from textual.widget import Widget

from swebash_ai.agent import events as ev
from swebash_ai.config.settings import load_settings
from swebash_ai.frontends.tui.widgets import activity
from swebash_ai.frontends.tui.widgets.activity import ToolEntry
from swebash_ai.frontends.tui.widgets.chat import CHAPTER_SIZE, RESUMED_CHAPTERS, Chapter, UserMessage
from swebash_ai.frontends.tui.widgets.earlier import EarlierMessages
from swebash_ai.frontends.tui.widgets.reply import AssistantMessage
from swebash_ai.tools.registry import ToolResult
from tests.tui.tui_helpers import idle, wait_for

TURNS, CALLS = 170, 3  # 6 messages a turn: 1,020 messages, 510 tool calls


def write_session(sessions_dir: Path) -> str:
    lines: list[dict[str, object]] = [{"meta": {"id": "long", "created": time.time(), "title": "long"}}]
    for t in range(TURNS):
        lines.append({"role": "user", "content": f"question {t}"})
        calls = [{"id": f"c{t}-{c}", "type": "function",
                  "function": {"name": "exec", "arguments": json.dumps({"command": f"echo {t}-{c}"})}}
                 for c in range(CALLS)]
        lines.append({"role": "assistant", "content": "Looking.", "tool_calls": calls})
        lines += [{"role": "tool", "tool_call_id": f"c{t}-{c}", "name": "exec", "content": f"output {t}-{c}\n"}
                  for c in range(CALLS)]
        lines.append({"role": "assistant", "content": f"**Answer {t}**\n\n- one\n- two\n"})
    sessions_dir.mkdir(parents=True, exist_ok=True)
    (sessions_dir / "long.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return "long"


def widgets_in(widget: Widget) -> int:
    return len(list(widget.walk_children(with_self=True)))


async def test_a_session_of_1000_messages_resumes_with_a_bounded_tool_pane(make_app) -> None:
    session_id = write_session(load_settings().locations.sessions_dir)
    app = make_app(resume=session_id)
    async with app.run_test(size=(140, 40)) as pilot:
        await idle(pilot)
        await wait_for(pilot, lambda: any("Resumed session" in str(m.render()) for m in app.chat.messages()),
                       what="the resumed conversation")
        users = list(app.query(UserMessage))  # the newest chapters only (see the test below)
        assert users and "question 169" in str(users[-1].render())
        assert "Answer 169" in list(app.query(AssistantMessage))[-1].source
        pane = app.activity
        # The last calls are entries, in order; the others are records behind the "earlier" line.
        every_call = [f"c{t}-{c}" for t in range(TURNS) for c in range(CALLS)]
        shown = [entry.call_id for entry in pane.query_children(ToolEntry)]
        assert shown == every_call[-activity.LIVE_ENTRIES:]
        assert len(pane.earlier) == TURNS * CALLS - activity.LIVE_ENTRIES
        assert pane.earlier_line.display and f"{len(pane.earlier):,} earlier tool calls" in str(
            pane.earlier_line.render())
        assert widgets_in(pane) <= 3 * activity.LIVE_ENTRIES + 5

        # Browse back: Enter on the "earlier" line shows the page before, in order, with its output.
        pane.earlier_line.focus()
        await pilot.press("enter")
        await pilot.pause()
        shown = [entry.call_id for entry in pane.query_children(ToolEntry)]
        assert shown == every_call[-2 * activity.LIVE_ENTRIES:]
        assert [r.call_id for r in pane.earlier] == every_call[:-2 * activity.LIVE_ENTRIES]
        first = pane.query_children(ToolEntry).first()
        assert first.state == "done" and "output 156-2" in first.output_text
        first.focus()
        await pilot.press("enter")  # expand it: arguments and output are drawn
        await wait_for(pilot, lambda: first._log is not None and first._log.is_mounted, what="the body")
        assert "output 156-2" in first.output_text and first.expanded


async def test_a_resumed_session_mounts_its_newest_chapters_and_scrolling_up_brings_back_every_message(
        make_app) -> None:
    """The first frame of a long session lays out a screenful, not a thousand messages; every message stays
    reachable: scrolling to the top mounts the stored chapters above, without moving what the view shows."""
    session_id = write_session(load_settings().locations.sessions_dir)
    app = make_app(resume=session_id)
    async with app.run_test(size=(140, 40)) as pilot:
        await idle(pilot)
        await wait_for(pilot, lambda: any("Resumed session" in str(m.render()) for m in app.chat.messages()),
                       what="the resumed conversation")
        chat = app.chat
        assert len(list(chat.messages())) <= RESUMED_CHAPTERS * CHAPTER_SIZE + 1  # and the "Resumed" notice
        stored = sum(len(chapter) for chapter in chat._stored)
        assert f"{stored:,} earlier messages" in str(chat.query_one(EarlierMessages).render())
        await wait_for(pilot, lambda: chat.max_scroll_y > 0 and chat.scroll_y == chat.max_scroll_y,
                       what="the view at the end")

        oldest = next(c for c in chat.query_children(Chapter) if not c.stored)  # its region is in the chat's
        offset = oldest.virtual_region.y  # from the top of the view once scrolled to the top
        chat.scroll_to(y=0, animate=False)
        await wait_for(pilot, lambda: sum(len(chapter) for chapter in chat._stored) < stored,
                       what="stored chapters mounted above what the view shows...")
        await wait_for(pilot, lambda: chat.scroll_y > 0 and oldest.virtual_region.y - chat.scroll_y == offset,
                       what="...which did not move")

        for _ in range(400):  # up to the first message, a few chapters at a time, as a reader keeps scrolling up
            if not chat._stored:
                break
            chat.scroll_to(y=0, animate=False)
            await pilot.pause(0.05)
        users = [str(u.render()) for u in app.query(UserMessage)]
        assert users == [f"question {t}" for t in range(TURNS)]
        assert not chat.query(EarlierMessages)
        await pilot.pause(0.3)
        assert any(chapter.folded for chapter in chat.query_children(Chapter))  # far chapters folded


async def test_many_tool_calls_in_a_turn_keep_a_bounded_pane_and_every_call(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await idle(pilot)
        handle = app.controller.handle
        count = activity.LIVE_ENTRIES * 3
        for n in range(count):
            await handle(ev.ToolCallStarted(f"k{n}", "exec", {"command": f"echo {n}"}, f"$ echo {n}"))
            await handle(ev.ToolOutput(f"k{n}", f"line {n}\n"))
            await handle(ev.ToolCallFinished(f"k{n}", "exec", ToolResult.success(f"line {n}\n", exit_code=0)))
            if n % 10 == 0:
                await pilot.pause()
        await pilot.pause(0.2)
        pane = app.activity
        entries = list(pane.query_children(ToolEntry))
        assert len(entries) <= activity.LIVE_ENTRIES
        assert [r.call_id for r in pane.earlier] + [e.call_id for e in entries] == [f"k{n}" for n in range(count)]
        assert "line 0" in pane.earlier[0].output and pane.earlier[0].state == "done"
        # Opened by its own output, an entry closes when the next call starts; the newest stays open.
        assert entries[-1].expanded and not any(entry.expanded for entry in entries[:-1])


async def test_garbage_frozen_after_a_turn_is_freed_by_the_occasional_deep_collection(make_app, monkeypatch) -> None:
    """A tool entry alive when memory was settled (frozen), then put back behind the "earlier" line, is only
    freed by the collection of everything, which the app runs after a few turns once the user is quiet."""
    import gc
    import weakref

    from swebash_ai.frontends.tui import controller as controller_module
    from swebash_ai.frontends.tui.garbage import collect_garbage, settle_memory

    monkeypatch.setattr(controller_module, "DEEP_COLLECT_TURNS", 1)
    monkeypatch.setattr(controller_module, "QUIET_BEFORE_DEEP_COLLECT", 0.2)
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await idle(pilot)
        handle = app.controller.handle
        await handle(ev.ToolCallStarted("first", "exec", {"command": "echo"}, "$ echo"))
        await handle(ev.ToolCallFinished("first", "exec", ToolResult.success("done\n", exit_code=0)))
        await pilot.pause()
        first = weakref.ref(app.activity.entries["first"])
        settle_memory()  # as after a turn: the entry is frozen
        for n in range(activity.LIVE_ENTRIES + 1):  # pushes "first" behind the earlier line
            await handle(ev.ToolCallStarted(f"k{n}", "exec", {"command": "echo"}, "$ echo"))
            await handle(ev.ToolCallFinished(f"k{n}", "exec", ToolResult.success("done\n", exit_code=0)))
            await pilot.pause()  # laid out: the pane follows the newest call
        await pilot.pause(0.1)
        assert app.activity.earlier[0].call_id == "first"
        collect_garbage()
        assert first() is not None  # frozen: the usual collection never frees it
        app.input_first.last_input = time.monotonic()  # the user just typed: not now
        app.controller.collect_when_idle()
        await pilot.pause(0.1)
        assert first() is not None
        await wait_for(pilot, lambda: first() is None, timeout=3, what="the collection of everything")
        assert gc.get_freeze_count() > 0  # and memory settled again
