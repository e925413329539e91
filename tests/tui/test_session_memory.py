"""A long session in the app keeps a bounded number of widgets, and loses nothing: the first question, its
answer and its tool's output are still readable after many turns (scrolled to, or expanded).

The allowances are made small here (two chapters of chat, four tool entries) so that a few dozen turns
go through what a 300-turn session does with the app's own (see ``bench/tui_session_memory.py``)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

import pytest
from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.frontends.tui.widgets import activity
from swebash_ai.frontends.tui.widgets import chat as chat_module
from swebash_ai.frontends.tui.widgets import stream as stream_module
from swebash_ai.frontends.tui.widgets.activity import ToolEntry
from swebash_ai.frontends.tui.widgets.chat import CHAPTER_SIZE, StoredMessage, UserMessage
from swebash_ai.frontends.tui.widgets.earlier import EarlierMessages
from swebash_ai.frontends.tui.widgets.reply import AssistantMessage
from swebash_ai.testing.fake_server import FakeLLMServer, Reply

TURNS = 26
MEASURED_FROM = 8


def _responder(body: dict[str, Any]) -> Reply:
    messages = body["messages"]
    turn = sum(1 for m in messages if m["role"] == "user" and m.get("content")) - 1
    if messages[-1]["role"] == "tool":
        return Reply.text(f"## Answer {turn}\n\nThe notes of turn {turn} say what they say.\n")
    return Reply.tool_calls([("read_file", {"path": f"notes{turn}.txt"})])


def _widgets(app: Any) -> int:
    return len(list(app.screen.walk_children(with_self=False)))


async def _turn(pilot: Any, app: Any, n: int) -> None:
    await type_and_send(pilot, f"question {n}")
    await wait_for(pilot, lambda: any(f"Answer {n}" in m.source for m in app.query(AssistantMessage)),
                   timeout=30, what=f"answer {n}")
    await idle(pilot)


async def test_a_long_session_keeps_its_widgets_bounded_and_every_old_message_and_output_readable(
    llm_env: FakeLLMServer, make_app: Any, workspace: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(chat_module, "MOUNTED_CHAPTERS", 2)
    monkeypatch.setattr(activity, "LIVE_ENTRIES", 4)
    for n in range(TURNS):
        (workspace / f"notes{n}.txt").write_text(f"notes of turn {n}\n" + "a line of notes\n" * 40)
    llm_env.responder = _responder
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await idle(pilot)
        for n in range(MEASURED_FROM):
            await _turn(pilot, app, n)
        before = _widgets(app)
        first_lines = weakref.ref(next(iter(app.query(UserMessage)))._styles_cache)  # what it drew
        for n in range(MEASURED_FROM, TURNS):
            await _turn(pilot, app, n)
        after = _widgets(app)
        # Unbounded, each turn adds a question, an answer and a tool entry of three widgets: 90 more here.
        assert after <= before + 2 * CHAPTER_SIZE, (before, after)
        assert len(list(app.chat.messages())) <= 3 * CHAPTER_SIZE
        assert len(app.activity.entries) <= activity.LIVE_ENTRIES
        assert app.chat.query(EarlierMessages) and app.activity.earlier
        # A stored message is its class and text: a question its plain string, an answer the conversation's.
        stored = [p for chapter in app.chat._stored for p in chapter]
        assert stored and all(isinstance(p, StoredMessage) for p in stored)
        questions = [p.content for p in stored if p.kind is UserMessage]
        assert questions and all(isinstance(q, str) and q.startswith("question ") for q in questions)
        answers = {id(m["content"]) for m in app.session.conversation.messages if m["role"] == "assistant"}
        assert all(id(p.content) in answers for p in stored if p.kind is AssistantMessage)
        assert all(not hasattr(record, "__dict__") for record in app.activity.earlier)  # slots
        # A message stored as a blueprint lets go of the lines it drew (Textual's caches keyed on them are
        # emptied at the end of each turn: garbage.release_render_caches).
        gc.unfreeze()  # the app freezes what lives after a turn (garbage.settle_memory)
        gc.collect()
        assert first_lines() is None

        # The first question and its answer come back when the chat is scrolled to its top.
        def first_question() -> UserMessage | None:
            return next((m for m in app.chat.query(UserMessage) if str(m.render()) == "question 0"), None)

        for _ in range(TURNS):
            if first_question() is not None:
                break
            app.chat.scroll_home(animate=False)
            await pilot.pause(0.05)
        await wait_for(pilot, lambda: first_question() is not None, what="the first question mounted again")

        def first_answer() -> AssistantMessage | None:
            return next((m for m in app.query(AssistantMessage) if "Answer 0" in m.source), None)

        def drawn() -> bool:
            """Both on screen; asked again at each poll (the widgets are found anew, and scrolled to the very top,
            where they are drawn, until they are)."""
            question, answer = first_question(), first_answer()
            if question is not None and answer is not None and question.region.height > 0 and answer.region.height:
                return True
            app.chat.scroll_home(animate=False)
            return False

        await wait_for(pilot, drawn, what="the first question and answer on screen")
        answer = first_answer()
        assert answer is not None and any("Answer 0" in line for line in answer.text_lines())

        # The first call's output comes back from behind the tool pane's "earlier" line, expanded on Enter.
        pane = app.activity
        for _ in range(TURNS):
            if not pane.earlier:
                break
            pane.earlier_line.focus()
            await pilot.press("enter")
            await pilot.pause()
        first = next(e for e in pane.query_children(ToolEntry) if e.summary.endswith("notes0.txt")
                     or "notes0.txt" in str(e.arguments))
        first.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: first.expanded and "notes of turn 0" in first.output_text,
                       what="the first call's output")


def _answers(app: Any) -> list[str]:
    return [m["content"] for m in app.session.conversation.messages
            if m["role"] == "assistant" and isinstance(m.get("content"), str) and m["content"]]


async def test_a_streamed_answer_is_held_once_as_the_conversation_keeps_it(
    llm_env: FakeLLMServer, make_app: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The chat's messages of a streamed answer, and their blueprints once stored, hold the conversation's
    text of it (a long answer's segments each a span of it), not a second copy that lives as long as the
    session; the text shown is unchanged, and an answer whose shown text differs keeps its own."""
    monkeypatch.setattr(stream_module, "SEGMENT_CHARS", 300)  # a long answer: several segments
    long = "\n\n".join(f"Paragraph {n}: " + "some words " * 30 for n in range(6)) + "\n"
    replies = iter([Reply.text(long, chunk_size=50), Reply.text("short answer\n", chunk_size=5),
                    Reply.text("a title \x1b]0;pwned\x07 set\n", chunk_size=7)])
    llm_env.responder = lambda body: next(replies)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "a long one")
        await idle(pilot)
        segments = list(app.query(AssistantMessage))
        text = _answers(app)[-1]
        assert len(segments) > 2 and "".join(s.source for s in segments) == text == long
        assert all(s.shared_source[0] is text for s in segments)
        again = chat_module.blueprint(segments[1])()  # what a stored chapter builds when shown again
        assert isinstance(again, AssistantMessage)
        assert again.source == segments[1].source and again.shared_source[0] is text

        await type_and_send(pilot, "a short one")
        await idle(pilot)
        message = list(app.query(AssistantMessage))[-1]
        assert message.source == "short answer\n" and message.shared_source == (_answers(app)[-1], None)
        assert message.shared_source[0] is _answers(app)[-1]

        await type_and_send(pilot, "one with a control sequence")
        await idle(pilot)
        message = list(app.query(AssistantMessage))[-1]
        assert message.source == "a title  set\n"  # shown without the sequence, in a copy of its own
        assert _answers(app)[-1] != message.source and message.shared_source[0] is not _answers(app)[-1]


