"""What the app does when no provider is configured: the setup screen (at start, ``/login``, or when a question
comes without a provider), and the one-line notice, said once, that names ``/login``.

Apart from ``controller.py`` so each stays small; the controller owns one :class:`ProviderSetup` and meets
:class:`SetupHost`, so this module sits below it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from swebash_ai.agent.images import ImageAttachment
    from swebash_ai.commands.setup_flow import Saved
    from swebash_ai.frontends.tui.host import ControllerHost
    from swebash_ai.frontends.tui.session_switch import SessionSwitch
    from swebash_ai.providers import OllamaOffer
    from swebash_ai.session import Session

NO_PROVIDER_NOTICE = "No model provider is configured: /login sets one up (!command works without one)."


class SetupHost(Protocol):
    """What the setup uses of its owner (:class:`~swebash_ai.frontends.tui.controller.Controller`): the app, the
    switch to the saved provider, and a turn for the question that waited for it."""

    @property
    def app(self) -> ControllerHost: ...

    @property
    def switch(self) -> SessionSwitch: ...

    def start_turn(self, text: str, *, shell: bool, prepare: bool = True,
                   images: Sequence[ImageAttachment] = ()) -> None: ...


class ProviderSetup:
    """Opens the setup screen and switches the session to what it saved."""

    def __init__(self, controller: SetupHost) -> None:
        self.controller = controller
        self.told = False
        self.is_open = False

    def show_provider(self, session: Session, offer: OllamaOffer | None = None, *, starting: bool = False) -> None:
        """The status bar's model; with none, the setup screen at start, else the notice (and an Ollama offer)."""
        app = self.controller.app
        app.status.set_info(session.model if session.has_provider else "no provider",
                            session.loaded.profile, session.cwd)
        app.status.set_mode(session.gate.mode)
        if session.has_provider:
            return
        if starting and app.setup_on_start:  # the setup screen is the one action; it offers Ollama too
            self.open(offer=offer)
            return
        self.tell_no_provider()
        if offer is not None:
            others = f" (also: {', '.join(offer.models[1:])})" if len(offer.models) > 1 else ""
            app.chat.add_notice(
                f"A local Ollama server answers at {offer.host} with {offer.models[0]}{others}. "
                f"Type /ollama to use {offer.models[0]}, or /ollama MODEL for another.")

    def tell_no_provider(self) -> None:
        """The "no provider" notice, once per app: it names the one thing to do."""
        if not self.told:
            self.told = True
            self.controller.app.chat.add_notice(NO_PROVIDER_NOTICE, "warning")

    def open(self, *, offer: OllamaOffer | None = None, reason: str = "", pending: str | None = None,
             images: Sequence[ImageAttachment] = ()) -> None:
        """Push the setup screen; when it saves a provider, switch to it (and ask ``pending``, with the
        ``images`` that went with it, then)."""
        from swebash_ai.frontends.tui.screens.setup import SetupScreen

        controller = self.controller
        app = controller.app
        session = app.session
        if self.is_open or session is None:
            return
        self.is_open = True

        async def done(saved: Saved | None) -> None:
            self.is_open = False
            if saved is None:
                if not (app.session is not None and app.session.has_provider):
                    self.tell_no_provider()
                return
            app.chat.add_notice(saved.summary())
            try:
                await controller.switch.rebuild({}, saved.profile)
            except Exception as exc:  # shown like a command's failure; the saved file stays for a fix
                from swebash_ai.errors import SwebashError

                if not isinstance(exc, SwebashError):
                    raise
                app.chat.add_error(exc.title, exc.message, exc.hint)
                return
            if pending and app.session is not None and app.session.has_provider and not app.busy:
                controller.start_turn(pending, shell=False, images=images)  # shown in the chat when it was typed

        app.push_screen(SetupScreen(session.loaded.config_file, ollama=offer, reason=reason), callback=done)
