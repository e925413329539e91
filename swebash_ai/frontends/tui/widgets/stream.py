"""A streamed assistant reply in the chat pane: buffered, flushed a few times a second, complete blocks rendered.

A streamed reply is buffered and flushed to the screen on a timer, never while the previous flush is still
rendering. Only complete blocks are rendered (each once, by the reply's
:class:`~swebash_ai.frontends.tui.widgets.reply.AssistantMessage`, which draws lines rather than mounting a widget
per block); the unfinished block shows as plain text. Long replies are cut into several messages between
two blocks (every :data:`SEGMENT_CHARS` characters or so), so they fold by chapter like the rest of the
conversation. Blocks are cut where the renderer cuts them (widgets/blocks.py): a reply streamed in any
chunks renders as the same text shown at once.

The cadence adapts to what a flush costs. A flush with the re-layout that shows it takes 20-40 ms of the UI
loop's CPU whatever it commits, so the next one comes no sooner than :data:`PACE` times the last one's cost
(and :data:`FLUSH_INTERVAL`): a stream faster than the screen is shown in fewer, larger steps, and the UI
thread sleeps most of the time. A process that sleeps is one the scheduler wakes at once for a keypress on
a busy host; one that renders flat out waits its turn behind every CPU-bound process.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import TYPE_CHECKING, Protocol

from rich.cells import cell_len, chop_cells
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.reactive import Reactive
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

from swebash_ai.frontends.tui.input_first import yield_to_input
from swebash_ai.frontends.tui.widgets.blocks import block_starts
from swebash_ai.safety.terminal_text import StreamSanitizer

if TYPE_CHECKING:
    from textual.app import App
    from textual.timer import TimerCallback
    from textual.widget import AwaitMount

    from swebash_ai.frontends.tui.widgets.reply import AssistantMessage

FLUSH_INTERVAL = 0.2
"""Fewest seconds between two flushes of a streamed reply to the screen."""
PACE = 4.0
"""The next flush waits at least this many times what the last one cost (from its start to the frame that
showed it): rendering a stream takes at most about a fifth of the UI loop's time, however fast it comes."""
MAX_INTERVAL = 1.0
"""Most seconds between two flushes, however slow the last one was (the reply must be seen to move)."""
MAX_BACKOFF = 0.8
"""Most seconds added to the flush interval while the UI is lagging."""
SEGMENT_CHARS = 4000
"""A streamed reply starts a new message widget at the first block boundary after this many characters."""
COMMIT_CHARS = 16000
"""Most Markdown rendered by one flush (more when one block is longer). A stream faster than the screen (a
local model, a resumed burst) is shown in steps of up to this size; each block is rendered in its own step
of the UI loop, a keypress going between two."""
CATCH_UP_INTERVAL = 0.05
"""Seconds between two steps of the final flush, when the reply has ended with text still to show."""
TAIL_CHARS = 4000
"""Most characters of plain text shown below the rendered blocks."""


class ReplyTail(Widget):
    """The unfinished last block of a reply being streamed, shown as plain text until it is complete.

    It changes at every flush: wrapped here by a greedy word wrap and drawn line by line (as a Static its
    re-wrap cost 5-13 ms of every re-layout)."""

    DEFAULT_CSS = """
    ReplyTail {
        height: auto;
    }
    """

    virtual_size = Reactive(Size(0, 0), layout=False)
    """Textual lays the screen out again when a widget's virtual size changes; this one's changes with its
    height, in the very pass that laid it out, so that second pass (a re-render of the chat, 15-30 ms
    while a reply streams) would find nothing to move."""

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self._text = text
        self._wrapped: tuple[int, list[str]] | None = None
        self._style: Style | None = None

    @property
    def text(self) -> str:
        return self._text

    def update(self, text: str) -> None:
        """Show ``text``; the screen is laid out again only if its height changes (a repaint of the tail
        costs a fraction of a re-layout of the chat)."""
        if text == self._text:
            return
        width = self.size.width
        height = len(self._lines(width)) if width else -1
        self._text = text
        self._wrapped = None
        if width and len(self._lines(width)) == height:
            self.refresh()
        else:
            self.refresh(layout=True)

    def _lines(self, width: int) -> list[str]:
        if self._wrapped is None or self._wrapped[0] != width:
            self._wrapped = (width, wrap_plain(self._text, width))
        return self._wrapped[1]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines(width))

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._style = None

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        lines = self._lines(width)
        if self._style is None:
            self._style = self.rich_style
        style = self._style
        if y >= len(lines):
            return Strip.blank(width, style)
        return Strip([Segment(lines[y], style)]).extend_cell_length(width, style)


