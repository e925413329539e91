"""The prompt shown when a project's ``.swebash-ai/rules.toml`` would allow something or run hooks.

It lists every rule and hook of the file, and says so when the user trusted an earlier version of it (the
file, or a file its hooks run, changed since: the question must not read as the one already answered). Trust
(t) records the user's trust with the file's hash (a change asks again); Not now (n, Esc; the default) leaves
its allow rules and hooks out, its ask and deny rules in.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from swebash_ai.safety.terminal_text import safe


class TrustScreen(ModalScreen[bool]):
    """Asks whether to trust a project's rules file; dismisses with True (trust) or False."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t", "answer(True)", "Trust"),
        Binding("n,escape", "answer(False)", "Not now"),
    ]

    def __init__(self, path: str, lines: list[str], *, changed: bool = False) -> None:
        super().__init__(id="trust")
        self.path = path
        self.lines = lines
        self.changed = changed
        """The user trusted another version of the file: it, or a file its hooks run, changed since."""

    def compose(self) -> Any:
        with Vertical(id="confirm-dialog"):
            title = ("The rules of this project changed since you trusted them: trust them again?" if self.changed
                     else "Trust the rules of this project?")
            yield Static(Content.assemble((title, "bold")), id="confirm-title")
            yield Static(Content(safe(self.path, visible=True)), id="confirm-summary")
            with VerticalScroll(id="confirm-detail"):
                yield Static(Content("\n".join(safe(line, visible=True) for line in self.lines)),
                             id="trust-lines")
            changed = ("It, or a file its hooks run, changed since you trusted it: read the list again. "
                       if self.changed else "")
            yield Static(Content(f"The repository wrote this file. {changed}Its ask and deny rules apply anyway; its "
                                 "allow rules and hooks only if you trust it, until it or a file it covers changes."),
                         id="confirm-reasons")
            with Horizontal(id="confirm-buttons"):
                yield Button("Trust (t)", id="trust-yes", variant="warning", compact=True)
                yield Button("Not now (n)", id="trust-no", variant="primary", compact=True)

    def on_mount(self) -> None:
        self.query_one("#trust-no", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "trust-yes")

    def action_answer(self, trust: bool) -> None:
        self.dismiss(trust)
