"""The line that stands for the chat's oldest messages, kept as blueprints, not widgets.

Folding and shelving (see :class:`~swebash_ai.frontends.tui.widgets.chat.Chapter`) keep a long conversation's layout
passes short, but every message stays a widget: memory and the DOM grew with every turn of a long session
(about one widget per message). Beyond :data:`MOUNTED_CHAPTERS` chapters, the oldest chapter's messages are
turned into blueprints (how to build each one again: its class and text, see
:func:`~swebash_ai.frontends.tui.widgets.chat.blueprint`) and the chapter is removed; the
line at the top says how many messages wait there, and Enter on it (or a click) mounts the newest of them
again, :data:`SHOW_MORE` chapters at a time. Chapters are only stored while the view follows the end of the
conversation (nothing moves under the reader's eyes) or before anything is drawn (a resumed session).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widget import Widget
from textual.widgets import Static

MOUNTED_CHAPTERS = 4
"""Chapters kept as widgets (12 messages each, several screens) before the oldest are stored as blueprints.

A message widget costs tens of KB however short its text (Textual's styles and caches, its message queue,
the rendered lines of a reply); forty chapters were some 480 of them, and a session had to run about 200
turns before the first was stored. A blueprint holds the text alone."""
SHOW_MORE = 5
"""Chapters mounted again per Enter (or click) on the "earlier messages" line."""

Blueprint = Callable[[], Widget]


class EarlierLine(Static, can_focus=True):
    """A pane's first line standing for what it keeps as plain data (the chat's stored messages, the tool
    pane's earlier calls): Enter, Space or a click asks the pane to ``show_earlier()``."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter,space", "show_more", "Show earlier", show=False)]

    def action_show_more(self) -> None:
        show = getattr(self.parent, "show_earlier", None)
        if callable(show):
            show()

    def on_click(self) -> None:
        self.action_show_more()


class EarlierMessages(EarlierLine):
    """The first line of the chat while messages are stored."""

    DEFAULT_CSS = """
    EarlierMessages {
        height: 1;
        color: $text-muted;
        padding: 0 1;
    }
    EarlierMessages:focus {
        background: $boost;
    }
    """

    def set_count(self, count: int) -> None:
        noun = "message" if count == 1 else "messages"
        self.update(f"▲ {count} earlier {noun}: Enter or click to show more")
