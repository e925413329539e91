"""The assistant's Markdown widget, in its own module so the Markdown machinery (markdown-it, the block
widgets) is imported on the first reply rather than before the first frame.

Lists whose items are plain paragraphs (what models write most) render as one widget each, wrapped with a
hanging indent, instead of Textual's four widgets per item: a long answer full of lists would otherwise
mount thousands of widgets, and every re-layout of the chat walks all of them. Lists holding anything else
(nested lists, code blocks) keep Textual's rendering.
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar

from textual.content import Content
from textual.geometry import Size
from textual.widgets import Markdown
from textual.widgets._markdown import (
    MarkdownBlock,
    MarkdownBulletList,
    MarkdownFence,
    MarkdownListItem,
    MarkdownOrderedList,
    MarkdownParagraph,
)

BULLET_STYLE = "$text-primary"


def flat_items(blocks: list[MarkdownBlock], ordered: bool) -> list[tuple[str, Content]] | None:
    """(symbol, text) per item when every item is only paragraphs; ``None`` otherwise."""
    items: list[tuple[str, Content]] = []
    start = 1
    for index, block in enumerate(blocks):
        if not isinstance(block, MarkdownListItem):
            return None
        if not all(isinstance(sub, MarkdownParagraph) for sub in block._blocks):
            return None
        if ordered and index == 0:
            try:
                start = int(block.bullet)
            except ValueError:
                start = 1
        symbol = f"{start + index}." if ordered else block.bullet.strip()
        items.append((symbol, Content("\n").join(sub._content for sub in block._blocks)))
    if ordered:
        width = max((len(symbol) for symbol, _ in items), default=2)
        items = [(symbol.rjust(width), text) for symbol, text in items]
    return items


class _CompactList:
    """Mixin for the list blocks: one widget, lines wrapped with a hanging indent."""

    _ordered: ClassVar[bool] = False
    _items: list[tuple[str, Content]] | None = None
    _wrapped: tuple[int, list[Content]] | None = None

    def _compact_compose(self, blocks: list[MarkdownBlock]) -> bool:
        self._items = flat_items(blocks, self._ordered)
        self._wrapped = None
        if self._items is None:
            return False
        blocks.clear()
        return True

    def _lines(self, width: int) -> list[Content]:
        if self._wrapped is not None and self._wrapped[0] == width:
            return self._wrapped[1]
        lines: list[Content] = []
        for symbol, text in self._items or ():
            indent = len(symbol) + 1
            wrapped = text.wrap(max(1, width - indent)) or [Content("")]
            for i, line in enumerate(wrapped):
                prefix = Content.styled(symbol + " ", BULLET_STYLE) if i == 0 else Content(" " * indent)
                lines.append(prefix + line)
        self._wrapped = (width, lines)
        return lines

    # The widget methods: ``super()`` is the Markdown list class this mixin is combined with.
    _blocks: list[MarkdownBlock]
    content_size: Size

    def compose(self) -> Any:
        if not self._compact_compose(self._blocks):
            yield from super().compose()  # type: ignore[misc]

    def render(self) -> Any:
        if self._items is None:
            return super().render()  # type: ignore[misc]
        return Content("\n").join(self._lines(self.content_size.width))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self._items is None:
            height: int = super().get_content_height(container, viewport, width)  # type: ignore[misc]
            return height
        return len(self._lines(width))


class CompactBulletList(_CompactList, MarkdownBulletList):
    """A bullet list drawn by one widget when its items are plain paragraphs."""


class CompactOrderedList(_CompactList, MarkdownOrderedList):
    """An ordered list drawn by one widget when its items are plain paragraphs."""

    _ordered = True


@functools.lru_cache(maxsize=256)
def _highlight(code: str, language: str, ansi: bool, dark: bool) -> Content:
    return MarkdownFence.highlight(code, language, ansi=ansi, dark=dark)


class CachedFence(MarkdownFence):
    """A code block that highlights again only when the highlight theme really changes.

    Textual's fence re-runs Pygments when it is built and on every style update; both happen to every code
    block of a streamed reply again and again (measured: ~40,000 lexer calls, 2.6 s of the UI thread for
    one 20,000-token reply).
    """

    _highlight_key: tuple[bool, bool] | None = None

    @classmethod
    def highlight(cls, code: str, language: str, ansi: bool = False, dark: bool = False) -> Content:
        # Markdown.update() builds fresh blocks from the whole document and then diffs them, so the same
        # code block is constructed (and highlighted) again on every update; Content is immutable.
        return _highlight(code, language, ansi, dark)

    def notify_style_update(self) -> None:
        key = (self.app.native_ansi_color, self.app.current_theme.dark)
        if self._highlight_key is None:
            self._highlight_key = key  # __init__ just highlighted for the current theme
        if key != self._highlight_key:
            self._highlight_key = key
            super().notify_style_update()  # re-highlights for the new theme
            return
        MarkdownBlock.notify_style_update(self)  # the usual style refresh, without re-highlighting


class AssistantMessage(Markdown):
    """One assistant reply, or one segment of a long one (rendered Markdown, code blocks highlighted)."""

    BLOCKS: dict[str, type[MarkdownBlock]] = {  # noqa: RUF012 - Textual declares it so
        **Markdown.BLOCKS,
        "bullet_list_open": CompactBulletList,
        "ordered_list_open": CompactOrderedList,
        "fence": CachedFence,
        "code_block": CachedFence,
    }
