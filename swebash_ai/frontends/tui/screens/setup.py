"""The setup screen (opened when no provider is configured, and by ``/login``): pick a provider, paste its key,
pick a model from its list (a text field when it has none), and a test request proves the choice before it
is saved as the default profile. Dismisses with :class:`~swebash_ai.commands.setup_flow.Saved`, or ``None`` (Esc:
nothing was written).

A server address typed without a scheme gets one by the rule of ``swebash-ai setup``
(:mod:`swebash_ai.config.address`: ``http://`` for this machine, ``https://`` for another), said under the field.

The key field is masked and its value goes nowhere but the provider and the save; error lines mask it too.
Network calls go through :mod:`swebash_ai.commands.setup_flow` in a thread (litellm's import for Anthropic takes
seconds), so the screen stays responsive; a result that arrives after Esc is dropped.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Select, Static

from swebash_ai import errors
from swebash_ai.commands.setup_flow import KINDS, Candidate, ProviderKind, Saved, default_base
from swebash_ai.config.address import complete_base

if TYPE_CHECKING:
    from pathlib import Path

    from swebash_ai.providers import OllamaOffer


class ModelList(Select[str]):
    """The listed models: Enter on a chosen model goes on (the screen tests and saves it), as the screen's key
    line says; Space and the arrows open the list, Enter there picks a model and comes back here."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "go_on", "Test and save", show=False),
        Binding("down,space,up", "show_overlay", "Show menu", show=False),
    ]

    class Chosen(Message):
        """Enter on a chosen model."""

    def action_go_on(self) -> None:
        if self.is_blank():
            self.action_show_overlay()
        else:
            self.post_message(self.Chosen())


