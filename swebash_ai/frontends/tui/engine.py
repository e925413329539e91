"""The engine thread: the session's turns run on their own event loop, away from the UI's.

Why: the provider client parses a fast stream chunk after chunk without yielding to the event loop while
its socket buffer holds data, and the loop hands each event over without suspending either. On the UI's
loop that starves key handling for hundreds of milliseconds. On a second loop in a background thread,
the interpreter's thread switching keeps the UI responsive whatever the core does; while the engine runs, the
switch comes every :data:`SWITCH_INTERVAL` instead of Python's 5 ms (see there).

Events cross back in batches: the engine appends to a queue (no lock: see :class:`EventPipe`) and schedules
at most one drain on the UI loop at a time, so a 20,000-token stream costs a few hundred wake-ups of the UI,
not 20,000.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import logging
import selectors
import sys
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, ClassVar, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

DONE = object()
"""Marks the end of a stream of events."""

SWITCH_INTERVAL = 0.001
"""Seconds a thread may hold the interpreter lock while another waits for it, while an :class:`Engine` runs
(``sys.setswitchinterval``; Python's default is 0.005).

The UI loop gives the lock up at every turn of its loop (its wait for input is a system call), and takes it back
only once the engine thread, parsing a fast stream, is made to let go: up to a whole interval each time, and a
keypress takes several turns of the loop from the terminal to the prompt. Measured with ``bench/tui_stream.py``
(20,000 tokens at full speed, two CPU-bound competitors, four pairs): the UI loop's time in those zero-timeout
waits fell from 0.96-1.84 s to 0.38-0.91 s a turn. The cost is a few more switches while both threads work.
"""


class Engine:
    """A background thread running an asyncio loop; coroutines are submitted to it from the UI loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._switch_interval = sys.getswitchinterval()  # given back when the engine stops
        sys.setswitchinterval(min(self._switch_interval, SWITCH_INTERVAL))
        self._thread = threading.Thread(target=self._run, name="swebash-engine", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            try:
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            finally:
                self.loop.close()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``coro`` on the engine loop; cancel the returned future to cancel it."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` run on the engine loop (from another loop); cancelling this cancels it."""
        future = self.submit(coro)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()
            raise

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Call ``fn(*args)`` on the engine loop (thread-safe)."""
        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(fn, *args)

    def stop(self, timeout: float = 2.0) -> None:
        """Cancel what still runs and stop the thread."""
        if self.loop.is_closed():
            return

        async def shutdown() -> None:
            tasks = [t for t in asyncio.all_tasks(self.loop) if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.loop.stop()

        try:
            asyncio.run_coroutine_threadsafe(shutdown(), self.loop)
        except RuntimeError:  # already closed
            return
        self._thread.join(timeout)
        sys.setswitchinterval(self._switch_interval)


BUSY_AFTER = 0.002
"""Seconds the UI loop may work without a break before the engine takes it to be busy and waits."""
MAX_YIELD = 0.1
"""Longest the engine waits for a busy UI before going on anyway (no deadlock, whatever the UI does)."""
TYPING_RATE = 2000.0
"""Most events a second the engine hands over while the user types (a key came within :data:`TYPING_QUIET`):
a stream faster than that (a local model on a fast machine; a hosted one sends tens to a few hundred) is read
at this pace meanwhile, so that the parsing and the drawing of it leave the keys the CPU; it catches up as
soon as the typing stops."""
TYPING_QUIET = 0.5
"""Seconds after the last key during which the user counts as typing."""
_LEAD = 0.005
"""Seconds the engine may run ahead of :data:`TYPING_RATE` before it sleeps (it sleeps in steps this long, not
once per event)."""


class LoopWatch:
    """Tells other threads whether an event loop is running callbacks, and since when.

    The loop's selector reports each wait for I/O (:class:`WatchedSelector`): between two waits the loop
    is working, holding the interpreter lock most of the time.
    """

    _watches: ClassVar[weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopWatch]] = (
        weakref.WeakKeyDictionary())

    def __init__(self) -> None:
        self._busy_since: float | None = None
        self._idle = threading.Event()
        self._idle.set()

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> LoopWatch | None:
        """The watch of a loop made by :func:`watched_loop`; ``None`` for any other loop."""
        return cls._watches.get(loop)

    def busy_for(self) -> float:
        """Seconds the loop has been working since it last waited (0 while it waits)."""
        since = self._busy_since
        return 0.0 if since is None else time.monotonic() - since

    def wait_idle(self, timeout: float) -> bool:
        """Block (with the interpreter lock released) until the loop waits again; False on timeout."""
        return self._idle.wait(timeout)

    def waiting(self) -> None:
        self._busy_since = None
        self._idle.set()

    def working(self) -> None:
        self._idle.clear()
        self._busy_since = time.monotonic()


class WatchedSelector(selectors.DefaultSelector):
    """The platform's selector, reporting each wait to a :class:`LoopWatch`."""

    def __init__(self, watch: LoopWatch) -> None:
        super().__init__()
        self.watch = watch

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        self.watch.waiting()
        try:
            return super().select(timeout)
        finally:
            self.watch.working()


def watched_loop() -> asyncio.AbstractEventLoop:
    """A new event loop for the UI whose business the engine can see (:meth:`LoopWatch.of`)."""
    watch = LoopWatch()
    loop = asyncio.SelectorEventLoop(WatchedSelector(watch))
    LoopWatch._watches[loop] = watch
    return loop


class EventPipe:
    """Carries items from the engine thread to a consumer on the UI loop, in batches.

    It also gives the UI priority. Both threads share one interpreter lock, which the interpreter hands
    over every 5 ms: a UI re-layout of 30 ms takes 60 ms or more while the engine parses a fast stream. So
    when the UI loop has been working for :data:`BUSY_AFTER` without a break (it is in the middle of a
    layout, say), :meth:`push` waits for the break with the lock released; the stream catches up a moment
    later. The UI loop's business is read from its :class:`LoopWatch`; a loop without one (tests run on
    plain loops) counts as busy when a drain scheduled on it has waited :data:`BUSY_AFTER`.
    """

    def __init__(self, ui_loop: asyncio.AbstractEventLoop, last_input: Callable[[], float] | None = None) -> None:
        """``last_input``: when the user last typed (``time.monotonic()``, 0 for never), read from the engine
        thread (see :data:`TYPING_RATE`)."""
        self._ui_loop = ui_loop
        self._last_input = last_input
        self._typed = 0.0  # the last key seen; until its quiet has passed, each push reads the clock (_pace)
        self._typing = False
        self._next_at = 0.0  # while the user types: when the next item is due at TYPING_RATE
        self._watch = LoopWatch.of(ui_loop)
        # No lock: the engine appends and then looks at ``_scheduled_at``; the drain clears ``_scheduled_at`` and
        # then takes what is there. Whatever the interleaving, an item appended is taken by the drain already
        # scheduled (it had not cleared the mark yet) or schedules the next one (it had). deque.append and
        # popleft are atomic, so the one engine thread and the UI thread never lose or reorder an item.
        self._pending: collections.deque[Any] = collections.deque()
        self._scheduled_at: float | None = None  # when the pending drain was scheduled
        self._drained = threading.Event()
        self._queue: asyncio.Queue[list[Any]] = asyncio.Queue()
        self.yields = 0
        """How many times the engine waited for a busy UI (for benchmarks)."""
        self.paced = 0
        """How many times the engine slept to keep to :data:`TYPING_RATE` (for tests and benchmarks)."""

    def push(self, item: Any) -> None:
        """Thread-safe for one pushing thread; wakes the UI loop at most once per batch; waits a little while
        the UI is busy, and keeps to :data:`TYPING_RATE` while the user types. Per item, only an append and a
        look at the UI loop's state and the last key: the clock is read when a drain is scheduled, the UI loop
        is working or a key came within :data:`TYPING_QUIET`."""
        self._pending.append(item)
        scheduled_at = self._scheduled_at
        if scheduled_at is None:
            self._scheduled_at = time.monotonic()
            self._drained.clear()
            with contextlib.suppress(RuntimeError):  # the UI loop is gone (the app is exiting)
                self._ui_loop.call_soon_threadsafe(self._drain)
        if self._ui_loop.is_closed():
            return
        watch = self._watch
        if watch is not None:
            if watch.busy_for() > BUSY_AFTER:  # no clock read while the UI loop waits
                self.yields += 1
                watch.wait_idle(MAX_YIELD)
        elif scheduled_at is not None and time.monotonic() - scheduled_at > BUSY_AFTER:
            self.yields += 1
            self._drained.wait(MAX_YIELD)
        if self._last_input is not None:
            typed = self._last_input()
            if typed != self._typed:  # a key since the last look
                self._typed, self._typing = typed, True
            if self._typing:
                self._pace(typed)

    def _pace(self, typed: float) -> None:
        """While the user types, no more than :data:`TYPING_RATE` items a second."""
        now = time.monotonic()
        if now - typed >= TYPING_QUIET:
            self._typing = False  # until the next key
            return
        self._next_at = max(self._next_at, now - _LEAD) + 1 / TYPING_RATE
        if self._next_at - now > _LEAD:
            self.paced += 1
            time.sleep(self._next_at - now)

    def _drain(self) -> None:
        self._scheduled_at = None  # first (see __init__)
        pending = self._pending
        batch = [pending.popleft() for _ in range(len(pending))]
        self._drained.set()
        if batch:  # empty when a push scheduled this drain after the previous one took its item
            self._queue.put_nowait(batch)

    async def batches(self) -> AsyncIterator[list[Any]]:
        """Batches of items until :data:`DONE` (not included)."""
        while True:
            batch = await self._queue.get()
            if batch[-1] is DONE:  # pushed last, so the last of its batch
                yield batch[:-1]
                return
            yield batch


async def pump(events: AsyncIterator[Any], pipe: EventPipe) -> None:
    """Engine side: forward every event into ``pipe``, then :data:`DONE`, however the stream ends."""
    try:
        async for event in events:
            pipe.push(event)
    finally:
        pipe.push(DONE)
