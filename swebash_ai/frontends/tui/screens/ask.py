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


class AnswerInput(Input):
    """The free-text field: a digit typed into it while it is empty chooses that option instead."""

    async def _on_key(self, event: Key) -> None:
        screen = self.screen
        if (not self.value and event.character and event.character.isdigit() and isinstance(screen, AskScreen)
                and screen.pick(int(event.character))):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)


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
                yield AnswerInput(placeholder="Type an answer and press Enter", id="ask-input")
            keys = f"1-{len(q.options)} choose · " if q.options else ""
            yield Static(Content.styled(f"{keys}Esc: no answer", "$text-muted"), id="ask-keys")

    def on_mount(self) -> None:
        if self.question.allow_free_text:
            self.query_one("#ask-input", Input).focus()
        elif self.question.options:
            self.query_one("#option-1", Button).focus()

    def on_key(self, event: Key) -> None:
        """Digits choose an option while the answer field is not focused (see :class:`AnswerInput` for it)."""
        if event.character and event.character.isdigit() and self.pick(int(event.character)):
            event.stop()
            event.prevent_default()

    def pick(self, number: int) -> bool:
        if 1 <= number <= len(self.question.options):
            self.choose(number)
            return True
        return False

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