class SetupScreen(ModalScreen[Saved | None]):
    """Choose, prove and save a provider (see the module docstring)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close_setup", "Leave")]

    def __init__(self, config_path: Path, *, ollama: OllamaOffer | None = None, reason: str = "") -> None:
        super().__init__(id="setup")
        self.config_path = config_path
        self.ollama = ollama
        self.reason = reason
        self.kinds = list(KINDS)  # Ollama too when none answered at start: it may be started meanwhile
        self.models: list[str] | None = None
        self.busy = False
        self._gone = False

    # --- layout -------------------------------------------------------------------------------------
    def compose(self) -> Any:
        with Vertical(id="setup-dialog"):
            yield Static(Content.styled("Set up a model provider", "bold"), id="setup-title")
            if self.reason:
                yield Static(Content(self.reason), id="setup-reason")
            options = [(self._label(k), k.id) for k in self.kinds]
            yield Select(options, prompt="Provider", id="setup-provider", allow_blank=True)
            yield Input(placeholder="Server address, e.g. localhost:8000/v1 or https://host/v1", id="setup-base")
            yield Static("", id="setup-base-note")
            yield Input(placeholder="API key (pasted text stays hidden)", password=True, id="setup-key")
            yield ModelList([], prompt="Model", id="setup-model-list")
            yield Input(placeholder="Model name", id="setup-model")
            yield Button("Test and save", id="setup-go", variant="primary", compact=True)
            yield Static("", id="setup-status")
            yield Static(Content.styled("Enter: next · Esc: leave without saving", "$text-muted"), id="setup-keys")

    def _label(self, kind: ProviderKind) -> str:
        if kind.id == "ollama":
            return f"{kind.label} ({self._ollama_host()})"
        return kind.label

    def _ollama_host(self) -> str:
        """Where Ollama answered at start, else where it listens by default (``OLLAMA_HOST`` or port 11434)."""
        if self.ollama is not None:
            return self.ollama.host
        from swebash_ai.providers import ollama_host

        return ollama_host()

    def on_mount(self) -> None:
        for wid in ("#setup-base", "#setup-base-note", "#setup-key", "#setup-model-list", "#setup-model", "#setup-go"):
            self.query_one(wid).display = False
        self.query_one("#setup-provider", Select).focus()

    # --- state --------------------------------------------------------------------------------------
    @property
    def kind(self) -> ProviderKind | None:
        value = self.query_one("#setup-provider", Select).value
        return next((k for k in self.kinds if k.id == value), None)

    def say(self, text: str, *, error: bool = False) -> None:
        status = self.query_one("#setup-status", Static)
        status.update(Content(text))
        status.set_class(error, "-error")

    def choose(self, kind_id: str) -> None:
        """Select a provider (what picking it in the list does)."""
        self.query_one("#setup-provider", Select).value = kind_id

    @on(Select.Changed, "#setup-provider")
    def _provider_changed(self, event: Select.Changed) -> None:
        kind = self.kind
        self.models = None
        for wid in ("#setup-model-list", "#setup-model"):
            self.query_one(wid).display = False
        if kind is None:
            return
        base = self.query_one("#setup-base", Input)
        base.display = not kind.fixed_base or kind.id == "ollama"  # Ollama: its address, to change if need be
        if kind.id == "ollama" and not base.value:
            base.value = self._ollama_host()
        elif kind.id != "ollama" and base.value == self._ollama_host():
            base.value = ""  # Ollama's address, filled in for it: not a guess for another server
        self._note_added(None)
        key = self.query_one("#setup-key", Input)
        key.display = kind.id != "ollama"
        key.placeholder = ("API key" + (f" from {kind.key_help}" if kind.key_help else "")
                           + ("" if kind.needs_key else " (Enter for none)"))
        self.query_one("#setup-go").display = True
        self.say("")
        if kind.id == "ollama":
            self.fetch_models()  # its model list at once, from its own /api/tags
        elif base.display:
            base.focus()
        elif key.display:
            key.focus()
        else:
            self.fetch_models()

    @on(Input.Submitted, "#setup-base")
    def _base_given(self, event: Input.Submitted) -> None:
        event.stop()
        if self._ready(focus_base=True) is not None:  # the address is checked (and completed) at once
            self.say("")
            if self.kind is not None and self.kind.id == "ollama":
                self.fetch_models()
            else:
                self.query_one("#setup-key", Input).focus()

    @on(Input.Submitted, "#setup-key")
    def _key_given(self, event: Input.Submitted) -> None:
        event.stop()
        self.fetch_models()

    @on(ModelList.Chosen)
    def _model_chosen(self, event: ModelList.Chosen) -> None:
        event.stop()
        self.test_and_save()

    @on(Input.Submitted, "#setup-model")
    def _model_given(self, event: Input.Submitted) -> None:
        event.stop()
        self.test_and_save()

    @on(Button.Pressed, "#setup-go")
    def _go(self, event: Button.Pressed) -> None:
        event.stop()
        self.test_and_save()

    def _base(self, kind: ProviderKind) -> str:
        if kind.fixed_base and kind.id != "ollama":
            base = default_base(kind)
            assert base is not None
            return base
        # The rule of `swebash-ai setup` (config/address.py): a scheme added is said under the field.
        base, added = complete_base(self.query_one("#setup-base", Input).value)
        self._note_added(f"Using {base}: {added}." if added else None)
        if kind.id == "ollama" and not base.endswith("/v1"):
            base += "/v1"  # the field holds Ollama's own address; chats go to its OpenAI-compatible /v1
        return base

    def _note_added(self, text: str | None) -> None:
        note = self.query_one("#setup-base-note", Static)
        note.update(Content(text or ""))
        note.display = text is not None

    def _key(self) -> str | None:
        return self.query_one("#setup-key", Input).value.strip() or None

    def _model(self) -> str:
        if self.models:
            value = self.query_one("#setup-model-list", Select).value
            return value if isinstance(value, str) else ""
        return self.query_one("#setup-model", Input).value.strip()

    # --- network (in a thread; see the module docstring) ---------------------------------------------
    def _ready(self, *, focus_base: bool) -> tuple[ProviderKind, str] | None:
        """The chosen kind and its address, when a request can go out now; else ``None`` (a bad address said)."""
        kind = self.kind
        if kind is None or self.busy:
            return None
        try:
            return kind, self._base(kind)
        except errors.ConfigError as exc:
            self._note_added(None)
            self.say(exc.message, error=True)
            if focus_base:
                self.query_one("#setup-base", Input).focus()
            return None

    def fetch_models(self) -> None:
        if (ready := self._ready(focus_base=True)) is None:
            return
        kind, base = ready
        if kind.needs_key and not self._key():
            self.say(f"{kind.label} needs an API key.", error=True)
            self.query_one("#setup-key", Input).focus()
            return
        self.busy = True
        self.say("Asking for the model list…")
        self.run_worker(self._fetch(kind, base, self._key()), group="setup-net", exclusive=True)

    async def _fetch(self, kind: ProviderKind, base: str, key: str | None) -> None:
        from swebash_ai.commands.setup_flow import explain, list_models

        try:
            models = await asyncio.to_thread(lambda: asyncio.run(list_models(kind, base, key)))
        except errors.ProviderError as exc:
            self.busy = False
            if not self._gone:
                self.say(explain(exc, Candidate(kind, base, key, "")), error=True)
                self._focus_fix(exc)
            return
        self.busy = False
        if not self._gone:
            self.show_models(kind, models)

    def show_models(self, kind: ProviderKind, models: list[str] | None) -> None:
        self.models = models
        listed = self.query_one("#setup-model-list", Select)
        typed = self.query_one("#setup-model", Input)
        listed.display, typed.display = bool(models), not models
        if models:
            listed.set_options([(name, name) for name in models])
            listed.value = kind.default_model if kind.default_model in models else models[0]
            listed_count = f"{len(models)} model{'' if len(models) == 1 else 's'}"
            self.say(f"{listed_count} listed; Space opens the list. Enter tests and saves the chosen one.")
            listed.focus()
        elif kind.id == "ollama":
            host = self.query_one("#setup-base", Input).value
            self.say(f"No Ollama server with a model answers at {host}: start it (ollama serve, ollama pull MODEL) "
                     "or fix the address, then Enter; or type a model's name below.", error=True)
            self.query_one("#setup-base", Input).focus()
        else:
            if not typed.value:
                typed.value = kind.default_model
            self.say("No model list here: type the model's name, then Enter.")
            typed.focus()

    def test_and_save(self) -> None:
        if (ready := self._ready(focus_base=False)) is None:
            return
        kind, base = ready
        model = self._model()
        if not model:
            if self.models is None and not self.query_one("#setup-model", Input).display:
                self.fetch_models()
            else:
                self.say("Choose or type a model first.", error=True)
            return
        candidate = Candidate(kind, base, self._key(), model)
        self.busy = True
        self.say(f"Testing {candidate.full_model}…")
        self.run_worker(self._test(candidate), group="setup-net", exclusive=True)

    async def _test(self, candidate: Candidate) -> None:
        from swebash_ai.commands.setup_flow import explain, save, test_request

        try:
            await asyncio.to_thread(lambda: asyncio.run(test_request(candidate)))
        except errors.ProviderError as exc:
            self.busy = False
            if not self._gone:
                self.say(explain(exc, candidate) + " Nothing was saved.", error=True)
                self._focus_fix(exc)
            return
        if self._gone:  # Esc while the test ran: leave nothing behind
            return
        try:
            saved = save(candidate, candidate.kind.id, self.config_path)
        except errors.ConfigError as exc:
            self.busy = False
            self.say(str(exc), error=True)
            return
        self._gone = True
        self.dismiss(saved)

    def _focus_fix(self, exc: errors.ProviderError) -> None:
        if isinstance(exc, errors.AuthenticationError) and self.query_one("#setup-key").display:
            self.query_one("#setup-key", Input).focus()
        elif isinstance(exc, errors.ModelNotFoundError):
            self.query_one("#setup-model-list" if self.models else "#setup-model").focus()
        elif isinstance(exc, errors.ProviderUnavailableError) and self.query_one("#setup-base").display:
            self.query_one("#setup-base", Input).focus()

    def action_close_setup(self) -> None:
        self._gone = True
        self.dismiss(None)
