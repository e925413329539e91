"""Switching what the TUI's session stands on: another model, Ollama, a profile, a provider set up now
(``/model``, ``/ollama``, ``/profile``, ``/login``), or another saved conversation (``/sessions``).

A switch builds a new :class:`~swebash_ai.session.Session` from new settings in a thread and keeps what the
user chose for this conversation: the conversation itself, its background processes and the approval mode in
force. Kept apart from the controller, which dispatches these commands here and meets :class:`SwitchHost`, so
this module sits below it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from swebash_ai.frontends.tui.host import ControllerHost
    from swebash_ai.providers import OllamaOffer
    from swebash_ai.session import Session

log = logging.getLogger(__name__)


class SwitchHost(Protocol):
    """What a switch uses of its owner (:class:`~swebash_ai.frontends.tui.controller.Controller`): the app, the
    session once it is ready, and how the screen shows a session (its conversation, notices, provider, setup)."""

    @property
    def app(self) -> ControllerHost: ...

    async def ready_session(self) -> Session | None: ...

    async def clear_screen(self) -> None: ...

    def render_conversation(self, session: Session) -> None: ...

    def show_notices(self, session: Session | None) -> None: ...

    def show_provider(self, session: Session, offer: OllamaOffer | None = None, *, starting: bool = False) -> None: ...

    def open_setup(self, *, offer: OllamaOffer | None = None, reason: str = "", pending: str | None = None) -> None: ...

    async def start_mcp(self, session: Session) -> None: ...


class SessionSwitch:
    """The slash commands that replace the session or its conversation."""

    def __init__(self, controller: SwitchHost) -> None:
        self.controller = controller

    @property
    def app(self) -> ControllerHost:
        return self.controller.app

    async def cmd_sessions(self, arg: str) -> None:
        session = await self.controller.ready_session()
        if session is None:
            return
        if arg:
            await self.resume(arg)
            return
        from swebash_ai.agent.session_files import list_sessions
        from swebash_ai.frontends.tui.screens.sessions import SessionsScreen

        found = [s for s in list_sessions(session.loaded.locations.sessions_dir)
                 if s.id != session.conversation.id]

        async def picked(session_id: str | None) -> None:
            if session_id:
                await self.resume(session_id)

        await self.app.push_screen(SessionsScreen(found), callback=picked)

    async def resume(self, session_id: str) -> None:
        session = self.app.session
        if session is None:
            return
        session.save()
        session.resume(session_id)  # raises ConfigError (shown by command()) when not found
        await self.controller.clear_screen()
        self.app.status.reset_usage()
        self.controller.render_conversation(session)
        self.controller.show_notices(session)  # the save of the conversation left behind may have forked it

    async def cmd_model(self, arg: str) -> None:
        session = await self.controller.ready_session()
        if session is None:
            return
        if not arg:
            why = f" ({session.choice.reason})" if session.choice else ""
            self.app.chat.add_notice(f"Model: {session.model or 'none'}{why}. Switch with /model NAME.")
            return
        await self.rebuild({"model": arg}, session.loaded.profile)

    async def cmd_ollama(self, arg: str) -> None:
        from swebash_ai.providers import ollama_offer

        session = await self.controller.ready_session()
        if session is None:
            return
        offer = await asyncio.to_thread(ollama_offer)
        if offer is None:
            from swebash_ai.providers import ollama_host

            self.app.chat.add_error("No Ollama server", f"Nothing answers at {ollama_host()} with a model.",
                                    "Start Ollama (ollama serve), pull a model (ollama pull llama3.1), or set "
                                    "OLLAMA_HOST.")
            return
        if arg and arg not in offer.models:
            self.app.chat.add_error("Unknown Ollama model", f"{offer.host} has no model '{arg}'.",
                                    f"Its models: {', '.join(offer.models)}.")
            return
        choice = offer.choice(arg or None)
        await self.rebuild({"model": choice.model, "api_base": choice.api_base}, session.loaded.profile)

    async def cmd_login(self, arg: str) -> None:
        """``/login``: the setup screen, any time (a new provider becomes the default profile)."""
        session = await self.controller.ready_session()
        if session is None:
            return
        from swebash_ai.providers import ollama_offer

        self.controller.open_setup(offer=await asyncio.to_thread(ollama_offer))

    async def cmd_profile(self, arg: str) -> None:
        session = await self.controller.ready_session()
        if session is None:
            return
        loaded = session.loaded
        if not arg:
            names = ", ".join(loaded.profiles) or f"none (add [profiles.NAME] tables to {loaded.config_file})"
            self.app.chat.add_notice(f"Profile: {loaded.profile or '(none)'}. Profiles: {names}.")
            return
        await self.rebuild({}, arg)

    async def rebuild(self, flags: dict[str, Any], profile: str | None) -> None:
        """A new session with other settings, keeping the conversation (runs the build in a thread)."""
        from swebash_ai.config.settings import load_settings
        from swebash_ai.session import Session

        app = self.app
        old = app.session
        assert old is not None

        def build() -> Session:
            loaded = load_settings(flags, profile=profile)
            session = Session(loaded, approver=app.approver, cwd=app.cwd, tools=app.tools, services=app.services,
                              conversation=old.conversation, probe_ollama=False)  # offered, never implied
            preload_provider(session)  # e.g. litellm for a non-OpenAI model, before the next question
            return session

        new = await asyncio.to_thread(build)  # ConfigError propagates to command(), shown in the chat
        if not app.is_running:  # the user quit while it was built (litellm's import takes seconds): leave quietly
            await new.aclose()
            return
        new.take_processes(old)  # background processes go on with the conversation
        # The approval mode in force is the user's choice for this conversation (Shift+Tab, --approval-mode):
        # a switch of model or profile must not quietly change what runs unasked. Read after the build, so a
        # Shift+Tab pressed meanwhile counts.
        new.set_mode(old.gate.mode)
        if old.mcp is not None:  # the old session's MCP servers end; the new session starts its own
            app.engine.submit(old.aclose())
        if new.loaded.mcp_servers:
            app.run_worker(self.controller.start_mcp(new), group="mcp", exit_on_error=False)
        app.session = new
        app.loaded = new.loaded
        self.controller.show_provider(new)
        app.chat.add_notice(f"Now using {new.model or 'no provider'}"
                            + (f" (profile {new.loaded.profile})" if new.loaded.profile else "") + ".")


def preload_provider(session: Session) -> None:
    """Import the provider's library now (in a thread) so the first question does not wait for it."""
    choice = session.choice
    try:
        if choice is not None and choice.via_litellm:
            from swebash_ai.providers.litellm_provider import import_litellm

            import_litellm()
        elif session.has_provider:
            from swebash_ai.providers.http_provider import preload_http

            preload_http()
    except Exception as exc:  # the turn will report a real problem; a preload must never crash
        log.debug("provider preload failed: %s", exc)
