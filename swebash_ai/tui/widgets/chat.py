"""The chat pane: user messages, streamed assistant Markdown, notices and errors, each visually distinct.

Assistant replies stream through :class:`textual.widgets.markdown.MarkdownStream`, which coalesces the
fragments that arrive while the previous append is still rendering, so a fast stream costs a handful of
re-renders per second instead of one per token.
"""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.content import Content
from textual.geometry import Size
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream


class UserMessage(Static):
    """What the user typed."""


class AssistantMessage(Markdown):
    """One assistant reply (rendered Markdown, code blocks highlighted)."""


class NoticeMessage(Static):
    """Something the user should know that is not part of an answer (a retry, a limit, a cancel)."""


class ErrorMessage(Static):
    """An error, with its title, message and hint."""


class InfoMessage(Static):
    """Help and other app-generated text (/help, no-provider instructions, /tools)."""


class FollowingScroll(VerticalScroll):
    """Top-aligned while the content fits; once it overflows, stays scrolled to the end (until the user
    scrolls up, and again when they scroll back down)."""

    def watch_virtual_size(self, size: Size) -> None:
        if not self.is_anchored and size.height > self.scrollable_content_region.height:
            self.anchor()


class ChatPane(FollowingScroll):
    """The conversation, newest at the bottom."""

    can_focus = True

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._reply: AssistantMessage | None = None
        self._stream: MarkdownStream | None = None

    # --- plain messages -------------------------------------------------------------------------------
    def add_user(self, text: str) -> UserMessage:
        widget = UserMessage(Content(text))
        self.mount(widget)
        return widget

    def add_notice(self, text: str, level: str = "info") -> NoticeMessage:
        widget = NoticeMessage(Content(text), classes=f"-{level}")
        self.mount(widget)
        return widget

    def add_error(self, title: str, message: str, hint: str | None = None) -> ErrorMessage:
        body = Content.assemble((title, "bold"), "\n", message)
        if hint:
            body = Content.assemble(body, "\n", (hint, "italic"))
        widget = ErrorMessage(body)
        self.mount(widget)
        return widget

    def add_info(self, text: str | Content, title: str = "") -> InfoMessage:
        body = Content(text) if isinstance(text, str) else text
        if title:
            body = Content.assemble((title, "bold"), "\n\n", body)
        widget = InfoMessage(body)
        self.mount(widget)
        return widget

    def add_assistant(self, markdown: str) -> AssistantMessage:
        """A finished assistant message (a resumed conversation)."""
        widget = AssistantMessage(markdown)
        self.mount(widget)
        return widget

    # --- streaming ------------------------------------------------------------------------------------
    @property
    def streaming(self) -> bool:
        return self._stream is not None

    async def write_reply(self, fragment: str) -> None:
        """Append a fragment to the reply being streamed (starting one when needed)."""
        if self._stream is None:
            self._reply = AssistantMessage()
            await self.mount(self._reply)
            self._stream = Markdown.get_stream(self._reply)
        await self._stream.write(fragment)

    async def end_reply(self) -> None:
        """Flush and close the reply being streamed (text after a tool call starts a new one)."""
        stream, self._stream = self._stream, None
        self._reply = None
        if stream is not None:
            await stream.stop()

    async def clear(self) -> None:
        await self.end_reply()
        await self.remove_children()
        self.anchor(False)
