"""Secrets by content: credentials found in text that is about to reach a model, whatever it came from.

Contract:
    :func:`mask_secrets` returns a :class:`Scan`: the text with every private key block replaced by
    :data:`KEY_MARKER` and every value in a known credential format replaced by ``[masked:KIND]``, and how
    many of each were found. :func:`holds_private_key` says whether a text holds private key material;
    :func:`is_key_file` whether a file's text is essentially a key (``read_file`` refuses those like a
    protected file). :func:`remove_private_keys` blanks key blocks but keeps the line count (for search);
    :func:`private_key_lines` says which lines that changes, for a reader that shows only some of them.

Why:
    The path rules know credential files by name, and every list of names is incomplete: a key copied to
    ``notes/old-laptop.txt``, a token in ``~/.bashrc``, a password in a command's output. So everything a
    tool returns is scanned once before the model sees it (the loop does it for every tool result).

    The rules are a data table, each with its source: most come from the public rule sets of gitleaks
    (``config/gitleaks.toml``, rule ids given) and detect-secrets (plugin names given). The detect-secrets
    package itself was not taken: its scanner runs every plugin per line with entropy filters (slow on
    a 1 MiB result) and its plugins flag hashes and high-entropy strings that are everywhere in code.
    A header that merely mentions ``PRIVATE KEY`` (a parser's source code) is not a key: material must
    follow it. Documented example values (``AKIAIOSFODNN7EXAMPLE``) and placeholders (``${TOKEN}``,
    ``<password>``, ``changeme``) are left alone, as gitleaks' allowlists do.

Speed: every pattern is compiled once and only run when one of its literal hints is in the text (a
``str`` find, far faster than a regex scan); ``bench/false_masks.py`` measures it and the false masks.

Pure: standard library only.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from swebash_ai.safety.key_body import bytes_may_hold_key_body, key_body_spans
from swebash_ai.safety.secret_formats import FORMATS
from swebash_ai.safety.secret_rules import GENERIC, MARKER_PREFIX, SERVICES, Rule
from swebash_ai.words import count

RULES: tuple[Rule, ...] = SERVICES + FORMATS + GENERIC

_WORD = re.compile(r"\w")

__all__ = [
    "KEY_MARKER",
    "MARKER_PREFIX",
    "RULES",
    "KeyLines",
    "Rule",
    "Scan",
    "blank_private_keys",
    "holds_private_key",
    "is_key_file",
    "mask_secrets",
    "private_key_lines",
    "remove_private_keys",
]

KEY_MARKER = "[private key removed]"

# ``-----BEGIN RSA PRIVATE KEY-----``, ``OPENSSH``, ``EC``, ``DSA``, ``ENCRYPTED``, bare ``PRIVATE KEY``,
# ``PGP PRIVATE KEY BLOCK``, and the ssh.com form ``---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----``.
_KEY_BEGIN = re.compile(r"-{4,5} ?BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)? ?-{4,5}")
_KEY_END = re.compile(r"-{4,5} ?END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)? ?-{4,5}")
# Key material: a base64 run (PEM lines are 64 characters, OpenSSH 70). Within reach of the header, before
# its END: a parser's source that names the header has code there, not 40 base64 characters in a row.
_MATERIAL = re.compile(r"[A-Za-z0-9+/]{40,}")
_MATERIAL_REACH = 600
# PuTTY key files keep the private part in a ``Private-Lines: N`` section (followed by key material; a line
# number prefix is allowed: read_file and search show lines numbered).
_PUTTY = re.compile(r"Private-Lines: *\d+[ \t]*\r?\n(?:\s*\d+[|:\-] )?[A-Za-z0-9+/=]{40,}[\s\S]*?(?=Private-MAC:|\Z)")





@dataclass(frozen=True)
class Scan:
    """What :func:`mask_secrets` found. ``kinds`` counts masked values per rule kind."""

    text: str
    kinds: dict[str, int]
    private_keys: int

    @property
    def masked(self) -> int:
        return sum(self.kinds.values()) + self.private_keys

    def note(self) -> str:
        """One line for the model: what was masked and why the value is not there."""
        parts = []
        if self.private_keys:
            parts.append(f"{count(self.private_keys, 'private key block')} replaced by {KEY_MARKER!r}")
        values = sum(self.kinds.values())
        if values:
            parts.append(f"{count(values, 'value')} in credential formats ({', '.join(sorted(self.kinds))}) shown as "
                         "[masked:KIND]")
        return ("(note: " + "; ".join(parts) + ". They are kept from the model on purpose; do not try to read them "
                "another way. If the user needs them, they can look themselves.)")


def _key_blocks(text: str) -> list[tuple[int, int]]:
    """Spans of private key blocks that hold key material (from the header to its END, or to the end)."""
    spans: list[tuple[int, int]] = []
    pos = 0
    while True:
        head = _KEY_BEGIN.search(text, pos)
        if head is None:
            break
        stop = _block_stop(text, head)
        if stop is None:
            pos = head.end()  # a header named in code or docs, not a key
            continue
        spans.append((head.start(), stop))
        pos = stop
    return spans


def _block_stop(text: str, head: re.Match[str]) -> int | None:
    """Where the block a header opens ends (its END line, or the end of ``text``); ``None`` when no key material
    follows the header within reach, before its END: then it is no key."""
    end = _KEY_END.search(text, head.end())
    limit = min(head.end() + _MATERIAL_REACH, end.start() if end else len(text))
    if _MATERIAL.search(text, head.end(), limit) is None:
        return None
    return end.end() if end else len(text)


KEY_LINE_PATTERNS = (_KEY_BEGIN.pattern, _KEY_END.pattern)
"""The header and the END line of a private key block (regex sources), for a reader that follows blocks across a
file it reads in parts (:mod:`swebash_ai.tools.key_ranges`)."""


def opens_key_block(text: str) -> bool:
    """True when ``text`` begins with a private key header that :func:`_key_blocks` takes for a block: key material
    follows within reach, before its END. ``text`` must run at least that reach past the header."""
    head = _KEY_BEGIN.match(text)
    return head is not None and _block_stop(text, head) is not None


def holds_private_key(text: str) -> bool:
    """True when ``text`` holds a private key block with key material (not a mere mention of the header), or
    a key's body printed without its header (:mod:`swebash_ai.safety.key_body`)."""
    headed = "PRIVATE KEY" in text or "Private-Lines:" in text
    if headed and (_key_blocks(text) or _PUTTY.search(text) is not None):
        return True
    return bool(key_body_spans(text))


