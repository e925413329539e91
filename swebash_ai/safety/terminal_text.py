"""Text safe for a terminal: what the model, a tool, an MCP server, a file name or a web page wrote never
drives the user's terminal.

A terminal obeys what it is sent: ``ESC ] 0 ; ... BEL`` renames the window, ``ESC ] 52 ; c ; ...`` writes
the clipboard, ``ESC [ 2 J`` wipes the screen, cursor moves and carriage returns overwrite what the user
reads (a harmless command drawn over a dangerous one), ``ESC ] 8`` makes a link whose label lies. Any text
a prompt injection can reach can carry them, so every way out to the screen passes through
:func:`sanitize` (or :class:`StreamSanitizer` for text that arrives in pieces).

What counts as control, removed whole (or, with ``visible=True``, shown as ``\\x1b``-style escapes):

* escape sequences: CSI (``ESC [`` ... final byte), the control strings OSC, DCS, SOS, PM and APC
  (``ESC ] P X ^ _``) up to BEL or ST (``ESC \\``); one left open ends at the first control character
  (a newline included) or at the end of the text; every other ``ESC`` sequence (``ESC 7``, ``ESC c``,
  ``ESC ( B``...), and a lone ``ESC``;
* the same in their 8-bit forms (C1 ``0x9b`` CSI, ``0x9d`` OSC, ``0x90`` DCS, ``0x98 0x9e 0x9f``), and every
  other C1 control (``0x80-0x9f``);
* C0 controls but tab and newline (BEL, backspace, form feed, a carriage return not followed by a
  newline...), and DEL. A CR LF pair is a line end and becomes ``\\n`` without being counted.

:attr:`Sanitized.removed` counts the sequences and characters removed, so a caller can say so. The
function is pure and cheap: text without any control character (nearly all of it) costs one regex
search and is returned as is.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# Any character that may start something to remove (tab and newline are ordinary text).
_ANY_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

# A control string's payload: printable text only; any control character ends it (a terminator or not).
_PAYLOAD = r"[^\x00-\x1f\x7f-\x9f]*"
_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI, with its final byte or cut short
    rf"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]){_PAYLOAD}(?:\x07|\x1b\\|\x9c)?"  # OSC DCS SOS PM APC
    r"|\x1b[ -/]*[0-~]?"  # other ESC sequences (ESC 7, ESC c, ESC ( B...), a lone ESC
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # any other C0 or C1 control, DEL
)
# What may still grow into a longer sequence when more text comes (checked at the end of a piece).
_UNFINISHED = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*|[\]PX^_]" + _PAYLOAD + r"|[ -/]*)"
    r"|\x9b[0-?]*[ -/]*|[\x90\x98\x9d\x9e\x9f]" + _PAYLOAD + r"|\r"
)
# A control string still open: an ESC right after it may be the first half of its terminator (ESC \\).
_OPEN_STRING = re.compile(r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])" + _PAYLOAD)
_STARTERS = ("\x1b", "\x9b", "\x90", "\x98", "\x9d", "\x9e", "\x9f", "\r")
_SHOWN = {"\r": "\\r", "\t": "\t", "\n": "\n"}

HOLD_MAX = 4096
"""Most characters a :class:`StreamSanitizer` holds back while a sequence is unfinished; beyond, the middle
of the sequence is dropped (it is removed anyway), or with ``visible`` what is held is shown at once, so the
hold stays small."""


class Sanitized(NamedTuple):
    """Text made safe for a terminal, and how many control sequences or characters were removed."""

    text: str
    removed: int


def _visible(sequence: str) -> str:
    return "".join(_SHOWN.get(c, f"\\x{ord(c):02x}") if _ANY_CONTROL.match(c) else c for c in sequence)


def sanitize(text: str, *, visible: bool = False) -> Sanitized:
    """``text`` without terminal control sequences and characters (see the module's docstring).

    Args:
        text: Any text.
        visible: Show each removed sequence as escapes (``\\x1b]0;title\\x07``) instead of dropping it: for
            a command or a file name, where the user must see that something is there.
    """
    if _ANY_CONTROL.search(text) is None:
        return Sanitized(text, 0)
    removed = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal removed
        sequence = match.group()
        if sequence == "\r" and text.startswith("\n", match.end()):
            return ""  # CR LF: a line end, not an overwrite
        removed += 1
        return _visible(sequence) if visible else ""

    return Sanitized(_SEQUENCE.sub(replace, text), removed)


def safe(text: str, *, visible: bool = False) -> str:
    """:func:`sanitize`'s text alone."""
    return sanitize(text, visible=visible).text


def has_controls(text: str) -> bool:
    """True when ``text`` holds anything :func:`sanitize` would remove (a CR LF line end does not count)."""
    return _ANY_CONTROL.search(text.replace("\r\n", "\n")) is not None


def removed_note(count: int, where: str) -> str:
    """What a front end says when it removed ``count`` sequences from ``where`` ("this answer")."""
    return f"{count} terminal control sequence{' was' if count == 1 else 's were'} removed from {where}"


def _last_start(text: str, end: int | None = None) -> int:
    return max(text.rfind(c, 0, end) for c in _STARTERS)


class StreamSanitizer:
    """:func:`sanitize` for text that arrives in pieces (a streamed answer, a command's output).

    A sequence may be cut between two pieces (an ``ESC`` ends one delta, ``]0;title BEL`` starts the
    next): what could still be the start of a sequence is held back until the next piece, or
    :meth:`finish`, decides. The pieces put together equal ``sanitize`` of the whole text.
    """

    def __init__(self, *, visible: bool = False) -> None:
        self.visible = visible
        self.removed = 0
        """Sequences and characters removed so far."""
        self._held = ""

    def feed(self, piece: str) -> str:
        """The safe text of ``piece`` that can be shown now."""
        text = self._held + piece if self._held else piece
        if _ANY_CONTROL.search(text) is None:
            self._held = ""
            return text
        start = _last_start(text)
        if start >= 0 and _UNFINISHED.fullmatch(text, start):
            if text[start:] == "\x1b" and (before := _last_start(text, start)) >= 0 and _OPEN_STRING.fullmatch(
                text, before, start
            ):
                start = before  # hold the string too: ESC \\ ends it, any other ESC starts a sequence
            text, held = text[:start], text[start:]
            if len(held) > HOLD_MAX and self.visible:  # shown now: the rest reads the same as plain text
                text, held = text + held, ""
            elif len(held) > HOLD_MAX:  # the middle of an endless sequence: removed anyway, no need to keep it
                lead = 2 if held[0] == "\x1b" else 1
                held = held[:lead] + held[-64:]
            self._held = held
        else:
            self._held = ""
        return self._clean(text)

    def finish(self) -> str:
        """The text still held back (a sequence left unfinished is removed); the stream can start again."""
        held, self._held = self._held, ""
        return self._clean(held)

    def _clean(self, text: str) -> str:
        if not text:
            return ""
        cleaned = sanitize(text, visible=self.visible)
        self.removed += cleaned.removed
        return cleaned.text
