"""The event pipe takes no lock per item: whatever the interleaving of the engine's pushes and the UI's drains,
every item arrives once, in order, and the stream ends at DONE."""

from __future__ import annotations

import asyncio
import collections
import sys
import threading

import pytest

from swebash_ai.frontends.tui.engine import DONE, EventPipe, watched_loop

COUNT = 20_000


async def push_and_receive(count: int) -> tuple[list[int], int]:
    """A thread pushes ``0..count-1`` then DONE as fast as it can; (what arrived, in how many batches)."""
    pipe = EventPipe(asyncio.get_running_loop())

    def produce() -> None:
        for i in range(count):
            pipe.push(i)
        pipe.push(DONE)

    producer = threading.Thread(target=produce)
    batches: list[list[int]] = []
    producer.start()
    try:
        async for batch in pipe.batches():
            batches.append(batch)
            await asyncio.sleep(0)  # the UI does something between batches
    finally:
        await asyncio.to_thread(producer.join)
    assert all(batches[:-1])  # an empty drain is not handed on (the last may hold DONE alone)
    return [item for batch in batches for item in batch], len(batches)


@pytest.mark.parametrize("watched", [False, True], ids=["plain loop", "the UI's watched loop"])
def test_every_item_arrives_once_in_order_whatever_the_interleaving(watched: bool) -> None:
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # the two threads take turns as often as the interpreter allows
    loop = watched_loop() if watched else asyncio.new_event_loop()
    try:
        received, batches = loop.run_until_complete(push_and_receive(COUNT))
    finally:
        loop.close()
        sys.setswitchinterval(before)
    assert received == list(range(COUNT))
    assert 1 <= batches <= COUNT


def test_done_alone_ends_the_stream() -> None:
    received, batches = asyncio.run(push_and_receive(0))
    assert (received, batches) == ([], 1)


def test_the_last_item_pushed_while_a_drain_runs_is_not_stranded() -> None:
    """The one interleaving that could lose an item: the engine pushes while the UI loop is inside a drain (the
    drain's first take stands in for the engine thread running there). The item must be taken by that drain or
    schedule the next one; DONE pushed there must still end the stream."""

    async def scenario() -> list[object]:
        pipe = EventPipe(asyncio.get_running_loop())

        class EngineRunsMidDrain(collections.deque[object]):
            fired = False

            def popleft(self) -> object:
                if not self.fired:
                    self.fired = True
                    pipe.push(DONE)
                return super().popleft()

        pipe._pending = EngineRunsMidDrain()
        pipe.push("first")
        received: list[object] = []

        async def consume() -> None:
            async for batch in pipe.batches():
                received.extend(batch)

        await asyncio.wait_for(consume(), 10)  # stranded, it would never end
        return received

    assert asyncio.run(scenario()) == ["first"]


def _push_timed(last_input: float | None, count: int) -> tuple[float, int, list[int]]:
    """Seconds ``count`` pushes took with the user's last key at ``last_input`` (None: no typing source),
    how many times the engine slept for the pace, and what arrived."""
    import time

    async def run() -> tuple[float, int, list[int]]:
        pipe = EventPipe(asyncio.get_running_loop(), None if last_input is None else (lambda: last_input))

        def produce() -> float:
            started = time.monotonic()
            for i in range(count):
                pipe.push(i)
            took = time.monotonic() - started
            pipe.push(DONE)
            return took

        producing = asyncio.create_task(asyncio.to_thread(produce))
        received = [item async for batch in pipe.batches() for item in batch]
        return await producing, pipe.paced, received

    return asyncio.run(run())


def test_while_the_user_types_a_stream_is_read_at_the_typing_rate() -> None:
    """A flood of events (a stream far faster than any provider) leaves a typist the CPU: while a key came
    within TYPING_QUIET, the engine hands over no more than TYPING_RATE events a second; nothing is lost."""
    import time

    from swebash_ai.frontends.tui import engine

    count = int(engine.TYPING_RATE * 0.2)  # 0.2 s at the pace
    took, paced, received = _push_timed(time.monotonic() + 60, count)  # a key "now" for the whole run
    assert received == list(range(count))
    assert took >= 0.2 - 2 * engine._LEAD and paced > 0


@pytest.mark.parametrize("typed", ["never", "long ago", "no source"])
def test_without_typing_the_stream_is_not_paced(typed: str) -> None:
    import time

    from swebash_ai.frontends.tui import engine

    last = {"never": 0.0, "long ago": time.monotonic() - engine.TYPING_QUIET - 1, "no source": None}[typed]
    count = int(engine.TYPING_RATE * 0.2)
    _took, paced, received = _push_timed(last, count)
    assert received == list(range(count))
    assert paced == 0  # (no timing bound: under load the pipe may wait for a busy consumer, see BUSY_AFTER)
