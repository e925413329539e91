"""What keeps the UI responsive under a fast stream: bounded commits, the engine yielding to a busy UI,
and full garbage collections held off while the app runs."""

from __future__ import annotations

import asyncio
import collections
import gc
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

import swebash_ai.frontends.tui
from swebash_ai.frontends.tui import engine
from swebash_ai.frontends.tui.engine import DONE, SWITCH_INTERVAL, Engine, EventPipe, LoopWatch, watched_loop
from swebash_ai.frontends.tui.garbage import FULL_COLLECTION_HOLD, full_collections_held
from swebash_ai.frontends.tui.widgets.chat import ChatPane
from swebash_ai.frontends.tui.widgets.reply import AssistantMessage
from swebash_ai.frontends.tui.widgets.stream import COMMIT_CHARS, ReplyStream
from swebash_ai.testing.fake_server import Reply
from tests.tui.tui_helpers import ChatHost, idle, type_and_send, wait_for

PARAGRAPH = "word " * 60 + "\n\n"  # 302 characters
T = TypeVar("T")


# --- where a commit ends ------------------------------------------------------------------------------
def test_a_commit_ends_at_the_last_block_boundary_within_the_budget() -> None:
    text = PARAGRAPH * (COMMIT_CHARS // len(PARAGRAPH) + 20)  # far more than one commit
    cut = ReplyStream._next_cut(text, final=False)
    assert 0 < cut <= COMMIT_CHARS and text[:cut].endswith("\n\n")
    assert cut == (COMMIT_CHARS // len(PARAGRAPH)) * len(PARAGRAPH)


def test_a_short_text_commits_its_complete_blocks_and_all_of_it_at_the_end() -> None:
    text = PARAGRAPH + "unfinished par"
    assert ReplyStream._next_cut(text, final=False) == len(PARAGRAPH)
    assert ReplyStream._next_cut(text, final=True) == len(text)
    assert ReplyStream._next_cut("no boundary yet", final=False) == 0


def test_a_block_longer_than_the_budget_is_committed_whole_and_fences_are_not_split() -> None:
    code = "```python\n" + "x = 1\n\n" * (COMMIT_CHARS // 7 + 50) + "```\n\n"  # blank lines inside: no boundary
    text = code + PARAGRAPH
    cut = ReplyStream._next_cut(text, final=False)
    assert cut == len(code)
    assert ReplyStream._next_cut(code[:-2], final=False) == 0  # the fence is still open: nothing yet


# --- the stream in a real chat pane -------------------------------------------------------------------
async def test_a_burst_is_shown_in_bounded_steps_and_completely_at_the_end() -> None:
    app = ChatHost()
    text = "".join(f"Paragraph {i}: " + PARAGRAPH for i in range(2 * COMMIT_CHARS // len(PARAGRAPH)))  # at once
    async with app.run_test(size=(100, 40)) as pilot:
        chat = app.query_one(ChatPane)
        await chat.write_reply(text)
        stream = chat._stream
        assert stream is not None
        await stream.flush()
        shown = "".join(seg.source for seg in stream.segments)
        assert 0 < len(shown) <= COMMIT_CHARS  # one step, not the whole burst
        assert stream._tail_widget is not None  # what comes next is visible as plain text meanwhile
        assert len(stream._tail_widget.text) <= COMMIT_CHARS
        # The paced timer shows the rest while the stream is still open, all but the last paragraph: the
        # next line could still belong to it (an indented continuation).
        complete = text[: text.rindex("Paragraph ")]
        for _ in range(250):
            await pilot.pause(0.02)
            if "".join(seg.source for seg in stream.segments) == complete:
                break
        assert "".join(seg.source for seg in stream.segments) == complete
        assert stream.flushes < 10
        await chat.end_reply()
        assert chat.last_reply_text() == text
        assert not chat.streaming


class _StyledChat(ChatHost):
    """The chat pane with the app's stylesheet (its gutters and scroll bar)."""

    CSS_PATH = str(Path(swebash_ai.frontends.tui.__file__).parent / "app.tcss")


async def test_a_reply_that_starts_the_chat_scrolling_renders_each_block_once(monkeypatch) -> None:
    """The chat keeps its scroll bar's column from the start: when the first long reply makes it scroll,
    no message gets narrower, so none is rendered again (inside a layout pass, where keys wait)."""
    renders: collections.Counter[int] = collections.Counter()
    real_render = AssistantMessage._render_next

    def render_next(self: AssistantMessage, width: int, like: AssistantMessage | None = None) -> None:
        renders[width] += 1
        real_render(self, width, like)

    monkeypatch.setattr(AssistantMessage, "_render_next", render_next)
    app = _StyledChat()
    async with app.run_test(size=(80, 20)) as pilot:
        chat = app.query_one(ChatPane)
        for i in range(12):
            await chat.write_reply(f"Paragraph {i}: " + PARAGRAPH)
            await pilot.pause(0.25)  # longer than the flush interval: one commit each
        await chat.end_reply()
        await pilot.pause()
        assert chat.max_scroll_y > 0  # it does scroll now
        segments = [widget for widget in chat.messages() if isinstance(widget, AssistantMessage)]
        assert sum(len(segment._blocks) for segment in segments) == 12
        assert sum(renders.values()) == 12, renders
        assert len(renders) == 1  # all at one width



async def test_closing_a_reply_shows_the_rest_even_when_it_is_far_behind() -> None:
    app = ChatHost()
    text = "".join(f"Item {i}: " + PARAGRAPH for i in range(25)) + "last words without a break"
    async with app.run_test(size=(100, 40)):
        chat = app.query_one(ChatPane)
        await chat.write_reply(text)
        await chat.end_reply()
        assert chat.last_reply_text() == text
        assert not chat.query("ReplyTail")  # nothing left as plain text


# --- the engine gives way to a busy UI ----------------------------------------------------------------
def start_producer(pipe: EventPipe, count: int, pause: float, waited: list[float]) -> threading.Thread:
    """A thread pushing ``0..count-1`` then DONE, ``pause`` apart, recording how long each push took."""

    def produce() -> None:
        for i in range(count):
            start = time.monotonic()
            pipe.push(i)
            waited.append(time.monotonic() - start)
            time.sleep(pause)
        pipe.push(DONE)

    producer = threading.Thread(target=produce)
    producer.start()
    return producer


async def receive_all(pipe: EventPipe, producer: threading.Thread) -> list[int]:
    received: list[int] = []
    async for batch in pipe.batches():
        received.extend(batch)
    await asyncio.to_thread(producer.join)
    return received


async def test_the_engine_waits_while_the_ui_loop_is_busy_and_loses_nothing() -> None:
    pipe = EventPipe(asyncio.get_running_loop())
    waited: list[float] = []
    producer = start_producer(pipe, 50, 0.001, waited)
    time.sleep(0.06)  # the UI loop is busy (a long layout): nothing can drain meanwhile
    assert await receive_all(pipe, producer) == list(range(50))
    assert pipe.yields >= 1  # the producer noticed the busy UI and waited...
    assert max(waited) >= 0.02  # ...for real (with the interpreter lock released)
    assert max(waited) < engine.MAX_YIELD + 0.05  # and never longer than the bound


async def test_the_engine_does_not_wait_for_an_idle_ui() -> None:
    pipe = EventPipe(asyncio.get_running_loop())
    waited: list[float] = []
    producer = start_producer(pipe, 20, 0.003, waited)
    assert await receive_all(pipe, producer) == list(range(20))
    # An idle loop drains within a fraction of a millisecond; on a loaded machine a wake-up may be late
    # now and then, but waiting on every push (up to 0.1 s each) would be a bug.
    assert pipe.yields <= 5 and sum(waited) < 0.2


def run_on_watched_loop(scenario: Callable[[LoopWatch], Coroutine[Any, Any, T]]) -> T:
    """Run ``scenario(watch)`` on a loop made by :func:`watched_loop`, as the app's UI runs."""
    loop = watched_loop()
    watch = LoopWatch.of(loop)
    assert watch is not None
    try:
        return loop.run_until_complete(scenario(watch))
    finally:
        loop.close()


def test_a_watched_loop_tells_other_threads_when_it_works_and_when_it_waits() -> None:
    plain = asyncio.new_event_loop()
    assert LoopWatch.of(plain) is None
    plain.close()

    async def scenario(watch: LoopWatch) -> tuple[float, bool, float]:
        seen: list[tuple[float, bool]] = []
        sampler = threading.Thread(target=lambda: (time.sleep(0.05), seen.append((watch.busy_for(),
                                                                                   watch.wait_idle(0)))))
        sampler.start()
        await asyncio.sleep(0.2)  # the loop waits for I/O meanwhile
        sampler.join()
        time.sleep(0.05)  # a long callback
        return seen[0][0], seen[0][1], watch.busy_for()

    waiting_for, idle, working_for = run_on_watched_loop(scenario)
    assert waiting_for == 0.0 and idle  # seen waiting
    assert working_for >= 0.05  # seen working, for as long as it did


def test_the_engine_waits_while_a_watched_ui_loop_works_and_not_while_it_waits() -> None:
    async def scenario(watch: LoopWatch) -> tuple[list[int], EventPipe, list[float], list[int], EventPipe]:
        busy_pipe = EventPipe(asyncio.get_running_loop())
        waited: list[float] = []
        producer = start_producer(busy_pipe, 50, 0.001, waited)
        time.sleep(0.06)  # a long layout: the producer sees the loop working and waits for its break
        received = await receive_all(busy_pipe, producer)
        idle_pipe = EventPipe(asyncio.get_running_loop())
        producer = start_producer(idle_pipe, 20, 0.003, [])
        return received, busy_pipe, waited, await receive_all(idle_pipe, producer), idle_pipe

    received, busy_pipe, waited, received_idle, idle_pipe = run_on_watched_loop(scenario)
    assert received == list(range(50)) and received_idle == list(range(20))  # nothing lost either way
    assert busy_pipe.yields >= 1 and max(waited) >= 0.02  # it waited, with the interpreter lock released
    assert max(waited) < engine.MAX_YIELD + 0.05
    assert idle_pipe.yields <= 5  # an idle loop is not waited for (a late wake-up now and then)


# --- garbage collection during a turn -----------------------------------------------------------------
@pytest.fixture
def thresholds():  # type: ignore[no-untyped-def]
    saved = gc.get_threshold()
    yield saved
    gc.set_threshold(*saved)


def test_full_collections_are_held_and_restored_after(thresholds) -> None:  # type: ignore[no-untyped-def]
    first, second, third = thresholds
    with full_collections_held():
        assert gc.get_threshold() == (first, second, FULL_COLLECTION_HOLD)
        with full_collections_held():  # nested holds
            pass
        assert gc.get_threshold()[2] == FULL_COLLECTION_HOLD  # still held: the outer one is on
    assert gc.get_threshold() == (first, second, third)


async def test_the_app_holds_full_collections_and_runs_them_when_idle(make_app, thresholds,
                                                                      monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls: list[int] = []
    monkeypatch.setattr(gc, "collect", lambda generation=2: calls.append(generation) or 0)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append(-1))
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await idle(pilot)
        # held from the start, not only during turns: one fell between two turns in the benchmark
        assert gc.get_threshold()[2] == FULL_COLLECTION_HOLD
        calls.clear()
        app.busy = True  # a turn is running: the idle collection waits for the end of the next one
        app.controller.collect_when_idle()
        assert calls == []
        app.busy = False
        app.controller.collect_when_idle()
        assert calls == [2, -1]
    assert gc.get_threshold() == thresholds


# --- the pace of flushes ------------------------------------------------------------------------------
def test_the_next_flush_waits_pace_times_the_cost_of_the_last_within_bounds() -> None:
    from swebash_ai.frontends.tui.widgets import stream as stream_module

    stream = ReplyStream(ChatHost())  # type: ignore[arg-type]  # no timer is started here
    assert stream._interval() == stream_module.FLUSH_INTERVAL  # cheap flushes: the floor
    stream._cost = 0.1
    assert stream._interval() == pytest.approx(stream_module.PACE * 0.1)
    stream._cost = 5.0
    assert stream._interval() == stream_module.MAX_INTERVAL  # however slow: the reply still moves
    stream._lag = 1.0
    assert stream._interval() == stream_module.MAX_INTERVAL + stream_module.MAX_BACKOFF


async def test_a_stream_of_many_small_chunks_costs_few_flushes_and_one_render_per_block(monkeypatch) -> None:
    """Two thousand chunks over about a second: a handful of flushes (not one per chunk, nor one every
    50 ms), each block rendered once."""
    renders = collections.Counter[int]()
    real_render = AssistantMessage._render_next

    def render_next(self: AssistantMessage, width: int, like: AssistantMessage | None = None) -> None:
        renders[width] += 1
        real_render(self, width, like)

    monkeypatch.setattr(AssistantMessage, "_render_next", render_next)
    text = "".join(f"Paragraph {i}: " + PARAGRAPH for i in range(40))
    chunks = [text[i:i + 6] for i in range(0, len(text), 6)]
    app = _StyledChat()  # the app's scroll bar column: one width from the start
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.query_one(ChatPane)
        started = time.monotonic()
        for n, chunk in enumerate(chunks):
            await chat.write_reply(chunk)
            if n % 100 == 0:
                await pilot.pause(0.05)
        stream = chat._stream
        assert stream is not None
        elapsed = time.monotonic() - started
        await chat.end_reply()
        assert chat.last_reply_text() == text
        assert stream.flushes <= elapsed / 0.2 + 3  # FLUSH_INTERVAL apart at most, plus the final steps
        assert sum(renders.values()) == 40  # each paragraph once


def test_the_engine_switches_threads_sooner_while_it_runs_and_gives_the_interval_back() -> None:
    # While the engine parses a stream, the UI thread waits for the interpreter lock after each turn of its loop
    # for up to one switch interval (engine.SWITCH_INTERVAL says how much that costs a keypress).
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.005)
        engine = Engine()
        try:
            assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL, abs=2e-6)
            assert engine.submit(asyncio.sleep(0, "ran")).result(timeout=5) == "ran"
        finally:
            engine.stop()
        assert sys.getswitchinterval() == pytest.approx(0.005, abs=2e-6)
        # One set lower already (by whoever embeds the app) is left as it is.
        sys.setswitchinterval(0.0002)
        engine = Engine()
        assert sys.getswitchinterval() == pytest.approx(0.0002, abs=2e-6)
        engine.stop()
        assert sys.getswitchinterval() == pytest.approx(0.0002, abs=2e-6)
    finally:
        sys.setswitchinterval(before)


async def test_a_flood_streamed_while_the_user_types_is_read_at_the_typing_rate(  # type: ignore[no-untyped-def]
        llm_env, make_app, monkeypatch) -> None:
    """The app wires the prompt's keys to the engine: while the user types, a stream faster than
    engine.TYPING_RATE is read at that pace (the keys get the CPU), and every word still arrives."""
    monkeypatch.setattr(engine, "TYPING_RATE", 400.0)
    pipes: list[EventPipe] = []
    real_init = EventPipe.__init__

    def init(self: EventPipe, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        pipes.append(self)

    monkeypatch.setattr(EventPipe, "__init__", init)
    words = " ".join(f"w{i}" for i in range(600))
    llm_env.enqueue(Reply.text(words, chunk_size=4))  # ~900 events, as fast as the server can
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "go")  # typing: the stream is paced from its start
        typed, deadline = 0, time.monotonic() + 60
        while app.chat.last_reply_text().split() != words.split():
            assert time.monotonic() < deadline, "the reply did not arrive whole"
            await pilot.press("x")
            typed += 1
            await pilot.pause(0.02)
        await wait_for(pilot, lambda: not app.busy, what="the end of the turn")
        assert app.prompt.text == "x" * typed
    assert pipes and pipes[-1].paced > 0