def wrap_plain(text: str, width: int) -> list[str]:
    """``text`` word-wrapped at ``width`` cells; a word longer than a line is cut, blank lines are kept."""
    width = max(1, width)
    lines: list[str] = []
    for line in text.expandtabs(4).split("\n"):
        while cell_len(line) > width:
            if line.isascii():
                cut = line.rfind(" ", 0, width + 1)
                head, line = (line[:cut], line[cut + 1:]) if cut > 0 else (line[:width], line[width:])
            else:
                head, *rest = chop_cells(line, width)
                line = "".join(rest)
            lines.append(head.rstrip(" "))
            line = line.lstrip(" ")
            if not line:
                break
        else:
            lines.append(line)
    return lines


class ReplyPane(Protocol):
    """Where a reply is shown (:class:`~swebash_ai.frontends.tui.widgets.chat.ChatPane` is one): its segments are
    appended as the pane's messages, the plain tail is mounted below them, and the flushes run on its timers."""

    @property
    def app(self) -> App[object]: ...

    def set_timer(self, delay: float, callback: TimerCallback | None = None) -> Timer: ...

    def append(self, widget: Widget) -> AwaitMount: ...

    def mount(self, *widgets: Widget) -> AwaitMount: ...


class ReplyStream:
    """One assistant reply being streamed.

    Fragments are buffered and flushed on a timer. Only *complete* blocks (those a later line cannot
    change, see :func:`~swebash_ai.frontends.tui.widgets.blocks.block_starts`) go to the reply's segments,
    each block rendered once; the unfinished block is shown as plain text in a :class:`ReplyTail` below them.
    Writing a fragment costs the same however long the reply is; a flush reads the unshown text up to
    :data:`COMMIT_CHARS` and one block.
    """

    def __init__(self, pane: ReplyPane) -> None:
        self.pane = pane
        self.segments: list[AssistantMessage] = []
        self.sanitiser = StreamSanitizer()  # a sequence may be cut between two deltas
        self._buffer: list[str] = []
        self._tail = ""  # text after the last complete block
        self._text = ""  # Markdown committed to the current segment
        self._tail_widget: ReplyTail | None = None
        self._lock = asyncio.Lock()
        self._timer: Timer | None = None
        self._due = 0.0
        self._lag = 0.0
        self._cost = 0.0  # seconds the last flush took, up to the frame that showed it
        self.flushes = 0
        """Flushes so far (for tests and benchmarks)."""

    def write(self, fragment: str) -> None:
        if not (fragment := self.sanitiser.feed(fragment)):
            return
        self._buffer.append(fragment)
        if self._timer is None:
            self._schedule(self._interval())

    def _interval(self) -> float:
        """Seconds until the next flush: :data:`PACE` times the last flush's cost, at least
        :data:`FLUSH_INTERVAL`; more while the UI is lagging (the last tick came late), since input goes
        before fresh text."""
        paced = min(MAX_INTERVAL, max(FLUSH_INTERVAL, PACE * self._cost))
        return paced + min(MAX_BACKOFF, 4 * self._lag)

    def _schedule(self, interval: float) -> None:
        self._due = time.monotonic() + interval
        self._timer = self.pane.set_timer(interval, self._tick)

    @property
    def tail_widget(self) -> ReplyTail | None:
        """The plain-text tail below the rendered blocks, while there is one."""
        return self._tail_widget

    @property
    def text(self) -> str:
        """Everything received so far, shown or not."""
        return "".join(seg.source for seg in self.segments) + self._tail + "".join(self._buffer)

    async def _tick(self) -> None:
        self._timer = None
        self._lag = max(0.0, time.monotonic() - self._due)
        await self.flush()
        if self._timer is None and self._complete_block(self._tail):
            self._schedule(self._interval())  # behind the stream: the next step, paced

    async def close(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if held := self.sanitiser.finish():
            self._buffer.append(held)
        left = True
        while left:
            left = await self.flush(final=True)
            if left:
                await asyncio.sleep(CATCH_UP_INTERVAL / 2)  # let a keypress through between two steps

    async def flush(self, final: bool = False) -> bool:
        """Show the next complete blocks, at most about :data:`COMMIT_CHARS`; True if text is left over."""
        await yield_to_input(self.pane.app)  # a key being handled goes first
        async with self._lock:
            started = time.monotonic()
            self.flushes += 1
            self._tail += "".join(self._buffer)
            self._buffer.clear()
            cut = self._next_cut(self._tail, final)
            if cut:
                done, self._tail = self._tail[:cut], self._tail[cut:]
                await self._commit(done)
            left = bool(self._tail) if final else False
            if final and not left:
                await self._drop_tail()
            else:
                await self._show_tail(behind=left or self._complete_block(self._tail))
            self.pane.app.call_after_refresh(self._shown, started)
            return left

    def _shown(self, started: float) -> None:
        """The frame showing a flush is out: what it cost sets the pace of the next ones."""
        self._cost = time.monotonic() - started

    @staticmethod
    def _complete_block(text: str) -> bool:
        """True when ``text`` starts with a complete block (one more flush has something to render)."""
        return next(block_starts(text), 0) > 0

    @staticmethod
    def _next_cut(text: str, final: bool) -> int:
        """Where the next commit ends: the last block boundary within :data:`COMMIT_CHARS`, else the first
        one after it; at the end of the reply, the end of the text (in steps of that size)."""
        last = 0
        for start in block_starts(text):
            if start > COMMIT_CHARS:
                return last or start
            last = start
        if final and (len(text) <= COMMIT_CHARS or not last):
            return len(text)
        return last

    async def _commit(self, markdown: str) -> None:
        """Add complete blocks to the reply: to its last segment, and to new ones each time a segment has
        :data:`SEGMENT_CHARS`. The new segments render their blocks before they are mounted (all together,
        at the end), so the commit costs one layout pass, not one more for segments shown empty."""
        if not markdown.strip() and not self.segments:
            return
        from swebash_ai.frontends.tui.widgets.reply import AssistantMessage

        if not self.segments:  # the first: mounted at once, it is what the next ones are rendered like
            first = AssistantMessage()
            self.segments.append(first)
            self._text = ""
            await self.pane.append(first)
        like = self.segments[-1]
        pieces: list[tuple[AssistantMessage, int, int]] = []  # (segment, start, end) of ``markdown``
        fresh: list[AssistantMessage] = []
        cuts = [0, *block_starts(markdown), len(markdown)]
        for start, end in itertools.pairwise(cuts):
            if len(self._text) >= SEGMENT_CHARS:
                segment = AssistantMessage(classes="-continued")
                self.segments.append(segment)
                fresh.append(segment)
                self._text = ""
            if pieces and pieces[-1][0] is self.segments[-1]:
                pieces[-1] = (self.segments[-1], pieces[-1][1], end)
            else:
                pieces.append((self.segments[-1], start, end))
            self._text += markdown[start:end]
        for segment, start, end in pieces:
            if segment is like:
                await segment.append(markdown[start:end])
            else:
                await segment.render_ahead(markdown[start:end], like)
        mounts = [self.pane.append(segment) for segment in fresh]
        for mount in mounts:
            await mount

    async def _show_tail(self, *, behind: bool) -> None:
        """Show what is not rendered yet as plain text below the rendered blocks.

        Behind the stream, that is the start of what comes next: it fills the view, and the blocks the
        next steps render are mostly above it, off screen (rendering them where they show costs far more:
        measured 20 ms for one highlighted code block). Caught up, it is the unfinished block, of which
        the end shows when it is long (a long code block still shows its newest lines).
        """
        if not self._tail.strip():
            if self._tail_widget is not None and self._tail_widget.display:
                self._tail_widget.display = False
            return
        shown = self._tail[:TAIL_CHARS].rstrip("\n") if behind else tail_excerpt(self._tail)
        if self._tail_widget is None:
            self._tail_widget = ReplyTail(shown)
            await self.pane.mount(self._tail_widget)
        else:
            self._tail_widget.update(shown)
            if not self._tail_widget.display:
                self._tail_widget.display = True

    async def _drop_tail(self) -> None:
        if self._tail_widget is not None:
            widget, self._tail_widget = self._tail_widget, None
            await widget.remove()


def tail_excerpt(text: str) -> str:
    """``text`` without its final newlines; when longer than :data:`TAIL_CHARS`, an ellipsis line and its
    last whole lines within that many characters (a long code block still shows its newest lines)."""
    text = text.rstrip("\n")
    if len(text) <= TAIL_CHARS:
        return text
    start = len(text) - TAIL_CHARS
    newline = text.find("\n", start)
    if newline >= 0:
        start = newline + 1
    return "…\n" + text[start:]
