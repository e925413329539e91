"""The terminal text sanitiser: one row per attack or per text that must survive unchanged."""

from __future__ import annotations

import time

import pytest

from swebash_ai.safety.terminal_text import HOLD_MAX, StreamSanitizer, has_controls, safe, sanitize

ESC, BEL, ST = "\x1b", "\x07", "\x1b\\"

# (text, removed-mode result, number removed)
CASES = [
    # Plain text, tabs, newlines and non-ASCII are text.
    ("plain text", "plain text", 0),
    ("tab\tand\nnewline", "tab\tand\nnewline", 0),
    ("héllo → 世界 🙂", "héllo → 世界 🙂", 0),
    # CR LF is a line end, not an overwrite.
    ("a\r\nb", "a\nb", 0),
    # OSC 0/2: window title, BEL or ST terminated.
    (f"{ESC}]0;pwned{BEL}hi", "hi", 1),
    (f"{ESC}]2;pwned{ST}hi", "hi", 1),
    # OSC 52: a clipboard write with an attacker's command.
    (f"{ESC}]52;c;cm0gLXJmIH4K{BEL}ok", "ok", 1),
    # OSC 8: a link whose label lies; the label stays, the link goes.
    (f"{ESC}]8;;https://evil.example{ST}https://good.example{ESC}]8;;{ST}", "https://good.example", 2),
    # CSI: screen wipe, cursor home, cursor moves, line erase, colours.
    (f"{ESC}[2J{ESC}[Hclean", "clean", 2),
    (f"a{ESC}[3Ab{ESC}[10;20Hc{ESC}[2Kd", "abcd", 3),
    (f"{ESC}[31mred{ESC}[0m", "red", 2),
    (f"{ESC}[?1049h{ESC}[?25l", "", 2),
    # A CSI cut short by something that is not a parameter: the introducer and parameters go.
    (f"{ESC}[12\nnext", "\nnext", 1),
    # 8-bit CSI and OSC (C1 controls in the text).
    ("\x9b2Jwiped", "wiped", 1),
    ("\x9d0;title\x9cafter", "after", 1),
    ("\x90qpayload\x9cz", "z", 1),
    # DCS, APC, PM, SOS.
    (f"{ESC}Pq#0;2;0;0;0{ST}x", "x", 1),
    (f"{ESC}_apc{ST}{ESC}^pm{ST}{ESC}Xsos{ST}y", "y", 3),
    # Unterminated OSC: ends at the next control character (the newline is kept) or the end.
    (f"{ESC}]0;never ends\nvisible", "\nvisible", 1),
    (f"start{ESC}]0;never ends", "start", 1),
    # Single-character ESC sequences: save cursor, full reset, charset, DECALN (fills the screen).
    (f"{ESC}7{ESC}c{ESC}(B{ESC}#8z", "z", 4),
    # A lone ESC, and one at the end.
    (f"a{ESC}", "a", 1),
    # CR overwrite: both texts stay visible; backspaces that would erase count too.
    ("ls -l\rrm -rf ~", "ls -lrm -rf ~", 1),
    ("safe\b\b\b\bevil", "safeevil", 4),
    # Other C0 controls and DEL; a stray ST or C1.
    ("a\x00b\x07c\x0bd\x0ce\x7ff\x85g\x9ch", "abcdefgh", 7),
    # A NUL inside a sequence does not let it run on.
    (f"{ESC}]0;a\x00b{BEL}", "b", 3),
]


@pytest.mark.parametrize(("text", "expected", "removed"), CASES)
def test_sanitize_removes(text: str, expected: str, removed: int) -> None:
    cleaned = sanitize(text)
    assert cleaned.text == expected
    assert cleaned.removed == removed
    assert has_controls(text) == (removed > 0)


@pytest.mark.parametrize(("text", "expected", "removed"), CASES)
def test_visible_keeps_the_text_and_shows_every_sequence(text: str, expected: str, removed: int) -> None:
    shown = sanitize(text, visible=True)
    assert shown.removed == removed
    assert not has_controls(shown.text)
    if removed == 0:
        assert shown.text == text.replace("\r\n", "\n")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"{ESC}]0;title{BEL}x", "\\x1b]0;title\\x07x"),  # the title attack is there to read
        ("ls\rrm -rf ~", "ls\\rrm -rf ~"),  # an overwrite shows as \r
        ("\x9b2J", "\\x9b2J"),  # 8-bit CSI
        ("echo hi\x7f", "echo hi\\x7f"),
    ],
)
def test_visible_form(text: str, shown: str) -> None:
    assert safe(text, visible=True) == shown


def test_safe_is_the_text_of_sanitize() -> None:
    assert safe(f"{ESC}]0;x{BEL}ok") == "ok"


HOSTILE = (
    f"Title{ESC}]0;pwned{BEL} clip{ESC}]52;c;ZWNobyBoaQ=={ST} link {ESC}]8;;http://evil{ST}good{ESC}]8;;{ST}"
    f"\r\n{ESC}[2J{ESC}[H wiped {ESC}[3A up\rover\b\x9b31m red \x9d2;t\x9c {ESC}7{ESC}(B{ESC}]0;open"
    "\nend\r"
)


@pytest.mark.parametrize("visible", [False, True])
def test_every_split_of_a_hostile_text_gives_the_whole_text_result(visible: bool) -> None:
    """A sequence cut anywhere between two pieces never leaks half-sanitised, and the pieces add up to the
    result of the whole text."""
    whole = sanitize(HOSTILE, visible=visible)
    for cut in range(len(HOSTILE) + 1):
        stream = StreamSanitizer(visible=visible)
        out = stream.feed(HOSTILE[:cut]) + stream.feed(HOSTILE[cut:]) + stream.finish()
        assert out == whole.text, cut
        assert stream.removed == whole.removed, cut


def test_character_by_character_stream() -> None:
    stream = StreamSanitizer()
    pieces = [stream.feed(c) for c in HOSTILE]
    out = "".join(pieces) + stream.finish()
    assert out == sanitize(HOSTILE).text
    assert all(ESC not in p and "\x9b" not in p for p in pieces)


def test_an_endless_sequence_is_not_held_without_bound() -> None:
    stream = StreamSanitizer()
    assert stream.feed(f"before{ESC}]0;") == "before"
    for _ in range(100):
        assert stream.feed("x" * 1000) == ""
        assert len(stream._held) <= HOLD_MAX
    assert stream.feed(f"{BEL}after") == "after"
    assert stream.removed == 1


def test_an_endless_sequence_shown_visibly_loses_nothing() -> None:
    stream = StreamSanitizer(visible=True)
    payload = "x" * (HOLD_MAX + 10)
    out = stream.feed(f"{ESC}]0;{payload}") + stream.feed(f"yz{BEL}after") + stream.finish()
    assert out == f"\\x1b]0;{payload}yz\\x07after" == safe(f"{ESC}]0;{payload}yz{BEL}after", visible=True)


def test_clean_text_is_cheap() -> None:
    chunk = "A typical streamed delta of an answer, with `code` and **bold**.\n" * 4
    stream = StreamSanitizer()
    start = time.perf_counter()
    for _ in range(10_000):
        stream.feed(chunk)
    per_chunk = (time.perf_counter() - start) / 10_000
    assert per_chunk < 50e-6, per_chunk  # measured about 1 µs here; generous for a loaded machine