def is_key_file(text: str) -> bool:
    """True when a file's text is essentially private keys (what is left without them is a few lines of labels).

    Such a file is refused whole, like a protected file; a source file that embeds a test key is read with
    the block replaced.
    """
    if not holds_private_key(text):
        return False
    rest = text
    for start, stop in reversed(_key_blocks(text)):
        rest = rest[:start] + rest[stop:]
    rest = _PUTTY.sub("", rest)
    for start, stop in reversed(key_body_spans(rest)):
        rest = rest[:start] + rest[stop:]
    return len(rest.strip()) < 400


def remove_private_keys(text: str) -> tuple[str, int]:
    """Key blocks replaced by :data:`KEY_MARKER`, followed by as many newlines as they spanned (line numbers
    after them stay right); returns the text and the number of blocks. Bodies printed without their header
    (``tail -n +2 key.pem``) count as blocks too."""
    text, blocks = _remove_keys(text)
    return text, len(blocks)


@dataclass(frozen=True)
class KeyLines:
    """Where a text's private keys are, by line: what :func:`private_key_lines` returns.

    Attributes:
        shown: 0-based line index -> what that line is once the keys are removed (:data:`KEY_MARKER` on a
            block's first line, what stood before its header kept; empty lines after it), for every line a
            removed block touches.
        blocks: (first, last) 0-based line indexes of each removed block, in order.
    """

    shown: dict[int, str]
    blocks: list[tuple[int, int]]

    def blocks_in(self, first: int, last: int) -> int:
        """How many blocks touch lines ``first..last`` (0-based, inclusive)."""
        return sum(1 for a, b in self.blocks if a <= last and first <= b)


def private_key_lines(text: str) -> KeyLines:
    """The lines of ``text`` that :func:`remove_private_keys` changes, and what they become.

    A reader that shows part of a file (``read_file`` with a line range) masks the lines of its range with
    this, judged on the whole file: two lines from the middle of a PEM key, or a headerless body whose DER
    start is above the range, carry nothing a scan of the range alone could recognise. The lines are the
    ones a read of the whole file would have masked, so a range never shows more, and never masks more.
    """
    removed, blocks = _remove_keys(text)
    if not blocks:
        return KeyLines({}, [])
    lines = removed.split("\n")
    shown = {i: lines[i].removesuffix("\r") for a, b in blocks for i in range(a, b + 1)}
    return KeyLines(shown, blocks)


