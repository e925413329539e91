"""The saved-sessions picker (/sessions): newest first; Enter resumes, Esc closes."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from swebash_ai.agent.session_files import SessionInfo
from swebash_ai.frontends.tui.shown import shown


class SessionsScreen(ModalScreen[str | None]):
    """Lists saved sessions; dismisses with the chosen session id, or ``None``."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def __init__(self, sessions: Sequence[SessionInfo]) -> None:
        super().__init__(id="sessions")
        self.sessions = list(sessions)

    def compose(self) -> Any:
        with Vertical(id="sessions-dialog"):
            yield Static("Resume a session (Enter) · Esc closes", id="sessions-title")
            options = [
                Option(
                    Content.assemble(
                        (time.strftime("%Y-%m-%d %H:%M", time.localtime(s.updated)), "dim"),
                        "  ", shown(s.title) if s.title else "(empty)", ("  " + s.id, "dim"),
                    ),
                    id=s.id,
                )
                for s in self.sessions
            ]
            if options:
                yield OptionList(*options, id="sessions-list")
            else:
                yield Static("No saved sessions yet.", id="sessions-empty")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_close(self) -> None:
        self.dismiss(None)
