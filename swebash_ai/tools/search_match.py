"""Finding a search pattern in a whole file: the matcher behind ``search`` (the walk and the ripgrep lane).

Contract:
    :class:`Matcher` takes the tool's ``pattern``/``regex``/``case_sensitive`` and answers three questions
    about a file's bytes: ``reject`` (surely no match: most files stop here, cheaply), ``find`` (the next
    match from an offset), and, through :func:`matching_line_starts`, which lines hold a match.
    ``literal`` names a text every match contains, which ripgrep may look for to propose candidates.

Why bytes: ``bytes.find`` is far faster than ``re`` with IGNORECASE (~60 MB/s), so a literal is searched as
bytes, and a regex gets a literal prefilter (:func:`required_literal`) when it has one. Non-ASCII patterns
searched case-insensitively, and ``str``-only regexes, decode the file instead (``text_mode``).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

__all__ = ["Matcher", "matching_line_starts", "required_literal"]


def required_literal(pattern: bytes, flags: int) -> tuple[bytes, bool] | None:
    """The longest literal every match must contain (top-level runs of a concatenation only, so
    alternations and optional groups never cause a false "no match"), and whether case is ignored.
    ``re`` scans ~60 MB/s with IGNORECASE; ``bytes.find`` is far faster. ``None``: no usable literal."""
    try:
        _parser = importlib.import_module("re._parser")  # private, hence the broad guard below
        parsed = _parser.parse(pattern, flags)
        ignore = bool(parsed.state.flags & re.IGNORECASE)
        best, run = b"", bytearray()
        for op, av in [*list(parsed), (None, None)]:
            if op is _parser.LITERAL and isinstance(av, int):
                run.append(av)
                continue
            if len(run) > len(best):
                best = bytes(run)
            run = bytearray()
    except Exception:
        return None
    if len(best) < 3 or (ignore and not best.isascii()):
        return None
    return (best.lower() if ignore else best), ignore


class Matcher:
    """Finds the pattern in a whole file: ``reject`` skips most files cheaply, ``find`` scans one."""

    def __init__(self, pattern: str, is_regex: bool, case_sensitive: bool) -> None:
        self.text_mode = not pattern.isascii() and (is_regex or not case_sensitive)
        self.pattern = pattern
        self.is_regex = is_regex
        self.lower = False
        self.rx: re.Pattern[Any] | None = None
        self.needle: bytes | str = pattern
        self.prefilter: tuple[bytes, bool] | None = None
        self.counter: re.Pattern[bytes] | None = None
        flags = re.MULTILINE | (0 if case_sensitive else re.IGNORECASE)
        if is_regex:
            if not self.text_mode:
                try:
                    self.rx = re.compile(pattern.encode("utf-8"), flags)
                    self.prefilter = required_literal(pattern.encode("utf-8"), flags)
                except re.error:
                    self.text_mode = True  # e.g. \\u escapes: only str patterns know them
            if self.rx is None:
                self.rx = re.compile(pattern, flags)  # raises re.error for a bad pattern
        elif self.text_mode:
            self.rx = re.compile(re.escape(pattern), flags)
        else:
            self.lower = not case_sensitive
            self.needle = pattern.lower().encode() if self.lower else pattern.encode("utf-8")
            if b"\n" not in self.needle:  # counts matching lines in C: the first hit, then the line's rest
                self.counter = re.compile(re.escape(self.needle) + rb"[^\n]*")

    def literal(self) -> tuple[str, bool] | None:
        """A text every match contains, and whether case is ignored: what ripgrep may look for to propose
        candidates (see :mod:`swebash_ai.tools.search_rg`). ``None`` when there is none."""
        if self.rx is None:  # a literal search
            return self.pattern, self.lower
        if not self.text_mode and self.prefilter is not None:
            literal, ignore = self.prefilter
            try:
                return literal.decode("utf-8"), ignore
            except UnicodeDecodeError:  # a literal cut inside a character: not a text to hand over
                return None
        if self.text_mode and not self.is_regex:
            return self.pattern, True
        return None

    def haystack(self, data: bytes) -> Any:
        if self.text_mode:
            return data.decode("utf-8", "replace")
        return data.lower() if self.lower else data

    def reject(self, data: bytes, hay: Any) -> bool:
        """True when ``hay`` (made from ``data``) surely holds no match."""
        if self.rx is None:
            return self.needle not in hay
        if self.prefilter is not None:
            literal, ignore = self.prefilter
            if literal not in (data.lower() if ignore else data):
                return True
        return self.rx.search(hay) is None

    def find(self, hay: Any, pos: int) -> int:
        if self.rx is not None:
            m = self.rx.search(hay, pos)
            return -1 if m is None else m.start()
        found: int = hay.find(self.needle, pos)
        return found


def matching_line_starts(hay: Any, nl: Any, find: Callable[[Any, int], int]) -> list[int]:
    """Start offsets of the lines holding at least one match (one entry per line)."""
    out: list[int] = []
    n = len(hay)
    pos = 0
    while pos <= n:
        m = find(hay, pos)
        if m < 0 or (m == n and (n == 0 or hay[n - 1 : n] == nl)):  # a match at EOF after "\n": no line
            break
        out.append(hay.rfind(nl, 0, m) + 1)
        end = hay.find(nl, m)
        if end < 0:
            break
        pos = end + 1
    return out