def _remove_keys(text: str, data: bytes | None = None) -> tuple[str, list[tuple[int, int]]]:
    """:func:`remove_private_keys`, with the (first, last) line indexes of each block (blocks keep the line
    count, so the indexes hold in the text before and after each step). ``data``: the text as ASCII bytes, when
    the caller has it (the markers are ASCII)."""
    blocks: list[tuple[int, int]] = []

    def lines_of(spans: list[tuple[int, int]]) -> None:
        blocks.extend((text.count("\n", 0, a), text.count("\n", 0, max(a, b - 1))) for a, b in spans)

    if data is None:
        headed = "PRIVATE KEY" in text or "Private-Lines:" in text
    else:
        headed = b"PRIVATE KEY" in data or b"Private-Lines:" in data
    if headed:
        for found in (_key_blocks, lambda t: [m.span() for m in _PUTTY.finditer(t)]):
            spans = found(text)
            lines_of(spans)
            text = _replace_spans(text, spans)
        if data is not None and blocks:
            data = text.encode("ascii", "replace")
    bodies = key_body_spans(text, data)
    lines_of(bodies)
    return _replace_spans(text, bodies), sorted(blocks)


def _replace_spans(text: str, spans: list[tuple[int, int]]) -> str:
    for start, stop in reversed(spans):
        text = text[:start] + KEY_MARKER + "\n" * text.count("\n", start, stop) + text[stop:]
    return text


# Words of the text where a prefixed token may start: no ``=``, ``:``, ``@``, ``/``, quotes or ``+`` (what stands
# before a token: ``KEY=``, ``https://user:``, a diff's ``+``); a leading ``-`` (a diff's) is skipped below.
# Found in a copy of the text where every character of a word is ``a`` and every other a space: a run of 15 ``a``
# is a ``bytes.find`` (which skips ahead), far faster than a regex trying every position of 1 MB.
_WORD_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.~-")
_WORD_CLASS = bytes(0x61 if i in _WORD_CHARS else 0x20 for i in range(256))
_LONG_WORD = b"a" * 15
_BY_PREFIX: tuple[tuple[str, Rule], ...] = tuple(
    (h, r) for r in RULES if r.how == "token" and not r.at_end for h in r.hints
)
_AT_END: tuple[tuple[str, Rule], ...] = tuple((h, r) for r in RULES if r.at_end for h in r.hints)
_AT_END_FIRST = tuple({h[0].encode("ascii") for h, _r in _AT_END})
_AT_END_ONE = _AT_END_FIRST[0] if len(_AT_END_FIRST) == 1 else b""  # the common case: one first character
_PREFIXES: tuple[str, ...] = tuple(p for p, _r in _BY_PREFIX)
_PREFIX_BYTES: tuple[bytes, ...] = tuple(p.encode("ascii", "replace") for p in _PREFIXES)
# The prefixes by their first character: a word is compared with the few that can start it, in table order.
_BY_FIRST: dict[str, tuple[tuple[str, Rule], ...]] = {
    c: tuple((p, r) for p, r in _BY_PREFIX if p[0] == c) for c in {p[0] for p in _PREFIXES}
}
_FIRST_PREFIXES: dict[str, tuple[str, ...]] = {c: tuple(p for p, _r in rules) for c, rules in _BY_FIRST.items()}
_FIRST_BYTES: dict[int, tuple[bytes, ...]] = {
    ord(c): tuple(p.encode("ascii") for p in prefixes) for c, prefixes in _FIRST_PREFIXES.items()
}


def blank_private_keys(data: bytes) -> bytes:
    """:func:`remove_private_keys` on a file's bytes (``data`` itself when it holds no key: the common case
    costs a few ``bytes`` finds and one ``translate``)."""
    if b"PRIVATE KEY" not in data and b"Private-Lines:" not in data and not bytes_may_hold_key_body(data):
        return data
    text, blocks = remove_private_keys(data.decode("utf-8", "surrogateescape"))
    return text.encode("utf-8", "surrogateescape") if blocks else data


