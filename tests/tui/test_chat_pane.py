"""The chat pane's structure: messages in chapters, chapters far from the view folded, and the plain-text
tail of a streamed reply."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from textual import events

from swebash_ai.frontends.tui.widgets.chat import CHAPTER_SIZE, Chapter, ChatPane, Shelf
from swebash_ai.frontends.tui.widgets.stream import TAIL_CHARS, tail_excerpt
from tests.tui.tui_helpers import ChatHost, wait_for


@pytest.fixture(autouse=True)
def many_chapters_mounted(monkeypatch: Any) -> None:
    """Folding is about chapters kept as widgets: here more of them are kept than the app keeps (the tests of
    storing set their own allowance)."""
    from swebash_ai.frontends.tui.widgets import chat as chat_module

    monkeypatch.setattr(chat_module, "MOUNTED_CHAPTERS", 40)


@contextlib.asynccontextmanager
async def chat_with(pairs: int) -> AsyncIterator[tuple[Any, ChatPane]]:
    """A running 100x30 app whose chat holds ``pairs`` questions, each followed by a long notice."""
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatPane)
        for i in range(pairs):
            chat.add_user(f"question {i}")
            chat.add_notice(f"notice {i}: " + "word " * 40)
        await settle(pilot)
        yield pilot, chat


def chapters(chat: ChatPane) -> list[Chapter]:
    return list(chat.query_children(Chapter))


async def settle(pilot: Any) -> None:
    for _ in range(3):
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()


# --- chapters -----------------------------------------------------------------------------------------
async def test_messages_are_kept_in_order_in_chapters_of_bounded_size() -> None:
    async with chat_with(15) as (_pilot, chat):  # 30 messages
        sizes = [len(chapter.children) for chapter in chapters(chat)]
        assert sizes == [CHAPTER_SIZE, CHAPTER_SIZE, 30 - 2 * CHAPTER_SIZE]
        texts = [str(widget.render()) for widget in chat.messages()]
        assert texts[0] == "question 0" and texts[-2] == "question 14" and len(texts) == 30


async def test_a_streamed_reply_goes_into_chapters_above_its_tail() -> None:
    async with chat_with(5) as (pilot, chat):
        paragraphs = "".join(f"Paragraph {i}: " + "word " * 80 + "\n\n" for i in range(60))
        await chat.write_reply(paragraphs + "an unfinished line")
        stream = chat._stream
        assert stream is not None
        for _ in range(100):
            await stream.flush()
            if "".join(seg.source for seg in stream.segments) == paragraphs:
                break
            await pilot.pause(0.01)
        assert len({segment.parent for segment in stream.segments}) > 1  # it went on in a new chapter
        assert chat.children[-1] is stream.tail_widget  # the tail stays last, below every chapter
        await chat.end_reply()
        assert chat.last_reply_text() == paragraphs + "an unfinished line"
        assert all(isinstance(child, (Chapter, Shelf)) for child in chat.children)


# --- folding ------------------------------------------------------------------------------------------
async def test_chapters_far_from_the_view_fold_and_unfold_when_scrolled_to_without_moving_anything() -> None:
    async with chat_with(120) as (pilot, chat):
        first, *_, last = chapters(chat)
        assert first.folded and not first.children[0].display  # far above the view: not displayed
        assert not last.folded  # the newest stays open
        assert chat.scroll_y == chat.max_scroll_y  # following the end
        height = chat.virtual_size.height

        chat.scroll_home(animate=False)
        await settle(pilot)
        assert not first.folded and first.children[0].region.height > 0  # drawn where the user looks
        assert chapters(chat)[-2].folded  # now the end is far away
        assert chat.virtual_size.height == height  # folded chapters kept their height: nothing jumped

        chat.scroll_end(animate=False)
        await settle(pilot)
        assert first.folded and not chapters(chat)[-2].folded


async def test_home_and_end_jump_without_an_animation() -> None:
    async with chat_with(120) as (pilot, chat):
        pilot.app.animation_level = "full"  # as in a terminal
        chat.focus()
        await pilot.pause()
        pilot.app.post_message(events.Key("home", None))  # not pilot.press: it waits for animations to end
        await asyncio.sleep(0.1)
        assert chat.scroll_y == 0  # at once, not after a second of animation
        await settle(pilot)
        assert not chapters(chat)[0].folded
        pilot.app.post_message(events.Key("end", None))
        await asyncio.sleep(0.1)
        assert chat.scroll_y == chat.max_scroll_y


async def test_a_width_change_unfolds_everything_and_the_new_heights_are_kept() -> None:
    async with chat_with(60) as (pilot, chat):
        assert chapters(chat)[0].folded
        await pilot.resize_terminal(60, 30)  # narrower: every message wraps to more lines
        await settle(pilot)
        await wait_for(pilot, lambda: chapters(chat)[0].folded, what="folded again at the new width")
        folded_height = chat.virtual_size.height
        for chapter in chapters(chat):
            chapter.unfold()
        await settle(pilot)
        assert chat.virtual_size.height == folded_height  # the folded heights were measured at 60 columns


# --- the plain-text tail ------------------------------------------------------------------------------
def test_a_short_tail_is_shown_whole_and_a_long_one_by_its_last_lines() -> None:
    assert tail_excerpt("a line\nanother\n\n") == "a line\nanother"
    code = "```python\n" + "".join(f"line_{i} = {i}\n" for i in range(2000))
    shown = tail_excerpt(code)
    assert shown.startswith("…\nline_") and shown.endswith("line_1999 = 1999")
    assert len(shown) <= TAIL_CHARS + 2
    assert code.rstrip("\n").endswith(shown[2:])  # whole lines: it starts just after a newline


async def test_a_long_code_block_still_streaming_shows_its_newest_lines() -> None:
    async with chat_with(0) as (_pilot, chat):
        await chat.write_reply("Here it is:\n\n```python\n")
        for i in range(600):  # no blank line, the fence stays open: nothing can be rendered yet
            await chat.write_reply(f"value_{i} = {i}\n")
        stream = chat._stream
        assert stream is not None
        await stream.flush()
        tail = stream.tail_widget
        assert tail is not None and tail.display
        assert tail.text.endswith("value_599 = 599")  # the newest line, not the first 4,000 characters
        await chat.end_reply()
        assert chat.last_reply_text().endswith("value_599 = 599\n")


def test_the_tail_is_word_wrapped_cheaply_and_keeps_its_blank_lines() -> None:
    from swebash_ai.frontends.tui.widgets.stream import wrap_plain

    assert wrap_plain("alpha beta gamma delta", 11) == ["alpha beta", "gamma delta"]
    assert wrap_plain("abcdefghijkl mn", 5) == ["abcde", "fghij", "kl mn"]  # a long word is cut
    assert wrap_plain("one\n\ntwo   \n", 10) == ["one", "", "two   ", ""]
    assert wrap_plain("word   ", 4) == ["word"]  # the spaces at a break go
    assert wrap_plain("日本語のテキスト", 6) == ["日本語", "のテキ", "スト"]  # wide characters by cells
    assert wrap_plain("\tx", 8) == ["    x"]


async def test_folded_answers_forget_their_lines_and_draw_them_again_when_unfolded() -> None:
    app = ChatHost()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatPane)
        answers = [chat.add_assistant(f"**Answer {i}**\n\n" + "word " * 60 + "\n") for i in range(120)]
        await settle(pilot)
        first = answers[0]
        assert first.parent is chapters(chat)[0] and chapters(chat)[0].folded
        assert first._lines is None and first._rendered == []  # no lines kept for a folded answer
        height = chat.virtual_size.height
        chat.scroll_home(animate=False)
        await settle(pilot)
        assert not chapters(chat)[0].folded
        assert first.text_lines()[0] == "Answer 0" and first.region.height > 1  # drawn again
        assert chat.virtual_size.height == height


async def test_folded_chapters_at_the_top_are_shelved_and_come_back_when_scrolled_to() -> None:
    async with chat_with(120) as (pilot, chat):
        shelved = [chapter for chapter in chapters(chat) if chapter.shelved]
        assert shelved and shelved == chapters(chat)[:len(shelved)]  # the leading run
        assert not any(chapter.display for chapter in shelved)  # not even arranged
        shelf = chat.query_children(Shelf).first()
        assert chat.children[0] is shelf and shelf.outer_size.height == sum(c.kept_height for c in shelved)
        height = chat.virtual_size.height
        assert len(list(chat.messages())) == 240  # every message is still there

        chat.scroll_home(animate=False)
        await settle(pilot)
        assert not any(chapter.shelved for chapter in chapters(chat)) and shelf.outer_size.height == 0
        assert chapters(chat)[0].children[0].region.height > 0  # drawn where the user looks
        assert chat.virtual_size.height == height  # nothing jumped

        chat.scroll_end(animate=False)
        await settle(pilot)
        assert chapters(chat)[0].shelved and chat.virtual_size.height == height


# --- the oldest chapters stored as blueprints ---------------------------------------------------------
async def test_the_oldest_chapters_are_stored_behind_an_earlier_line_and_come_back(monkeypatch: Any) -> None:
    """Beyond the allowance of mounted chapters, the oldest are kept as blueprints: widgets stay bounded,
    and the 'earlier messages' line brings them back, newest first, with their text and kind."""
    from swebash_ai.frontends.tui.widgets import chat as chat_module
    from swebash_ai.frontends.tui.widgets.chat import ErrorMessage, NoticeMessage
    from swebash_ai.frontends.tui.widgets.earlier import EarlierMessages

    monkeypatch.setattr(chat_module, "MOUNTED_CHAPTERS", 4)
    monkeypatch.setattr(chat_module, "SHOW_MORE", 2)
    async with chat_with(60) as (pilot, chat):  # 120 messages: 10 chapters
        chat.add_error("Boom", "it broke", "try again")
        chat.add_assistant("**final** answer")
        await settle(pilot)
        assert len(chapters(chat)) == 4 and len(list(chat.messages())) <= 4 * CHAPTER_SIZE
        line = chat.query_one(EarlierMessages)
        assert chat.children[0] is line
        assert "84 earlier messages" in str(line.render())  # 122 messages: 7 chapters stored, 38 widgets
        texts = [str(w.render()) for w in chat.messages()]
        assert texts[-1] != "" and "question 59" in " ".join(texts)

        line.focus()
        await pilot.press("enter")
        await settle(pilot)
        assert "60 earlier messages" in str(line.render())  # two chapters of 12 came back
        assert len(chapters(chat)) == 6
        back = list(chat.messages())
        assert str(back[0].render()) == "question 30" and isinstance(back[1], NoticeMessage)
        assert "-info" in back[1].classes  # rebuilt with its kind

        for _ in range(3):
            await pilot.click(EarlierMessages)
            await settle(pilot)
        assert not chat.query(EarlierMessages)  # all shown: the line goes
        assert str(next(chat.messages()).render()) == "question 0"
        assert any(isinstance(w, ErrorMessage) for w in chat.messages())

        chat.scroll_home(animate=False)  # reading up there: the chapters shown again stay
        await settle(pilot)
        chat.add_user("one more")
        await settle(pilot)
        assert not chat.query(EarlierMessages) and str(next(chat.messages()).render()) == "question 0"
        chat.scroll_end(animate=False)  # back at the end: the next message stores them again
        await settle(pilot)
        chat.add_user("and another")
        await settle(pilot)
        assert len(chapters(chat)) == 4 and "earlier messages" in str(chat.query_one(EarlierMessages).render())
        chat.scroll_home(animate=False)  # and scrolling up brings them back: nothing is lost
        await settle(pilot)
        await settle(pilot)
        assert len(chapters(chat)) > 4
        await chat.clear()
        await settle(pilot)
        assert chat._stored == [] and not chapters(chat)


async def test_nothing_is_stored_while_the_user_reads_further_up(monkeypatch: Any) -> None:
    from swebash_ai.frontends.tui.widgets import chat as chat_module

    monkeypatch.setattr(chat_module, "MOUNTED_CHAPTERS", 4)
    async with chat_with(24) as (pilot, chat):  # 4 chapters: at the allowance
        chat.scroll_home(animate=False)
        await settle(pilot)
        for i in range(30):
            chat.add_user(f"later {i}")
        await settle(pilot)
        assert len(chapters(chat)) > 4 and str(next(chat.messages()).render()) == "question 0"
        chat.scroll_end(animate=False)
        await settle(pilot)
        chat.add_user("back at the end")
        await settle(pilot)
        assert len(chapters(chat)) == 4  # stored once the view follows the end again
