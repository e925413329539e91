"""The modal that shows the model's question (``ask_user``): options on the keys 1-9, a text field when free
text is allowed, Esc for "no answer". Dismisses with an :class:`~swebash_ai.tools.ask.Answer`."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.events import Key
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from swebash_ai.tools.ask import Answer, Question


class AskScreen(ModalScreen[Answer]):
    """One question from the model; the answer (or "no answer") is the tool's result."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "no_answer", "No answer")]

    def __init__(self, question: Question) -> None:
        super().__init__(id="ask")
        self.question = question

    def compose(self) -> Any:
        q = self.question
        with Vertical(id="ask-dialog"):
            yield Static(Content.styled("The assistant asks", "bold"), id="ask-title")
            yield Static(Content(q.question), id="ask-question")
            for n, option in enumerate(q.options, 1):
                yield Button(f"{n}. {option}", id=f"option-{n}", classes="ask-option", compact=True)
            if q.allow_free_text:
                yield Input(placeholder="Type an answer and press Enter", id="ask-input")
            keys = f"1-{len(q.options)} choose · " if q.options else ""
            yield Static(Content.styled(f"{keys}Esc: no answer", "$text-muted"), id="ask-keys")

    def on_mount(self) -> None:
        if self.question.allow_free_text:
            self.query_one("#ask-input", Input).focus()
        elif self.question.options:
            self.query_one("#option-1", Button).focus()

    def on_key(self, event: Key) -> None:
        # Digits pick an option unless the user is typing an answer that already has text in it.
        if not (event.character and event.character.isdigit()):
            return
        field = self.query("#ask-input")
        if field and isinstance(self.focused, Input) and self.focused.value:
            return
        number = int(event.character)
        if 1 <= number <= len(self.question.options):
            event.stop()
            event.prevent_default()
            self.choose(number)

    def choose(self, number: int) -> None:
        self.dismiss(Answer(self.question.options[number - 1], option=number))

    @on(Button.Pressed, ".ask-option")
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.choose(int(str(event.button.id).removeprefix("option-")))

    @on(Input.Submitted, "#ask-input")
    def _typed(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        self.dismiss(Answer(text) if text else Answer(None))

    def action_no_answer(self) -> None:
        self.dismiss(Answer(None))