def mask_secrets(text: str) -> Scan:
    """Remove private key blocks and mask values in known credential formats (see the module docstring).

    Every rule finds its candidate spans on the same text; where spans overlap, the prefixed formats win, then
    the rule that comes first in :data:`RULES`; the text is rebuilt once.
    """
    data = text.encode("ascii", "replace")  # one byte a character (others become ``?``): see below
    text, blocks = _remove_keys(text, data)
    keys = len(blocks)
    if keys:
        data = text.encode("ascii", "replace")
    # ``data`` has one byte a character, so offsets agree with the text: literals are found with ``bytes.find``,
    # twice as fast as on a ``str`` and far faster than a regex search. The lower-cased text the keyword rules
    # match is decoded from it (ASCII: a copy), other characters being ``?`` there as in ``data``.
    low = data.lower()
    lowered = low.decode("ascii")
    found: list[tuple[int, int, int, str]] = []  # (priority, start, stop, kind)
    long_words = _find_tokens(text, data, found)
    plan = _plan()
    for hay, raw, table in ((text, data, plan.cased), (lowered, low, plan.lowered)):
        for literal, parts in table.items():
            _find_at_keyword(literal, parts, text, hay, raw, found)
    present: dict[tuple[bytes, int], bool] = {}
    for order, rule, hints in plan.plain:
        hay, raw = (lowered, low) if rule.lower else (text, data)
        if rule.in_word:
            raw = long_words
        if any(_present(h, raw, present) for h in hints):
            for part in rule.parts:
                _find_part(order, rule, part.finditer(hay), text, hay, found)
    if not found:
        return Scan(text, {}, keys)
    spans: list[tuple[int, int, str]] = []
    for _order, start, stop, kind in sorted(found):
        if not any(start < b and a < stop for a, b, _k in spans):
            spans.append((start, stop, kind))
    spans.sort()
    out: list[str] = []
    kinds: dict[str, int] = {}
    pos = 0
    for start, stop, kind in spans:
        out.append(text[pos:start])
        out.append(f"{MARKER_PREFIX}{kind}]")
        kinds[kind] = kinds.get(kind, 0) + 1
        pos = stop
    out.append(text[pos:])
    return Scan("".join(out), kinds, keys)


@dataclass(frozen=True)
class _Plan:
    """How the scan rules run: those with keywords are tried where the literal start of a keyword stands
    (``cased`` on the text, ``lowered`` on its lower-cased copy; one ``re`` search per distinct literal for all
    rules), the others (``plain``) searched whole when one of their hints is in the text."""

    cased: dict[bytes, list[tuple[int, Rule, re.Pattern[str]]]]
    lowered: dict[bytes, list[tuple[int, Rule, re.Pattern[str]]]]
    plain: list[tuple[int, Rule, tuple[bytes, ...]]]


_META = re.compile(r"[\\\[(.*+?{|^$]")
_LOOKBEHINDS = re.compile(r"\(\?:(?:\(\?<[=!][^()]*\)\|?)+\)|(?:\(\?<[=!][^()]*\))+")


def _literal(word: str) -> str:
    """The literal a keyword starts with once its lookbehinds are set aside (``(?<=_)pwd``: ``pwd``;
    ``pass(?:word|wd)``: ``pass``; ``credentials?``: ``credential``)."""
    word = _LOOKBEHINDS.sub("", word, count=1) if word.startswith("(?") else word
    meta = _META.search(word)
    literal = word[: meta.start()] if meta else word
    if meta and word[meta.start()] in "?*{":
        literal = literal[:-1]  # the character before an optional part is not certain
    if not literal:
        raise ValueError(f"keyword without a literal start: {word!r}")
    return literal


@functools.cache
def _plan() -> _Plan:
    cased: dict[bytes, list[tuple[int, Rule, re.Pattern[str]]]] = {}
    lowered: dict[bytes, list[tuple[int, Rule, re.Pattern[str]]]] = {}
    plain: list[tuple[int, Rule, tuple[bytes, ...]]] = []
    for order, rule in enumerate(RULES, start=1):
        if rule.how != "scan":
            continue
        if not rule.keywords:
            plain.append((order, rule, tuple(h.encode("ascii") for h in rule.hints)))
            continue
        table = lowered if rule.lower or rule.upper else cased
        for word, part in zip(rule.keywords, rule.parts, strict=True):
            table.setdefault(_literal(word).encode("ascii"), []).append((order, rule, part))
    return _Plan(cased, lowered, plain)


# A literal is looked for with a compiled ``re``, which finds its first byte with ``memchr`` (two to three times
# faster than ``bytes.find`` on ``key``, ``pass`` or ``://``), unless it starts with one of the commonest letters
# or is long: then ``bytes.find`` and its skips win (measured on 1 MB of source, see bench/secrets_speed.py).
def _by_find(literal: bytes) -> bool:
    return len(literal) >= 8 or literal[:1] in (b"e", b"t", b"a", b"o", b"i", b"n", b"s", b"r")


@functools.cache
def _literal_pattern(literal: bytes) -> re.Pattern[bytes]:
    return re.compile(re.escape(literal))


def _positions(literal: bytes, raw: bytes) -> Iterator[int]:
    if not _by_find(literal):
        for m in _literal_pattern(literal).finditer(raw):
            yield m.start()
        return
    pos = raw.find(literal)
    while pos >= 0:
        yield pos
        pos = raw.find(literal, pos + 1)


