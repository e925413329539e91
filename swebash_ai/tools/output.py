"""Command output as the model and the user see it: bounded, decoded, stripped of escape sequences.

Contract:
    :class:`Capture` keeps at most its cap (the first half, and a ring holding the last half); :func:`budget`
    splits one cap between stdout and stderr; :class:`Live` forwards cleaned text to a display, coalesced to
    at most ~20 calls a second; :func:`clean_output` removes escape sequences and control characters (a
    command's output must never drive the user's terminal).
"""

from __future__ import annotations

import asyncio
import codecs
import logging
import re
import time
from collections.abc import Callable

__all__ = ["Capture", "Live", "budget", "clean_output"]

log = logging.getLogger(__name__)

_LIVE_INTERVAL = 0.05  # at most ~20 on_output calls a second
_LIVE_MAX = 16_384  # characters of live output per call; a flood shows its latest part

# CSI, OSC (BEL or ST terminated), DCS/SOS/PM/APC, other ESC sequences, then stray C0/C1 controls
# (a lone ESC included). Tab, newline and carriage return are handled apart.
_ESCAPES = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b\[[0-?]*[ -/]*[@-~]|\x1b[ -/]*[0-~]"
    r"|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
)
_COMPLETE_ESCAPE = re.compile(
    r"\x1b(?:\][^\x07\x1b]*(?:\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|\[[0-?]*[ -/]*[@-~]|[ -/]*[0-~])"
)
_CUT_CHAR = re.compile(rb"\A[\x80-\xbf]{1,3}")


def clean_output(text: str) -> str:
    """Remove escape sequences and control characters; keep what a terminal would finally show per line.

    Linear in the length of the text, whatever the length of its lines (a minified bundle, a base64 blob, a
    JSON answer on one line): every pattern here starts at a character it names, and the carriage returns are
    resolved per line in plain code (a pattern "anything, then a carriage return" is tried from every
    position of a line without one: quadratic).
    """
    text = _ESCAPES.sub("", text)
    if "\r" not in text:
        return text
    lines = text.replace("\r\n", "\n").split("\n")
    for i, line in enumerate(lines):
        if "\r" in line:  # "10%\r20%" -> "20%": what a terminal would show
            shown = line.rstrip("\r")
            lines[i] = shown[shown.rfind("\r") + 1 :]
    return "\n".join(lines)


def _utf8_start(data: bytes) -> bytes:
    """``data`` without the continuation bytes (at most 3) of a character cut off at its start."""
    return _CUT_CHAR.sub(b"", data, count=1)


class Capture:
    """Bounded bytes: the first half of the cap, and a ring holding the last half."""

    def __init__(self, cap: int) -> None:
        self.head_cap, self.tail_cap = cap // 2, cap - cap // 2
        self.head, self.tail, self.seen = bytearray(), bytearray(), 0

    def add(self, data: bytes) -> None:
        self.seen += len(data)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if len(data) >= self.tail_cap:
            self.tail = bytearray(data[len(data) - self.tail_cap :])
        elif data:
            self.tail += data
            if len(self.tail) > self.tail_cap:
                del self.tail[: len(self.tail) - self.tail_cap]

    def text(self, limit: int) -> tuple[str, int]:
        """The kept output cut to ``limit`` bytes (head and tail), decoded and cleaned; and bytes cut."""
        kept = len(self.head) + len(self.tail)
        if kept == self.seen:  # nothing dropped: head + tail is contiguous
            data = bytes(self.head + self.tail)
            if len(data) <= limit:
                return clean_output(data.decode("utf-8", "replace")), 0
            h = limit // 2
            head, tail = data[:h], data[len(data) - (limit - h) :]
        else:
            h = min(len(self.head), limit // 2)
            t = min(len(self.tail), limit - h)
            head, tail = bytes(self.head[:h]), bytes(self.tail[len(self.tail) - t :])
        cut = self.seen - len(head) - len(tail)
        head_text = codecs.getincrementaldecoder("utf-8")("replace").decode(head)  # holds back a split char
        tail_text = _utf8_start(tail).decode("utf-8", "replace")
        return f"{clean_output(head_text)}\n[… {cut} bytes cut …]\n{clean_output(tail_text)}", cut


def budget(a: int, b: int, cap: int) -> tuple[int, int]:
    """Split ``cap`` bytes between two streams of ``a`` and ``b`` bytes: a small one keeps everything."""
    if a + b <= cap:
        return a, b
    a_share = a if a <= cap // 2 else max(cap // 2, cap - b)
    return a_share, cap - a_share


class Live:
    """Forwards decoded, cleaned output to a callback, coalesced to at most one call per interval."""

    def __init__(self, sink: Callable[[str], None], loop: asyncio.AbstractEventLoop) -> None:
        self.sink, self.loop = sink, loop
        self.decoders = {n: codecs.getincrementaldecoder("utf-8")("replace") for n in ("out", "err")}
        self.pending: list[str] = []
        self.size, self.last, self.carry = 0, 0.0, ""  # carry: an escape sequence split across reads
        self.timer: asyncio.TimerHandle | None = None

    def feed(self, stream: str, data: bytes) -> None:
        if len(data) > _LIVE_MAX:  # only the latest part of a flood is worth showing
            data = _utf8_start(data[len(data) - _LIVE_MAX :])
            self.decoders[stream].reset()
        self.pending.append(text := self.decoders[stream].decode(data))
        self.size += len(text)
        if self.size > 2 * _LIVE_MAX:
            joined = "".join(self.pending)
            self.pending, self.size, self.carry = ["…" + joined[-_LIVE_MAX:]], _LIVE_MAX + 1, ""
        wait = self.last + _LIVE_INTERVAL - time.monotonic()
        if wait <= 0:
            self.flush()
        elif self.timer is None:
            self.timer = self.loop.call_later(wait, self.flush)

    def flush(self, final: bool = False) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        text = self.carry + "".join(self.pending)
        self.pending, self.size, self.carry = [], 0, ""
        if len(text) > _LIVE_MAX:
            text = "…" + text[len(text) - _LIVE_MAX :]
        esc = text.rfind("\x1b")
        if not final and esc >= 0 and len(text) - esc < 256 and not _COMPLETE_ESCAPE.match(text, esc):
            text, self.carry = text[:esc], text[esc:]
        self.last = time.monotonic()
        if text := clean_output(text):
            try:
                self.sink(text)
            except Exception:  # a broken display must not break the command
                log.exception("on_output callback failed")
