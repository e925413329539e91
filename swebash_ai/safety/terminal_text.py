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

:attr:`Sanitized.removed` counts the sequences and characters removed, so a caller can say so.

Invisible characters that change how text reads are shown, never dropped and never obeyed: each becomes a
marker such as ``<U+202E>`` (:data:`MARKER` finds them, for a front end to draw in a style of their own),
counted in :attr:`Sanitized.marked`. They are the bidirectional embeddings, overrides, isolates and marks
(``U+202A-202E``, ``U+2066-2069``, ``U+200E``, ``U+200F``, ``U+061C``: "Trojan Source", where ``rm -rf ~/
<U+202E>txt.exe`` reads as a harmless name), the zero-width characters (``U+200B-200D``, ``U+2060-2064``,
``U+FEFF``), the tag characters that can smuggle a hidden text (``U+E0000-E007F``), the line and paragraph
separators (``U+2028``, ``U+2029``), every other Unicode format (Cf) character, the Hangul fillers
(``U+115F``, ``U+1160``, ``U+3164``, ``U+FFA0``: letters drawn as blank, which make a name look empty or like
another) and the variation selectors (``U+FE00-FE0F``, ``U+E0100-E01EF``: a run of them after one emoji can
carry a hidden text). Dropping them would make what is shown differ from what runs or is copied; a marker
shows both. In prose (``visible=False``) three uses stay as they are, because nothing reads differently: a
zero-width joiner or non-joiner between two non-ASCII characters (emoji sequences such as 👩‍💻, Persian and
Indic words; a kept variation selector may stand before it, as in 🏳️‍🌈), the tags of a subdivision flag (🏴
and at most six tags ending with ``U+E007F``), and one variation selector right after a character it may
modify: a non-ASCII character that is not a space nor itself invisible, or a keycap's ``0-9 # *`` (❤️, 1️⃣).
A selector after ASCII text, a space or another selector is marked; which non-ASCII characters really take
one is not checked (a table for little gain: one selector changes a glyph, never the words). With
``visible=True`` (commands, paths, URLs, approvals, tool output) every one is marked.

The function is pure and cheap: text without any of these (nearly all of it) costs one regex search and is
returned as is.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# Any character that may start something to remove (tab and newline are ordinary text).
_ANY_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Unicode format (Cf) characters as of Unicode 15 (a test checks Python's table holds no other), and the line and
# paragraph separators: invisible, yet they reorder, join, hide or break the text around them.
# Two kinds that are not Cf join them: the Hangul fillers (letters that render as blank, used to make
# identifiers that look empty or alike) and the variation selectors (which pick a glyph for the character before
# them, and whose long runs can carry a hidden text after a single emoji).
_VARIATION_BMP = "\ufe00-\ufe0f"
_VARIATION_ASTRAL = "\U000e0100-\U000e01ef"
_UNVARIED_BMP_CLASS = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb"
)
_FORMAT_BMP_CLASS = _UNVARIED_BMP_CLASS + _VARIATION_BMP
_FORMAT_CLASS = _FORMAT_BMP_CLASS + (
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
    + _VARIATION_ASTRAL
)
_FORMAT = re.compile(f"[{_FORMAT_CLASS}]")
# The search above is slow on non-ASCII text (its ranges beyond U+FFFF are checked one by one: 3-4x the cost of
# the control search). _has_format looks for the plane-0 ones, and for the others only when a character falls
# in the two spans that hold them all (emoji and CJK lie outside both): a two-range class is much cheaper.
_FORMAT_BMP = re.compile(f"[{_FORMAT_BMP_CLASS}]")
_ASTRAL_SPANS = re.compile("[\U000110bd-\U0001d17a\U000e0001-\U000e01ef]")
_JOINERS = "\u200c\u200d"
_VARIATION = re.compile(f"[{_VARIATION_BMP}{_VARIATION_ASTRAL}]")
# ASCII characters a variation selector modifies (the keycap emoji 1️⃣ #️⃣ *️⃣); other ASCII takes none.
_ASCII_VARIED = frozenset("0123456789#*")
_FLAG_START = "\U0001f3f4"
# A subdivision flag (England: 🏴 + "gbeng" in tags + cancel tag); what prose keeps of the tag characters.
_FLAG = "\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{1,6}"
_PROSE_FORMAT = re.compile(f"{_FLAG}\U000e007f|[{_FORMAT_CLASS}]")
# What may still become a kept joiner or flag when more text comes (prose only, checked at the end of a piece).
_FORMAT_UNFINISHED = re.compile(f"(?:[{_JOINERS}]|\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{{0,6}})\\Z")

