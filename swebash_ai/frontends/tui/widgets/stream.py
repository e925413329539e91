"""A streamed assistant reply in the chat pane: buffered, flushed a few times a second, complete blocks rendered.

A streamed reply is buffered and flushed to the screen at most every :data:`FLUSH_INTERVAL` seconds (and
never while the previous flush is still rendering), so a fast stream costs about a dozen re-layouts a
second instead of one per token. Only complete blocks are rendered (each once, by the reply's
:class:`~swebash_ai.frontends.tui.widgets.reply.AssistantMessage`, which draws lines rather than mounting a widget
per block); the unfinished block shows as plain text. Long replies are cut into several messages at
blank lines outside code fences (every :data:`SEGMENT_CHARS` characters or so), so they fold by chapter
like the rest of the conversation.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import TYPE_CHECKING, Protocol

from rich.cells import cell_len, chop_cells
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

from swebash_ai.frontends.tui.input_first import yield_to_input
from swebash_ai.safety.terminal_text import StreamSanitizer

if TYPE_CHECKING:
    from textual.app import App
    from textual.timer import TimerCallback
    from textual.widget import AwaitMount

    from swebash_ai.frontends.tui.widgets.reply import AssistantMessage

FLUSH_INTERVAL = 0.2
"""Seconds between two flushes of a streamed reply to the screen (when the UI keeps up)."""
MAX_BACKOFF = 0.8
"""Most seconds added to the flush interval while the UI is lagging."""
SEGMENT_CHARS = 1500
"""A streamed reply starts a new message widget at the first paragraph break after this many characters."""
COMMIT_CHARS = 4000
"""Most Markdown rendered by one flush (more when one block is longer). A stream faster than the
screen (a local model, a resumed burst) is shown in steps of this size, :data:`CATCH_UP_INTERVAL` apart,
so no single step keeps the UI from a keypress for long."""
CATCH_UP_INTERVAL = 0.05
"""Seconds between two flushes while complete blocks are still waiting to be shown."""
TAIL_CHARS = 4000
"""Most characters of plain text shown below the rendered blocks."""

_FENCE = re.compile(r"^ {0,3}(```|~~~)", re.MULTILINE)


def _open_fence(text: str) -> bool:
    """True when ``text`` ends inside a fenced code block."""
    return len(_FENCE.findall(text)) % 2 == 1


class ReplyTail(Widget):
    """The unfinished last block of a reply being streamed, shown as plain text until it is complete.

    It changes at every flush: wrapped here by a greedy word wrap and drawn line by line (as a Static its
    re-wrap cost 5-13 ms of every re-layout)."""

    DEFAULT_CSS = """
    ReplyTail {
        height: auto;
    }
    """

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self._text = text
        self._wrapped: tuple[int, list[str]] | None = None
        self._style: Style | None = None

    @property
    def text(self) -> str:
        return self._text

    def update(self, text: str) -> None:
        if text != self._text:
            self._text = text
            self._wrapped = None
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

    Fragments are buffered and flushed on a timer. Only *complete* blocks (up to the last blank line
    outside a code fence) go to the reply's segments, each block rendered once; the unfinished
    block is shown as plain text in a :class:`ReplyTail` below them.
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

    def write(self, fragment: str) -> None:
        if not (fragment := self.sanitiser.feed(fragment)):
            return
        self._buffer.append(fragment)
        if self._timer is None:
            # Back off while the UI is busy (the last tick came late): input goes before fresh text.
            self._schedule(FLUSH_INTERVAL + min(MAX_BACKOFF, 4 * self._lag))

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
        if self._timer is None and self._last_boundary(self._tail):
            self._schedule(CATCH_UP_INTERVAL)  # behind the stream: the next step soon

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
                await self._show_tail(behind=left or bool(self._last_boundary(self._tail)))
            return left

    @classmethod
    def _next_cut(cls, text: str, final: bool) -> int:
        """Where the next commit ends: the last block boundary within :data:`COMMIT_CHARS`, else the first
        one after it; at the end of the reply, the end of the text."""
        if len(text) <= COMMIT_CHARS:
            return len(text) if final else cls._last_boundary(text)
        cut = cls._last_boundary(text[:COMMIT_CHARS]) or cls._first_boundary(text, COMMIT_CHARS)
        return cut or (len(text) if final else 0)

    @staticmethod
    def _first_boundary(text: str, start: int) -> int:
        """Index just after the first blank line of ``text`` after ``start``, outside a code fence (0: none)."""
        found = text.find("\n\n", start)
        while found >= 0:
            cut = found + 2
            if not _open_fence(text[:cut]):
                return cut
            found = text.find("\n\n", cut)
        return 0

    @staticmethod
    def _last_boundary(text: str) -> int:
        """Index just after the last blank line of ``text`` outside a code fence (0: none)."""
        end = len(text)
        while True:
            found = text.rfind("\n\n", 0, end)
            if found < 0:
                return 0
            cut = found + 2
            if not _open_fence(text[:cut]):
                return cut
            end = found

    async def _commit(self, markdown: str) -> None:
        if not markdown.strip() and not self.segments:
            return
        if not self.segments or len(self._text) >= SEGMENT_CHARS:
            from swebash_ai.frontends.tui.widgets.reply import AssistantMessage

            segment = AssistantMessage(classes="-continued" if self.segments else "")
            self.segments.append(segment)
            self._text = ""
            await self.pane.append(segment)
        self._text += markdown
        await self.segments[-1].append(markdown)

    async def _show_tail(self, *, behind: bool) -> None:
        """Show what is not rendered yet as plain text below the rendered blocks.

        Behind the stream, that is the start of what comes next: it fills the view, and the blocks the
        next steps render are mostly above it, off screen (rendering them where they show costs far more:
        measured 20 ms for one highlighted code block). Caught up, it is the unfinished block, of which
        the end shows when it is long (a long code block still shows its newest lines).
        """
        if not self._tail.strip():
            if self._tail_widget is not None:
                self._tail_widget.display = False
            return
        shown = self._tail[:TAIL_CHARS].rstrip("\n") if behind else tail_excerpt(self._tail)
        if self._tail_widget is None:
            self._tail_widget = ReplyTail(shown)
            await self.pane.mount(self._tail_widget)
        else:
            self._tail_widget.update(shown)
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