def _present(hint: bytes, raw: bytes, seen: dict[tuple[bytes, int], bool]) -> bool:
    """Whether a hint is in ``raw`` (``data``, ``low`` or the long words), each looked for once a scan."""
    key = (hint, id(raw))
    if key not in seen:
        seen[key] = hint in raw if _by_find(hint) else _literal_pattern(hint).search(raw) is not None
    return seen[key]


def _find_at_keyword(literal: bytes, parts: list[tuple[int, Rule, re.Pattern[str]]], text: str, hay: str,
                     raw: bytes, found: list[tuple[int, int, int, str]]) -> None:
    """The keyword rules whose keyword starts with ``literal``, tried where it stands in ``raw`` (``hay`` as bytes)."""
    for pos in _positions(literal, raw):
        for order, rule, part in parts:
            m = part.match(hay, pos)
            if m is not None:
                _find_part(order, rule, (m,), text, hay, found)


def _find_tokens(text: str, data: bytes, found: list[tuple[int, int, int, str]]) -> bytes:
    """The prefixed formats, tried only at the words of 15 characters or more that start with one of their
    prefixes (``data`` is the text one byte a character). Returns those words, for :attr:`Rule.in_word` hints."""
    words = data.translate(_WORD_CLASS)
    size = len(words)
    seen: list[bytes] = []
    start = words.find(_LONG_WORD)
    while start >= 0:
        stop = words.find(b" ", start + 15)
        if stop < 0:
            stop = size
        seen.append(data[start:stop])
        prefixes = _FIRST_BYTES.get(data[start])
        # Most long words are names: no prefix of a format, no dot before one, no ``-`` near their end. Tested
        # on the bytes in place (no slice a word).
        # A dotted name (``os.path.join``) is tried only when a format's prefix follows its last dot.
        if (
            (prefixes is not None and data.startswith(prefixes, start))
            or data[start] == 0x2D
            or (data.find(_AT_END_ONE, stop - 6, stop) >= 0 if _AT_END_ONE else _ends_like_format(data, stop))
            or ((dot := data.rfind(b".", start, stop)) >= 0 and data.startswith(_PREFIX_BYTES, dot + 1))
        ):
            _try_word(text, start, text[start:stop], found)
        start = words.find(_LONG_WORD, stop)
    return b" ".join(seen)


def _ends_like_format(data: bytes, stop: int) -> bool:
    return any(data.find(c, stop - 6, stop) >= 0 for c in _AT_END_FIRST)


def _try_word(text: str, start: int, token: str, found: list[tuple[int, int, int, str]]) -> None:
    if token.startswith("-"):
        stripped = token.lstrip("-")
        start += len(token) - len(stripped)
        token = stripped
        if not token:
            return
    if _AT_END and _ends_format(text, start, token, found):
        return
    prefixes = _FIRST_PREFIXES.get(token[0])
    if prefixes is None or not token.startswith(prefixes):
        dot = token.rfind(".")  # ``secrets.pypi-AgE...``: a token at the end of a dotted name
        if dot < 0 or not token.startswith(_PREFIXES, dot + 1):
            return
        start += dot + 1
        token = token[dot + 1 :]
    for prefix, rule in _BY_FIRST[token[0]]:
        if not token.startswith(prefix) or (rule.word_check is not None and not rule.word_check(token)):
            continue
        m = rule.compiled.match(text, start)
        if m is None or (rule.credible is not None and not rule.credible(m.group())):
            continue
        if rule.context is not None and not rule.context(text, m):
            continue
        found.append((0, m.start(), m.end(), rule.kind))
        return


def _ends_format(text: str, start: int, token: str, found: list[tuple[int, int, int, str]]) -> bool:
    """A format recognised by the end of its word (:attr:`Rule.at_end`); True when one was found."""
    tail = token[-6:]
    for marker, rule in _AT_END:
        if marker in tail:
            m = rule.compiled.match(text, start)
            if m is not None and (rule.credible is None or rule.credible(m.group())):
                found.append((0, m.start(), m.end(), rule.kind))
                return True
    return False


def _find_part(order: int, rule: Rule, matches: Iterable[re.Match[str]], text: str, hay: str,
               found: list[tuple[int, int, int, str]]) -> None:
    named = "v" in rule.parts[0].groupindex
    for m in matches:
        if rule.word_start and m.start() and _WORD.match(hay, m.start() - 1):
            continue
        if rule.upper and not text[m.start("k") : m.end("k")].isupper():
            continue
        start, stop = m.span("v" if named else 0)
        if start < 0:
            continue
        if rule.credible is not None and not rule.credible(text[start:stop]):
            continue
        if rule.context is not None and not rule.context(hay, m):
            continue
        found.append((order, start, stop, rule.kind))
