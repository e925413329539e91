"""Counts in words that agree with them: ``count(1, "file")`` is "1 file", ``count(2, "file")`` "2 files".

User-facing text never says "file(s)". A leaf module (no imports of the package): every layer may use it.
"""

from __future__ import annotations

__all__ = ["count"]


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun`` in the number ``n`` calls for (``plural`` when it is not ``noun + "s"``)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
