"""The terminal text sanitiser: one row per attack or per text that must survive unchanged."""

from __future__ import annotations

import sys
import time
import unicodedata

import pytest

from swebash_ai.safety.terminal_text import (
    HOLD_MAX,
    MARKER,
    StreamSanitizer,
    _mark,
    has_controls,
    has_invisible,
    hidden_in,
    safe,
    sanitize,
)

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


# --- invisible characters: shown as markers, never dropped ---------------------------------------------
RLO, ZWJ, ZWNJ = "\u202e", "\u200d", "\u200c"
ENGLAND = "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f"

# (text, prose result, visible result, number marked in prose, in visible)
INVISIBLE = [
    # Bidi override: "Trojan Source", a name or a command that reads backwards.
    (f"rm -rf ~/{RLO}txt.exe", "rm -rf ~/<U+202E>txt.exe", "rm -rf ~/<U+202E>txt.exe", 1, 1),
    # Embeddings and the pop that ends them, each shown.
    ("a\u202ab\u202bc\u202cd\u202de", "a<U+202A>b<U+202B>c<U+202C>d<U+202D>e", None, 4, 4),
    # Isolates (U+2066-2069), the ones compilers warn about.
    ("x\u2066y\u2067z\u2068w\u2069", "x<U+2066>y<U+2067>z<U+2068>w<U+2069>", None, 4, 4),
    # Direction marks, the Arabic letter mark included.
    ("a\u200eb\u200fc\u061cd", "a<U+200E>b<U+200F>c<U+061C>d", None, 3, 3),
    # Zero-width space and word joiner: "git hub.com" and "github.com" look alike.
    ("git\u200bhub.com", "git<U+200B>hub.com", None, 1, 1),
    ("a\u2060b\u2061c\u2062d\u2063e\u2064f", "a<U+2060>b<U+2061>c<U+2062>d<U+2063>e<U+2064>f", None, 5, 5),
    # A byte order mark in the middle of a word.
    ("cu\ufeffrl", "cu<U+FEFF>rl", None, 1, 1),
    # Joiners between ASCII letters hide nothing a reader needs, yet change the text: shown.
    (f"r{ZWJ}m", "r<U+200D>m", None, 1, 1),
    (f"r{ZWNJ}m", "r<U+200C>m", None, 1, 1),
    # A joiner at either end of the text has no pair to join.
    (f"{ZWJ}😀", "<U+200D>😀", None, 1, 1),
    # Emoji ZWJ sequences read the same with their joiners: kept in prose, marked in a command.
    (f"👩{ZWJ}💻", f"👩{ZWJ}💻", "👩<U+200D>💻", 0, 1),
    # A joiner after a kept variation selector still joins (🏳️‍🌈); in a command both are marked.
    (f"🏳\ufe0f{ZWJ}🌈 and 👨{ZWJ}👩{ZWJ}👧", f"🏳\ufe0f{ZWJ}🌈 and 👨{ZWJ}👩{ZWJ}👧", None, 0, 4),
    # Persian uses the non-joiner inside words.
    (f"می{ZWNJ}خواهم", f"می{ZWNJ}خواهم", "می<U+200C>خواهم", 0, 1),
    # Two joiners in a row: the pair is not a sequence.
    (f"😀{ZWJ}{ZWJ}😀", "😀<U+200D><U+200D>😀", None, 2, 2),
    # Tag characters smuggle a hidden text ("ignore" in tags); a subdivision flag's few tags are kept in prose.
    ("hi\U000e0069\U000e0067\U000e006e", "hi<U+E0069><U+E0067><U+E006E>", None, 3, 3),
    (f"flag {ENGLAND}!", f"flag {ENGLAND}!", None, 0, 6),
    # Line and paragraph separators, a soft hyphen, other format characters.
    ("a\u2028b\u2029c\u00add\u0600e\U0001d173f", "a<U+2028>b<U+2029>c<U+00AD>d<U+0600>e<U+1D173>f", None, 5, 5),
    # Inside a terminal control string, removed with it; the escapes of visible mode mark it.
    (f"{ESC}]0;{RLO}{BEL}ok", "ok", "\\x1b]0;<U+202E>\\x07ok", 0, 1),
    # Hangul fillers draw as blank: a name that looks empty, or "admin" and "admin<filler>" alike; marked everywhere.
    ("x\u3164y", "x<U+3164>y", None, 1, 1),
    ("\u115f\u1160 \uffa0", "<U+115F><U+1160> <U+FFA0>", None, 3, 3),
    # Even after a Hangul syllable, where a filler could belong to old conjoining jamo: it still reads as blank.
    ("한\u3164", "한<U+3164>", None, 1, 1),
    # One variation selector after an emoji makes it an emoji (❤️): kept in prose, marked in a command.
    ("I \u2764\ufe0f it", "I \u2764\ufe0f it", "I \u2764<U+FE0F> it", 0, 1),
    # A keycap starts with an ASCII digit, # or *: its selector is kept too.
    ("press 1\ufe0f\u20e3 or #\ufe0f\u20e3", "press 1\ufe0f\u20e3 or #\ufe0f\u20e3", None, 0, 2),
    # The text style selector on a CJK-compatible or math symbol, an ideographic selector on a kanji: glyph choice.
    ("\u2603\ufe0e \u845b\U000e0100", "\u2603\ufe0e \u845b\U000e0100", "\u2603<U+FE0E> \u845b<U+E0100>", 0, 2),
    # After an ASCII letter a selector modifies nothing: it only makes two equal-looking names differ.
    ("ad\ufe0fmin", "ad<U+FE0F>min", None, 1, 1),
    # A run of selectors after one emoji carries hidden bytes: the first may style it, the rest are shown.
    ("😀\U000e0101\U000e0142\ufe01", "😀\U000e0101<U+E0142><U+FE01>", None, 2, 3),
    # A selector after a space, at the start of the text, or after another invisible character has no base.
    (" \ufe0f", " <U+FE0F>", None, 1, 1),
    ("\ufe0fx", "<U+FE0F>x", None, 1, 1),
    ("\u3164\ufe0f", "<U+3164><U+FE0F>", None, 2, 2),
    # Ordinary text around them is not touched; a look-alike of a marker stays text.
    ("héllo → 世界 <U+202E>", "héllo → 世界 <U+202E>", None, 0, 0),
]