async def test_the_caches_that_fill_with_the_sessions_texts_are_emptied_after_each_turn(
    llm_env: FakeLLMServer, make_app: Any,
) -> None:
    """Rich's cell-length cache and Textual's ``query_one`` caches keep keys of past turns that never come back
    (about 1 MB over a 300-turn session once full), and each widget's line cache keeps every line it drew with
    the crops made of them (~1 KB a line, thousands of them): the end of a turn empties them
    (garbage.release_text_caches), and the next frame draws what it shows again."""
    from rich.cells import cached_cell_len
    from textual.geometry import Region
    from textual.strip import Strip

    llm_env.responder = lambda body: Reply.text("an answer\n")
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await idle(pilot)
        measured = "a line measured before the turn, never drawn"
        cached_cell_len(measured)
        key = ("a key of the turn before",)
        app.screen._query_one_cache.set(key, app.chat)
        await type_and_send(pilot, "question")
        await wait_for(pilot, lambda: not app.busy and any(m.source for m in app.query(AssistantMessage)),
                       what="the answer")
        await idle(pilot)
        misses = cached_cell_len.cache_info().misses
        cached_cell_len(measured)
        assert cached_cell_len.cache_info().misses == misses + 1  # measured again: it was no longer cached
        assert app.screen._query_one_cache.get(key) is None

        # A line an answer drew in this turn: nothing redraws that answer in the next, its cache stays but for
        # the end of the turn.
        first = list(app.query(AssistantMessage))[-1]
        first._styles_cache._cache[10_000] = Strip.blank(3)
        first._box_model_cache["a layout long gone"] = object()  # a box model of an earlier layout
        await type_and_send(pilot, "another question")
        await wait_for(pilot, lambda: not app.busy and len(app.query(AssistantMessage)) == 2, what="the answer")
        await idle(pilot)
        assert 10_000 not in first._styles_cache._cache and "a layout long gone" not in first._box_model_cache
        drawn = first.render_lines(Region(0, 0, first.size.width, first.size.height))
        assert "an answer" in "".join(strip.text for strip in drawn)  # drawn again when asked
