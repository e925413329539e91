"""The assistant's Markdown, drawn line by line. In its own module so the Markdown machinery (rich.markdown,
markdown-it, Pygments) is imported on the first reply rather than before the first frame.

Textual's Markdown widget mounts a widget per block (four per list item, three per code block). Every
re-layout of the screen arranges, measures and renders them inside one step of the UI loop: with a reply
streaming on screen, a re-layout cost 25-60 ms (up to 150) and a keypress waited behind it. An
:class:`AssistantMessage` is one widget. Rich renders its Markdown into lines a block at a time, each
block once per width and theme, and a streamed chunk is rendered block by block with a pause for input
between two blocks, before the re-layout that shows it. The re-layout then only counts lines, and
Textual asks the widget for the lines on screen.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, ClassVar

from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Heading, HorizontalRule, ListItem, Markdown
from rich.rule import Rule
from rich.segment import Segment
from rich.style import Style
from rich.syntax import PygmentsSyntaxTheme
from rich.theme import Theme as RichTheme
from textual import events
from textual.color import Color, ColorParseError
from textual.geometry import Size
from textual.reactive import Reactive
from textual.strip import Strip
from textual.widget import Widget

from swebash_ai.frontends.markdown_links import LinkSafeMarkdown
from swebash_ai.frontends.tui.input_first import yield_to_input
from swebash_ai.frontends.tui.widgets.blocks import split_blocks
from swebash_ai.safety.link_text import linkable
from swebash_ai.safety.terminal_text import safe

if TYPE_CHECKING:
    from pygments.lexer import Lexer
    from textual.selection import Selection

#: Rich's Markdown style names -> (the app theme's variable for the colour, text style).
MARKDOWN_STYLES: dict[str, tuple[str | None, str]] = {
    "markdown.h1": ("text-primary", "bold underline"),
    "markdown.h1.border": ("text-primary", ""),
    "markdown.h2": ("text-primary", "bold"),
    "markdown.h3": ("text-secondary", "bold"),
    "markdown.h4": ("text-secondary", "italic"),
    "markdown.h5": (None, "italic"),
    "markdown.h6": (None, "dim"),
    "markdown.code": ("text-accent", "bold"),
    "markdown.block_quote": ("foreground-muted", "italic"),
    "markdown.list": (None, ""),
    "markdown.item.bullet": ("text-primary", "bold"),
    "markdown.item.number": ("text-primary", ""),
    "markdown.hr": ("foreground-muted", ""),
    "markdown.link": ("text-primary", ""),
    "markdown.link_url": ("text-primary", "underline"),
    "markdown.table.border": ("foreground-muted", ""),
    "markdown.table.header": ("text-primary", "bold"),
    "markdown.kbd": ("text-accent", "bold"),
}
CODE_BACKGROUND = "panel"
"""The theme variable code blocks are drawn on."""
CODE_THEMES = {True: "monokai", False: "friendly"}
"""Pygments styles for code blocks, on a dark and on a light theme."""


@functools.lru_cache(maxsize=8)
def rich_theme(variables: tuple[tuple[str, str], ...]) -> RichTheme:
    """Rich's Markdown styles, coloured from the app theme's variables (given as sorted pairs)."""
    colors = dict(variables)
    return RichTheme({
        name: Style.parse(text_style or "none") + Style(color=_parse(colors.get(variable or "")))
        for name, (variable, text_style) in MARKDOWN_STYLES.items()
    })


# --- code blocks --------------------------------------------------------------------------------------
@functools.cache
def _lexer(name: str) -> Lexer:
    from pygments.lexers import get_lexer_by_name
    from pygments.lexers.special import TextLexer
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(name or "text", stripnl=False, ensurenl=False)
    except ClassNotFound:
        return TextLexer()


@functools.cache
def _code_theme(name: str) -> PygmentsSyntaxTheme:
    return PygmentsSyntaxTheme(name)


@functools.lru_cache(maxsize=256)
def highlight_code(code: str, language: str, theme: str, background: Style) -> list[list[Segment]]:
    """``code`` highlighted by Pygments: a list of segments per line, on ``background``."""
    styles = _code_theme(theme)
    lines: list[list[Segment]] = [[]]
    for token_type, value in _lexer(language).get_tokens(code):
        style = background + styles.get_style_for_token(token_type) + background.background_style
        first = True
        for part in value.split("\n"):
            if not first:
                lines.append([])
            first = False
            if part:
                lines[-1].append(Segment(part.expandtabs(4), style))
    return lines


class _CodeBlock(CodeBlock):
    """A fenced block: highlighted straight into segments (Rich's Syntax costs three times as much),
    wrapped at the width, on the theme's code background, one cell of margin each side."""

    background = Style()

    @classmethod
    def create(cls, markdown: Markdown, token: Any) -> CodeBlock:
        block = super().create(markdown, token)
        if isinstance(markdown, ReplyMarkdown) and isinstance(block, _CodeBlock):
            block.background = markdown.code_background
        return block

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip()
        lines = highlight_code(code, self.lexer_name, self.theme, self.background)
        inner = max(1, options.max_width - 2)
        margin = Segment(" ", self.background)
        for line in lines:
            length = Segment.get_line_length(line)
            cuts = [*range(inner, length, inner), max(length, 1)]
            for part in Segment.divide(line, cuts) if length > inner else [line]:
                used = Segment.get_line_length(part)
                yield margin
                yield from part
                yield Segment(" " * (inner - used + 1), self.background)
                yield Segment.line()


class _ListItem(ListItem):
    """List items numbered "1." (Rich writes "1")."""

    def render_number(self, console: Console, options: ConsoleOptions, number: int,
                      last_number: int) -> RenderResult:
        width = len(str(last_number)) + 3
        lines = console.render_lines(self.elements, options.update(width=options.max_width - width),
                                     style=self.style)
        style = console.get_style("markdown.item.number", default="none")
        numeral, padding = Segment(f"{number}.".rjust(width - 1) + " ", style), Segment(" " * width, style)
        for index, line in enumerate(lines):
            yield numeral if index == 0 else padding
            yield from line
            yield Segment.line()


class _Rule(HorizontalRule):
    """A rule drawn as a line (Rich draws dashes)."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Rule(style=console.get_style("markdown.hr", default="none"))


class _LeftHeading(Heading):
    """Headings aligned left (Rich centres the first level): a chat reads down its left edge."""

    LEVEL_ALIGN: ClassVar[dict[str, Any]] = dict.fromkeys(("h1", "h2", "h3", "h4", "h5", "h6"), "left")


class ReplyMarkdown(LinkSafeMarkdown):
    """Rich's Markdown with our code blocks, list numbers, rules and headings, and links that show where
    they go (frontends/markdown_links.py)."""

    elements: ClassVar[dict[str, Any]] = {
        **Markdown.elements, "heading_open": _LeftHeading, "fence": _CodeBlock, "code_block": _CodeBlock,
        "list_item_open": _ListItem, "hr": _Rule,
    }

    def __init__(self, markup: str, *, dark: bool, code_background: Style) -> None:
        super().__init__(markup, code_theme=CODE_THEMES[dark], hyperlinks=True)
        self.code_background = code_background


# --- the widget ---------------------------------------------------------------------------------------
class AssistantMessage(Widget):
    """One assistant reply, or one segment of a long one: rendered Markdown, code blocks highlighted."""

    DEFAULT_CSS = """
    AssistantMessage {
        height: auto;
    }
    """

    virtual_size = Reactive(Size(0, 0), layout=False)
    """Textual lays the screen out again when a widget's virtual size changes; this one's changes with its
    height, in the very pass that laid it out, so that second pass (a re-render of the chat, 15-30 ms
    while a reply streams) would find nothing to move."""

    ALLOW_SELECT = True

    def __init__(self, markdown: str = "", *, classes: str = "", span: tuple[int, int] | None = None) -> None:
        """``markdown`` is the message's text or, with ``span``, the whole text of the reply it is a segment of
        (``markdown[start:end]``): held as given, not copied (see :meth:`share_source`)."""
        super().__init__(classes=classes)
        part = markdown if span is None else markdown[span[0]:span[1]]
        shown = safe(part)  # a resumed answer, stored as the model wrote it
        if shown is not part:  # control sequences removed: this text is its own
            markdown, span = shown, None
        self._blocks: list[str] = split_blocks(shown)
        self._shown = len(self._blocks)  # blocks drawn: those being appended wait until all are rendered
        self._source = markdown
        self._span = span  # (start, end) of this segment in ``_source``, the whole reply; None: all of it
        self._rendered: list[list[Strip]] = []  # of the first blocks, for _render_key
        self._render_key: tuple[object, ...] | None = None
        self._lines: list[Strip] | None = None  # every rendered block, a blank line between two
        self._plain: list[str] | None = None
        self._style_key: tuple[object, ...] | None = None  # (theme, the widget's colours) rendered with

    @property
    def source(self) -> str:
        """The Markdown of this message."""
        return self._source if self._span is None else self._source[self._span[0]:self._span[1]]

    @property
    def shared_source(self) -> tuple[str, tuple[int, int] | None]:
        """What the message holds of its text, to build it again: the text and the span of it that is this
        message's (``None``: all of it), as :meth:`__init__` takes them."""
        return self._source, self._span

    def share_source(self, text: str, start: int = 0) -> bool:
        """Hold this message's Markdown as the part of ``text`` from ``start`` on (the conversation's copy of
        the whole reply), instead of a copy of its own; False, keeping its own, if that part is not this
        message's text.

        A streamed reply's text is built up here as it comes, and the conversation builds its own: each
        answer of a session was held twice, the second copy in the blueprint of the message once it is
        stored (``widgets/earlier.py``), for as long as the session runs.
        """
        own = self.source
        end = start + len(own)
        if text[start:end] != own:
            return False
        self._source, self._span = text, (None if start == 0 and end == len(text) else (start, end))
        return True

    def _unshare(self) -> None:
        """Take a copy of its own part again (more text is appended to it)."""
        if self._span is not None:
            self._source, self._span = self.source, None

    async def append(self, markdown: str) -> None:
        """Add complete blocks of Markdown. Each block is rendered in its own step of the UI loop (a
        keypress goes between two), then the message grows by all of them at once."""
        markdown = safe(markdown)  # the stream sanitised it already; this guards any other caller
        self._unshare()
        self._source += markdown
        self._blocks.extend(split_blocks(markdown))
        width = self._expected_width()
        if width:
            # A layout pass may come during a pause; it draws the blocks shown before, rendering none.
            while len(self._rendered) < len(self._blocks):
                self._render_next(width)
                if len(self._rendered) < len(self._blocks):
                    await yield_to_input(self.app)
        self._shown = len(self._blocks)
        self._lines = self._plain = None
        self.refresh(layout=True)

    def _expected_width(self) -> int:
        """The width of the lines: the widget's, or before its first layout, what its nearest laid-out
        container leaves it (the chat pane's width less its scroll bar and the gutters in between)."""
        if self.size.width:
            return self.size.width
        gutter = self.styles.gutter.width
        for node in self.ancestors:
            if not isinstance(node, Widget):
                break
            if node.size.width:
                return max(1, node.scrollable_content_region.width - gutter)
            gutter += node.styles.gutter.width
        return 0

    def _check_key(self, width: int) -> None:
        """Forget the rendered blocks if the width, the theme or the widget's colours changed."""
        if self._style_key is None:
            self._style_key = (self.app.theme, self.rich_style)
        key = (width, *self._style_key)
        if key != self._render_key:
            self._render_key, self._rendered, self._lines, self._plain = key, [], None, None

    def release_lines(self) -> None:
        """Forget the rendered lines (the message is folded away, see ``Chapter``): a long session keeps its
        Markdown, not the lines of every message; they are rendered again when it shows."""
        self._render_key, self._rendered, self._lines, self._plain = None, [], None, None

    async def render_ahead(self, markdown: str, like: AssistantMessage) -> None:
        """Take complete blocks of Markdown *before* being mounted, rendered at the width and in the style
        of ``like`` (the reply's segment before this one, mounted), a keypress going between two blocks.

        Mounted afterwards, the message is laid out once with its lines ready: mounted first, a layout
        pass would come in a pause between two blocks to show it empty. Should its own width or style turn
        out different (they are those of ``like`` but for the margin), its blocks are rendered again then.
        """
        markdown = safe(markdown)
        self._unshare()
        self._source += markdown
        self._blocks.extend(split_blocks(markdown))
        width = like._expected_width()
        if width:
            style = like.rich_style
            self._style_key = (like.app.theme, style)
            while len(self._rendered) < len(self._blocks):
                self._render_next(width, like)
                if len(self._rendered) < len(self._blocks):
                    await yield_to_input(like.app)
            self._style_key = None  # its own, looked at once it is mounted
        self._shown = len(self._blocks)

    def _render_next(self, width: int, like: AssistantMessage | None = None) -> None:
        """Render the next block not rendered yet (all of them again if the width or the style changed),
        in this widget's style or, before it is mounted, in that of ``like`` (see :meth:`render_ahead`)."""
        self._check_key(width)
        app = (like or self).app
        rich_style = (like or self).rich_style
        variables = app.theme_variables
        code_background = Style.from_color(None, _parse(variables.get(CODE_BACKGROUND)))
        console = app.console
        console.push_theme(rich_theme(tuple(sorted(variables.items()))))
        try:
            options = console.options.update(width=width, height=None, highlight=False, markup=False)
            markdown = ReplyMarkdown(self._blocks[len(self._rendered)], dark=app.current_theme.dark,
                                     code_background=code_background)
            lines = console.render_lines(markdown, options, style=rich_style, pad=True)
        finally:
            console.pop_theme()
        # Rich puts blank lines around some blocks; the message puts exactly one between two blocks.
        while lines and _blank(lines[-1], code_background):
            lines.pop()
        start = 0
        while start < len(lines) and _blank(lines[start], code_background):
            start += 1
        self._rendered.append([Strip(line, width) for line in lines[start:]])
        self._lines = self._plain = None

    def _all_lines(self, width: int) -> list[Strip]:
        if self._lines is not None and self._render_key is not None and self._render_key[0] == width:
            return self._lines  # the theme and the colours are checked when they change
        self._check_key(width)
        while len(self._rendered) < self._shown:
            self._render_next(width)
        if self._lines is None:
            lines: list[Strip] = []
            blank = Strip.blank(width, self.rich_style)
            for block in self._rendered[: self._shown]:
                if lines and block:
                    lines.append(blank)
                lines.extend(block)
            self._lines = lines
        return self._lines

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return container.width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._all_lines(width)) if self._shown else 0

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        lines = self._all_lines(width)
        if y >= len(lines):
            return Strip.blank(width, self.rich_style)
        line = lines[y]
        selection = self.text_selection
        if selection is not None and (span := selection.get_span(y)) is not None:
            start, end = span
            end = line.cell_length if end == -1 else end
            style = self.screen.get_component_rich_style("screen--selection")
            line = Strip.join([line.crop(0, start), line.crop(start, end).apply_style(style), line.crop(end)])
        return line.apply_offsets(0, y)

    def notify_style_update(self) -> None:
        """Textual calls this on every restyle (of all the chat when it gains focus, say): look at the
        theme and colours again; the blocks are rendered again only if they changed (see _check_key)."""
        super().notify_style_update()
        self._style_key = None
        self._lines = None

    def on_click(self, event: events.Click) -> None:
        """A click on a link opens it (in the browser, or as the terminal opens links); only web and mail
        addresses are links (markdown_links.py), the check here guards any other way one got drawn."""
        link = event.style.link
        if link and linkable(link):
            event.stop()
            self.app.open_url(link)

    # --- selection ------------------------------------------------------------------------------------
    def text_lines(self) -> list[str]:
        """The rendered lines as plain text (what a selection copies)."""
        if self._plain is None:
            self._plain = [line.text.rstrip() for line in self._all_lines(self.size.width or 80)]
        return self._plain

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selection.extract("\n".join(self.text_lines())), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()


def _blank(line: list[Segment], code_background: Style) -> bool:
    """A line of spaces that is not part of a code block (those have their own background)."""
    code = code_background.bgcolor
    return all(not segment.text.strip() and (code is None or segment.style is None or segment.style.bgcolor != code)
               for segment in line)


def _parse(value: str | None) -> Any:
    """The Rich colour of a theme value; ``None`` for none or one that is not a colour ("auto 87%")."""
    if value is None:
        return None
    try:
        return Color.parse(value).rich_color
    except ColorParseError:
        return None
