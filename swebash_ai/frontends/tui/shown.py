"""Text the app did not write (a command, a path, a tool's arguments) as it is drawn: terminal controls as
escapes, invisible characters as ``<U+202E>`` markers in reverse video, so they stand out from the text
around them and what the user approves reads as what runs (safety/terminal_text.py)."""

from __future__ import annotations

from textual.content import Content

from swebash_ai.safety.terminal_text import MARKER, safe

MARKER_STYLE = "reverse"
"""Reverse video: distinct on every theme, without a colour of its own."""


def shown(text: str, style: str = "") -> Content:
    """``text`` made visible (:func:`~swebash_ai.safety.terminal_text.safe` with ``visible``), in ``style``,
    its markers in :data:`MARKER_STYLE` as well."""
    return styled(safe(text, visible=True), style)


def styled(text: str, style: str = "") -> Content:
    """Already sanitised ``text`` in ``style``, its markers in :data:`MARKER_STYLE` as well."""
    if MARKER.search(text) is None:
        return Content.styled(text, style) if style else Content(text)
    marker = f"{style} {MARKER_STYLE}".strip()
    parts: list[tuple[str, str]] = []
    last = 0
    for match in MARKER.finditer(text):
        parts += [(text[last:match.start()], style), (match.group(), marker)]
        last = match.end()
    parts.append((text[last:], style))
    return Content.assemble(*((part, part_style) for part, part_style in parts if part))