@pytest.mark.parametrize(("text", "prose", "shown", "prose_marked", "shown_marked"), INVISIBLE)
def test_invisible_characters_are_marked(
    text: str, prose: str, shown: str | None, prose_marked: int, shown_marked: int
) -> None:
    in_prose = sanitize(text)
    assert (in_prose.text, in_prose.marked) == (prose, prose_marked)
    visible = sanitize(text, visible=True)
    if shown is not None:
        assert visible.text == shown
    assert visible.marked == shown_marked
    assert not has_invisible(visible.text)  # a marker is plain ASCII
    assert has_invisible(text) == (shown_marked > 0)


def test_every_unicode_format_character_is_marked() -> None:
    """The hand-written class covers Python's Unicode table: a newer table adding a Cf character fails here."""
    missing = [
        f"U+{c:04X}"
        for c in range(sys.maxunicode + 1)
        if unicodedata.category(chr(c)) == "Cf" and sanitize(f"a{chr(c)}b", visible=True).marked != 1
    ]
    assert missing == []


def test_markers_are_found_by_marker() -> None:
    shown = safe(f"ls {RLO}x\u200by", visible=True)
    assert MARKER.findall(shown) == ["<U+202E>", "<U+200B>"]


INVISIBLE_STREAM = (
    f"a{RLO}b 👩{ZWJ}💻 {ENGLAND} r{ZWJ}m {ESC}]0;t{BEL}😀{ZWJ}{ESC}[2J😀 x\U000e0069{ZWNJ}"
    f" 🏳\ufe0f{ZWJ}🌈 1\ufe0f\u20e3 a\ufe0f 😀\U000e0101\U000e0102 \u3164"
)


@pytest.mark.parametrize("visible", [False, True])
def test_every_split_of_invisible_text_gives_the_whole_text_result(visible: bool) -> None:
    """A joiner or a flag cut from what follows is decided when it comes, as for the whole text."""
    whole = sanitize(INVISIBLE_STREAM, visible=visible)
    for cut in range(len(INVISIBLE_STREAM) + 1):
        stream = StreamSanitizer(visible=visible)
        out = stream.feed(INVISIBLE_STREAM[:cut]) + stream.feed(INVISIBLE_STREAM[cut:]) + stream.finish()
        assert (out, stream.removed, stream.marked) == (whole.text, whole.removed, whole.marked), cut
    stream = StreamSanitizer(visible=visible)
    out = "".join(stream.feed(c) for c in INVISIBLE_STREAM) + stream.finish()
    assert out == whole.text


@pytest.mark.parametrize(("value", "expected"), [
    ("plain", (0, 0)),  # nothing hidden
    ("a\x1b]0;t\x07b\x1b[2K", (2, 0)),  # an OSC and a CSI: one sequence each
    ({"command": "x\u202ey", "timeout": None, "env": ["\u200b", "\x1b[1m"]}, (1, 2)),  # every string, nested
    ({"k\u200bey": 1}, (0, 1)),  # a key is text the tool gets too
])
def test_hidden_in_counts_every_string_of_the_arguments_once(value: object, expected: tuple[int, int]) -> None:
    assert hidden_in(value) == expected


def test_the_prose_fast_path_is_exact() -> None:
    """A selector kept in prose skips the marking pass: every short mix of bases and selectors must read as the
    marking pass would make it (a wrong shortcut would let a selector through unmarked)."""
    alphabet = ["a", "1", "#", " ", "\n", "\u00a0", "😀", "葛", "\ufe0f", "\ufe0e", "\U000e0100", ZWJ, "\u3164"]
    for first in alphabet:
        for second in alphabet:
            for third in alphabet:
                text = first + second + third
                assert sanitize(text).text == _mark(text, False)[0], repr(text)
