"""The assistant's Markdown widget, in its own module so the Markdown machinery (markdown-it, the block
widgets) is imported on the first reply rather than before the first frame."""

from __future__ import annotations

from textual.widgets import Markdown


class AssistantMessage(Markdown):
    """One assistant reply, or one segment of a long one (rendered Markdown, code blocks highlighted)."""