MARKER = re.compile(r"<U\+[0-9A-F]{4,5}>")
"""A marker :func:`sanitize` puts for an invisible character (text that looks like one matches too)."""

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
    """Text made safe for a terminal, how many control sequences or characters were removed (or shown as
    escapes), and how many invisible characters were shown as markers."""

    text: str
    removed: int
    marked: int = 0


def _visible(sequence: str) -> str:
    return "".join(_SHOWN.get(c, f"\\x{ord(c):02x}") if _ANY_CONTROL.match(c) else c for c in sequence)


def _has_format(text: str) -> bool:
    return not text.isascii() and (
        _FORMAT_BMP.search(text) is not None
        or (_ASTRAL_SPANS.search(text) is not None and _FORMAT.search(text) is not None)
    )


def _takes_selector(char: str) -> bool:
    """Whether a variation selector right after ``char`` may be kept in prose: a keycap's ASCII, or a non-ASCII
    character that is neither a space nor invisible itself."""
    return char in _ASCII_VARIED or (char > "\x7f" and not char.isspace() and not _FORMAT.match(char))


def _needs_marks(text: str, visible: bool) -> bool:
    """Whether :func:`_mark` may change ``text`` (False is exact: nothing to mark, the fast path)."""
    if visible or text.isascii():
        return _has_format(text)
    # A selector kept in prose (❤️) is common in answers: it must not send the whole text down the slow path, so
    # the one plane-0 search goes on past each one (a selector at the very start is left to _mark's ``before``).
    match = _FORMAT_BMP.search(text)
    while match is not None:
        i = match.start()
        if not i or _VARIATION.match(text, i) is None or not _takes_selector(text[i - 1]):
            return True
        match = _FORMAT_BMP.search(text, i + 1)
    return _ASTRAL_SPANS.search(text) is not None and _FORMAT.search(text) is not None


def _marker(char: str) -> str:
    return f"<U+{ord(char):04X}>"


def _mark(text: str, visible: bool, before: str = "", end: int | None = None) -> tuple[str, int]:
    """``text[:end]`` with its invisible characters as markers, and how many; ``before`` is the character
    that came just before ``text``, and ``text[end:]`` what follows (both only looked at)."""
    end = len(text) if end is None else end
    marked = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal marked
        char = match.group()
        if len(char) > 1:  # a whole subdivision flag (prose only)
            return char
        if not visible and char in _JOINERS:
            i = match.start()
            prev = text[i - 1] if i else before
            after = text[i + 1] if i + 1 < len(text) else ""
            if (prev > "\x7f" and (not _FORMAT.match(prev) or _VARIATION.match(prev))  # 🏳️‍🌈: a selector, a joiner
                    and after > "\x7f" and not _FORMAT.match(after)):
                return char  # inside an emoji sequence or a word of a script that joins: reads the same
        elif not visible and _VARIATION.match(char):
            i = match.start()
            prev = text[i - 1] if i else before
            if _takes_selector(prev):
                return char  # one selector on a character it can modify (❤️, 1️⃣, 葛󠄀): how it is drawn
        marked += 1
        return _marker(char)

    pattern = _FORMAT if visible else _PROSE_FORMAT
    parts: list[str] = []
    last = 0
    for match in pattern.finditer(text, 0, end):
        parts += [text[last:match.start()], replace(match)]
        last = match.end()
    parts.append(text[last:end])
    return "".join(parts), marked


