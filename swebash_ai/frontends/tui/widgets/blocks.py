"""Where a Markdown reply divides into top-level blocks: one rule for the renderer and for the stream.

An :class:`~swebash_ai.frontends.tui.widgets.reply.AssistantMessage` renders each block on its own (once per
width and theme); a streamed reply commits only complete blocks and starts a new segment only between two.
Both cut at the same places, so a reply streamed in any chunks renders exactly as the same text shown at
once. Light on purpose (no Markdown machinery): the chat pane imports it before the first frame.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def block_starts(markdown: str) -> Iterator[int]:
    """Offsets in ``markdown`` where a new top-level block starts (0 excluded), in order: after a blank
    line, outside code fences, before a line that starts at the margin (an indented line continues a list
    item or a code block).

    A block before such an offset is complete whatever follows, so a stream may commit it. Lazy: a caller
    that stops early reads no further lines than it needs.
    """
    fence = ""
    blank = False
    offset = 0
    for line in _lines(markdown):
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
                fence = ""  # the closing line
        else:
            if stripped and blank and not line[0].isspace() and offset:
                yield offset
            if match := _FENCE.match(line):
                fence = match.group(1)
        offset += len(line)
        blank = not stripped


def _lines(text: str) -> Iterator[str]:
    """``text.splitlines(keepends=True)``, a window at a time (a stream far behind holds a long tail)."""
    start = 0
    while start < len(text):
        window = text[start:start + 2048]
        lines = window.splitlines(keepends=True)
        if start + len(window) < len(text):
            if len(lines) > 1:
                lines.pop()  # may be cut short by the window (or its line break split from a "\r\n")
            elif not lines[0].endswith(("\n", "\r")) or lines[0].endswith("\r"):
                lines = text[start:].splitlines(keepends=True)[:1]  # one line longer than the window
        yield from lines
        start += sum(len(line) for line in lines)


def split_blocks(markdown: str) -> list[str]:
    """``markdown`` cut at every :func:`block_starts` offset; blank text gives no block."""
    cuts = [0, *block_starts(markdown), len(markdown)]
    blocks = [markdown[a:b] for a, b in itertools.pairwise(cuts) if a < b]
    if blocks and not blocks[-1].strip():
        blocks.pop()
    return blocks
