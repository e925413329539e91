"""Input before output: while a keypress is on its way to the widget that handles it, the screen waits.

A key travels through several message queues: the app's, the focused widget's, then those of the widgets
its messages bubble up to (the prompt's text area tells the prompt bar it changed). Each hop is a step of
the event loop. While a fast stream keeps the screen busy, a repaint gets scheduled between two hops (one
costs 20-30 ms while the chat follows a long reply) and the key waits behind it. That repaint does not
even show the key: the next one does.

So from the moment a key (or a paste) reaches the app until every queue on its way is empty, repaints are
held (Textual's batch update) and a streamed reply commits no new text (:func:`yield_to_input`). The hold
never lasts more than :data:`HOLD_MAX`, so a user typing without pause still sees the screen repainted;
the repaint after it shows the key. Measured with ``bench/tui_stream.py``.

When the hold ends with the key handled, the widget that took it (the prompt) is drawn at once, in the
layout the screen has (:meth:`InputFirst.echo`): the next repaint of a streaming chat includes a layout pass
of 20-30 ms of CPU, which on a busy host (two CPU-bound processes on two cores) made the key's echo wait
60-100 ms. The layout pass follows at the next refresh, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from textual.app import App
from textual.message_pump import MessagePump
from textual.widget import Widget

HOLD_MAX = 0.03
"""Most seconds repaints wait for a keypress to be handled."""
POLL = 0.001
"""Seconds between two looks at the queues a keypress goes through."""
REPAINT_WITHIN = 0.1
"""After a hold, the next key holds nothing until the screen has been repainted, or this many seconds have
passed: keys typed without pause cannot keep the screen from repainting."""


class InputFirst:
    """Holds repaints from a key's arrival until it is handled (see the module's docstring)."""

    def __init__(self, app: App[Any]) -> None:
        self._app = app
        self._batch = contextlib.ExitStack()
        self._deadline = 0.0
        self._check: asyncio.TimerHandle | asyncio.Handle | None = None
        self._released = asyncio.Event()
        self._released.set()
        self._released_at = 0.0
        self._repainted = True  # since the last hold ended
        self.holds = 0
        """How many keys started a hold (for tests and benchmarks)."""
        self.echoes = 0
        self.last_input = 0.0
        """When the last key or paste reached the app (``time.monotonic``)."""
        """How many times the focused widget was drawn ahead of the screen (see :meth:`echo`)."""

    @property
    def holding(self) -> bool:
        return self._check is not None

    def hold(self) -> None:
        """A key or a paste has just reached the app (call on the app's loop)."""
        self.last_input = time.monotonic()
        if self._check is not None:
            return  # the hold that is on covers it; its deadline stands
        if not self._repainted and time.monotonic() - self._released_at < REPAINT_WITHIN:
            return  # the screen has not had its turn since the last hold
        self.holds += 1
        self._batch.enter_context(self._app.batch_update())
        self._released.clear()
        self._deadline = time.monotonic() + HOLD_MAX
        self._check = asyncio.get_running_loop().call_soon(self._look)

    def _look(self) -> None:
        if time.monotonic() >= self._deadline or self._handled():
            self.release()
        else:
            self._check = asyncio.get_running_loop().call_later(POLL, self._look)

    def _handled(self) -> bool:
        """Every queue a key goes through is empty: the app's, the screen's, the focused widget's and its
        ancestors' (where its messages bubble)."""
        app = self._app
        pumps: list[MessagePump] = [app]
        with contextlib.suppress(Exception):  # no screen yet, or the app is closing
            pumps.append(app.screen)
        node: Any = app.focused
        while isinstance(node, Widget):
            pumps.append(node)
            node = node.parent
        return all(pump.message_queue_size == 0 for pump in pumps)

    def release(self) -> None:
        """End the hold now (also when the app closes)."""
        if self._check is None:
            return
        self._check.cancel()
        self._check = None
        self._batch.close()
        self.echo()
        self._released.set()
        self._released_at = time.monotonic()
        self._repainted = False
        self._app.call_after_refresh(self._repaint_done)

    def echo(self) -> None:
        """Draw the focused widget now if it changed (it took the key), without waiting for the layout pass
        the rest of the screen may need; the other changes are drawn at the next refresh, as usual."""
        app = self._app
        if app._batch_count:
            return
        with contextlib.suppress(Exception):  # no screen yet, or the app is closing: nothing to draw
            screen = app.screen
            widget = app.focused
            if widget is None or widget not in screen._dirty_widgets or not screen.is_current:
                return
            screen._dirty_widgets.discard(widget)
            screen._compositor.update_widgets({widget})
            app._display(screen, screen._compositor.render_update(screen_stack=app._background_screens))
            self.echoes += 1

    def _repaint_done(self) -> None:
        self._repainted = True

    async def wait(self) -> None:
        """Return once no key is being handled (at once when none is)."""
        await self._released.wait()


async def yield_to_input(app: App[Any]) -> None:
    """A pause between two steps of long work on the UI loop: a key gets through, and if one is being
    handled, the work waits until it is (the screen waits then too).

    Two steps of the loop: the terminal's input thread hands a key over with ``run_coroutine_threadsafe``,
    whose first step creates the task that posts it; only the second posts it (and starts the hold)."""
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    gate = getattr(app, "input_first", None)
    if isinstance(gate, InputFirst):
        await gate.wait()