def sanitize(text: str, *, visible: bool = False) -> Sanitized:
    """``text`` without terminal control sequences and characters, its invisible characters shown as
    markers (see the module's docstring).

    Args:
        text: Any text.
        visible: Show each removed sequence as escapes (``\\x1b]0;title\\x07``) instead of dropping it, and
            mark every invisible character: for a command or a file name, where the user must see that
            something is there.
    """
    if _ANY_CONTROL.search(text) is None and not _needs_marks(text, visible):
        return Sanitized(text, 0)
    cleaned, removed = _remove_controls(text, visible)
    if not _needs_marks(cleaned, visible):
        return Sanitized(cleaned, removed)
    shown, marked = _mark(cleaned, visible)
    return Sanitized(shown, removed, marked)


def _remove_controls(text: str, visible: bool) -> tuple[str, int]:
    if _ANY_CONTROL.search(text) is None:
        return text, 0
    removed = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal removed
        sequence = match.group()
        if sequence == "\r" and text.startswith("\n", match.end()):
            return ""  # CR LF: a line end, not an overwrite
        removed += 1
        return _visible(sequence) if visible else ""

    return _SEQUENCE.sub(replace, text), removed


def safe(text: str, *, visible: bool = False) -> str:
    """:func:`sanitize`'s text alone."""
    return sanitize(text, visible=visible).text


def has_controls(text: str) -> bool:
    """True when ``text`` holds anything :func:`sanitize` would remove (a CR LF line end does not count)."""
    return _ANY_CONTROL.search(text.replace("\r\n", "\n")) is not None


def has_invisible(text: str) -> bool:
    """True when ``text`` holds an invisible character that ``sanitize(text, visible=True)`` would mark."""
    return _has_format(text)


def invisible_markers(text: str) -> list[str]:
    """The distinct invisible characters of ``text`` as the markers ``sanitize(text, visible=True)`` puts for
    them (``<U+202E>``), in order of first appearance: for a reason that names them."""
    return list(dict.fromkeys(_marker(m.group()) for m in _FORMAT.finditer(text)))


def hidden_in(value: object) -> tuple[int, int]:
    """(terminal control sequences, invisible characters) in every string of ``value``: a text, or the
    JSON-like arguments of a tool call (keys too), each string counted once."""
    if isinstance(value, str):
        found = sanitize(value, visible=True)
        return found.removed, found.marked
    items: list[object] = []
    if isinstance(value, dict):
        items = [*value.keys(), *value.values()]
    elif isinstance(value, list | tuple):
        items = list(value)
    controls = invisible = 0
    for item in items:
        c, i = hidden_in(item)
        controls, invisible = controls + c, invisible + i
    return controls, invisible


def marked_note(count: int) -> str:
    """What an approval says when what it shows holds ``count`` invisible characters."""
    return (f"holds {count} invisible or direction-changing character{'' if count == 1 else 's'}, shown as "
            "<U+....>: it may not read as it runs")


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
        self.marked = 0
        """Invisible characters shown as markers so far."""
        self._held = ""
        self._tail = ""  # cleaned text whose markers wait for the next character (a joiner, a flag's tags)
        self._before = ""  # the last character whose markers were decided, looked at by a joiner after it

    def feed(self, piece: str) -> str:
        """The safe text of ``piece`` that can be shown now."""
        return self._format(self._controls(piece), final=False)

    def finish(self) -> str:
        """The text still held back (a sequence left unfinished is removed); the stream can start again."""
        held, self._held = self._held, ""
        shown = self._format(self._clean(held), final=True)
        self._before = ""
        return shown

    def _format(self, cleaned: str, *, final: bool) -> str:
        """Markers for the invisible characters of cleaned text; in prose, a joiner or a flag's tags at the
        end wait for the character after them."""
        text = self._tail + cleaned if self._tail else cleaned
        if not text or (not _needs_marks(text, self.visible) and (self.visible or not text.endswith(_FLAG_START))):
            if text:
                self._before = text[-1]
            return text
        end = len(text)
        if not final and not self.visible and (unfinished := _FORMAT_UNFINISHED.search(text)):
            end = unfinished.start()
        shown, marked = _mark(text, self.visible, self._before, end)
        self.marked += marked
        if end:
            self._before = text[end - 1]
        self._tail = text[end:]
        return shown

    def _controls(self, piece: str) -> str:
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

    def _clean(self, text: str) -> str:
        if not text:
            return ""
        cleaned, removed = _remove_controls(text, self.visible)
        self.removed += removed
        return cleaned
