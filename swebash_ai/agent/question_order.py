"""Questions to a person come in call order: the line the calls of one model response ask in.

Contract:
    Every call of a response has a :class:`Place` (its position in the response). Whatever it asks a person —
    its approval, a further step while it runs (``fetch_url``'s redirect, through ``ToolContext.ask``),
    ``ask_user``'s question — goes through ``async with place.asking():``, which lets the question out only

    * once every earlier call has had its approval settled (asked and answered, not needed, refused by a rule
      or the policy, or the call ended: :meth:`Place.settled`), and
    * before the question of any later call that is waiting too (the lowest position goes first),

    and then holds the agent's approval lock (one question on screen at a time; the streaming response holds
    it too, so nothing is asked before the response has ended).

Why: calls run concurrently and some start while the response streams (``agent/batch.py``). A call its tool's
policy allows alone may start before an earlier call held back for approval, and an earlier call may be slow
to reach its question (a before_tool hook runs first): without the line, a later call's question could reach
the person before an earlier call's approval, and answers would be read against the wrong call.

A call that cannot ask at once says so (``tell``, set by the loop: :class:`~swebash_ai.agent.events.ToolCallWaiting`
with what it waits for, then :class:`~swebash_ai.agent.events.ToolCallRunning` when its turn comes), so a front
end does not show a call that only waits in line as running.

While a call waits in line or a person decides, it gives its slot (one of the batch's ``parallel``) back, and
takes one again before it goes on: a call that waits is not running, and the calls it waits for must be able
to run even when every slot belongs to a waiting call (with ``parallel = 1`` that is always the case).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from swebash_ai.agent.events import WaitingFor

Tell = Callable[["WaitingFor | None"], None]
"""Told what a call waits for when it cannot ask at once (again when that changes), and ``None`` when its turn
has come."""

__all__ = ["Place", "QuestionLine", "Slot"]


class Slot:
    """One of a batch's ``parallel`` slots as held by one call (``None``: no bound)."""

    def __init__(self, semaphore: asyncio.Semaphore | None = None) -> None:
        self._semaphore = semaphore
        self._held = False

    async def take(self) -> None:
        if self._semaphore is not None:
            await self._semaphore.acquire()
            self._held = True

    def give_back(self) -> None:
        """Release the slot if held (safe to call twice, and after a cancelled :meth:`take`)."""
        if self._held and self._semaphore is not None:
            self._held = False
            self._semaphore.release()


class QuestionLine:
    """Which call of a response may ask next (see the module docstring)."""

    def __init__(self, lock: asyncio.Lock, *, streaming: bool = False) -> None:
        self._lock = lock
        self.id = uuid.uuid4().hex[:12]
        """Names the response whose calls stand in this line."""
        self.streaming = streaming
        """The response still streams (holding the lock), as the batch says."""
        self._settled: list[bool] = []
        self._waiting: set[int] = set()
        self._changed = asyncio.Event()

    def add(self) -> int:
        """Make a place for the next call of the response; its position."""
        self._settled.append(False)
        return len(self._settled) - 1

    def place(self, position: int, slot: Slot | None = None) -> Place:
        return Place(self, position, slot or Slot())

    def settle(self, position: int) -> None:
        if not self._settled[position]:
            self._settled[position] = True
            self._change()

    def _change(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def _first(self, position: int) -> bool:
        return all(self._settled[:position]) and position == min(self._waiting)

    async def enter(self, position: int, tell: Tell | None = None) -> None:
        """Wait for the turn of ``position``, then for the approval lock; ``tell`` hears why while it waits."""
        self._waiting.add(position)
        said: WaitingFor | None = None

        def say(why: WaitingFor) -> WaitingFor:
            if why != said and tell is not None:
                tell(why)
            return why

        try:
            while True:
                if not self._first(position):
                    said = say("earlier_calls")
                    await self._changed.wait()
                    continue
                if self._lock.locked():
                    said = say("response" if self.streaming else "question")
                await self._lock.acquire()  # a response streaming, another question on screen: wait
                if self._first(position):
                    if said is not None and tell is not None:
                        tell(None)
                    return
                # An earlier call came to ask while this one waited for the lock (a running call's further
                # step): it goes first; it is next in the lock's queue, or will be told by the line.
                self._lock.release()
        except BaseException:
            self._waiting.discard(position)
            self._change()
            raise

    def leave(self, position: int) -> None:
        self._lock.release()
        self._waiting.discard(position)
        self._change()


class Place:
    """A call's place in its response's :class:`QuestionLine`, and the slot it runs in."""

    def __init__(self, line: QuestionLine, position: int, slot: Slot) -> None:
        self._line = line
        self._position = position
        self._slot = slot
        self.tell: Tell | None = None
        """Hears when the call waits to ask and when its turn comes (see the module docstring)."""

    @property
    def position(self) -> int:
        """The call's place among its response's calls, from 0."""
        return self._position

    @property
    def response_id(self) -> str:
        """Names the response (:attr:`QuestionLine.id`)."""
        return self._line.id

    @classmethod
    def alone(cls, lock: asyncio.Lock) -> Place:
        """A call with nothing before it (one the user ran): its questions only wait for the lock."""
        line = QuestionLine(lock)
        line.id = ""  # no response
        return line.place(line.add())

    @asynccontextmanager
    async def asking(self) -> AsyncIterator[None]:
        """Put one question to a person: in this call's turn, holding the approval lock. The slot is given back
        meanwhile and taken again after the answer (not when the question failed or was cancelled: the call
        then ends, and its batch gives back what it holds)."""
        self._slot.give_back()
        await self._line.enter(self._position, self.tell)
        try:
            yield
        finally:
            self._line.leave(self._position)
        await self._slot.take()

    def settled(self) -> None:
        """This call's own approval is settled (it runs now, or never will): later calls may ask."""
        self._line.settle(self._position)
