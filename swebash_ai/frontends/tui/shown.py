"""Text the app did not write (a command, a path, a tool's arguments or output) as it is drawn: terminal controls
as escapes, invisible characters as ``<U+202E>`` markers in reverse video, so they stand out from the text
around them and what the user approves reads as what runs (safety/terminal_text.py).

Two shapes of the one rule: :func:`styled` for widgets drawing Textual ``Content`` (dialogs, headers, the
status bar, pickers), :class:`MarkerHighlighter` for the ``Log`` of a tool's output, which draws Rich text
line by line; both find the markers with :func:`marker_spans`."""

from __future__ import annotations

from collections.abc import Iterator

from rich.highlighter import Highlighter
from rich.text import Text
from textual.content import Content

from swebash_ai.safety.terminal_text import MARKER, safe

MARKER_STYLE = "reverse"
"""Reverse video: distinct on every theme, without a colour of its own."""


def marker_spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each ``<U+XXXX>`` marker in already sanitised ``text``."""
    if "<U+" not in text:  # the usual case, a line of output: no regex run
        return
    for match in MARKER.finditer(text):
        yield match.span()


def shown(text: str, style: str = "") -> Content:
    """``text`` made visible (:func:`~swebash_ai.safety.terminal_text.safe` with ``visible``), in ``style``,
    its markers in :data:`MARKER_STYLE` as well."""
    return styled(safe(text, visible=True), style)


def styled(text: str, style: str = "") -> Content:
    """Already sanitised ``text`` in ``style``, its markers in :data:`MARKER_STYLE` as well."""
    spans = list(marker_spans(text))
    if not spans:
        return Content.styled(text, style) if style else Content(text)
    marker = f"{style} {MARKER_STYLE}".strip()
    parts: list[tuple[str, str]] = []
    last = 0
    for start, end in spans:
        parts += [(text[last:start], style), (text[start:end], marker)]
        last = end
    parts.append((text[last:], style))
    return Content.assemble(*((part, part_style) for part, part_style in parts if part))


class MarkerHighlighter(Highlighter):
    """The markers of an already sanitised line in :data:`MARKER_STYLE` (a ``Log``'s ``highlighter``)."""

    def __call__(self, text: str | Text) -> Text:
        if isinstance(text, Text) and "<U+" not in text.plain:
            return text  # the usual line: not even the copy a highlighter makes (the Log builds it per draw)
        return super().__call__(text)

    def highlight(self, text: Text) -> None:
        for start, end in marker_spans(text.plain):
            text.stylize(MARKER_STYLE, start, end)
