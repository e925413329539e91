"""The ACP agent: each ACP request mapped to a :class:`~swebash_ai.session.Session` call.

One swebash-ai session per ACP session (``session/new``: a new conversation with the client's ``cwd`` as its
workspace; ``session/load``: a saved one, its history replayed). A prompt runs a turn; its events go out as
``session/update`` notifications (:mod:`.updates`); questions go through ``session/request_permission``
(:mod:`.asking`). ``session/cancel`` stops the turn as Ctrl-C does. Nothing here decides what is safe: the
session's policy, rules, mode and hooks do, as in every other front end.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import schema
from acp.exceptions import RequestError

from swebash_ai import __version__
from swebash_ai.agent import events as ev
from swebash_ai.agent.decide import MODES
from swebash_ai.errors import SwebashError
from swebash_ai.frontends.acp.asking import EditorApprover, describe_rule
from swebash_ai.frontends.acp.updates import TurnUpdates, plan_update, prompt_text, replay

if TYPE_CHECKING:
    from swebash_ai.config.settings import LoadedSettings
    from swebash_ai.session import Session

log = logging.getLogger(__name__)

SETUP_METHOD = "swebash-ai-setup"
SETUP_HELP = ("No model provider is configured for swebash-ai. Run `swebash-ai setup` in a terminal (it chooses a "
              "provider and model, tests them and saves them), or set SWEBASH_AI_MODEL and a key; then try again.")
MODE_TEXT = {"ask": "Asks before what the policy flags",
             "accept-edits": "Edits inside the workspace apply without asking",
             "auto": "Commands run unasked inside the sandbox; edits apply; catastrophes still ask",
             "plan": "Read-only: writes and commands not proven read-only are refused"}
"""Descriptions of the approval modes; a mode defined in agent/decide.py and not here is offered by its name."""
STOP_REASONS: dict[str, schema.StopReason] = {"answered": "end_turn", "max_iterations": "max_turn_requests",
                                              "max_tool_calls": "max_turn_requests",
                                              "max_turn_cost": "max_turn_requests", "max_turn_tokens": "max_tokens",
                                              "loop": "end_turn", "cancelled": "cancelled"}
_SERVER_NAME = re.compile(r"[^A-Za-z0-9_-]")


@dataclasses.dataclass
class EditorSession:
    """One ACP session: its swebash-ai session and the state of its turn."""

    id: str
    session: Session
    approver: EditorApprover
    running: bool = False
    cancelled: bool = False
    shown: dict[str, asyncio.Event] = dataclasses.field(default_factory=dict)
    updates: TurnUpdates | None = None

    def event(self, call_id: str) -> asyncio.Event:
        return self.shown.setdefault(call_id, asyncio.Event())


class SwebashAgent:
    """The ``acp.Agent`` of ``swebash-ai acp``."""

    def __init__(self, load: Callable[[], LoadedSettings], loaded: LoadedSettings | None = None) -> None:
        self.load = load
        self.loaded = loaded or load()
        self.conn: Any = None
        self.sessions: dict[str, EditorSession] = {}
        self._later: set[asyncio.Task[None]] = set()
        self._skipped: list[str] = []
        """The editor's MCP servers left out of the session being opened (told once it is open)."""

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    # --- setup ---------------------------------------------------------------------------------------------
    def _has_provider(self) -> bool:
        from swebash_ai.providers import choose_provider

        settings = self.loaded.settings
        return choose_provider(settings, None, model_from=self.loaded.model_from) is not None

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **_: Any) -> schema.InitializeResponse:
        auth: list[schema.EnvVarAuthMethod | schema.TerminalAuthMethod | schema.AuthMethodAgent] = []
        if not self._has_provider():
            auth.append(schema.AuthMethodAgent(
                id=SETUP_METHOD, name="Run swebash-ai setup", description=SETUP_HELP))
        return schema.InitializeResponse(
            protocol_version=1,
            agent_capabilities=schema.AgentCapabilities(
                load_session=True,
                prompt_capabilities=schema.PromptCapabilities(image=True, audio=False, embedded_context=True),
                mcp_capabilities=schema.McpCapabilities(http=False, sse=False)),
            auth_methods=auth,
            agent_info=schema.Implementation(name="swebash-ai", title="swebash-ai", version=__version__))

    async def authenticate(self, method_id: str, **_: Any) -> schema.AuthenticateResponse:
        """``swebash-ai setup`` was run meanwhile (or not): the settings are read again."""
        if method_id != SETUP_METHOD:
            raise RequestError.invalid_params({"details": f"unknown authentication method {method_id!r}"})
        try:
            self.loaded = self.load()
        except SwebashError as exc:
            raise RequestError.auth_required({"details": exc.message}) from exc
        if not self._has_provider():
            raise RequestError.auth_required({"details": SETUP_HELP})
        return schema.AuthenticateResponse()

    # --- sessions ------------------------------------------------------------------------------------------
    def _with_servers(self, servers: list[Any] | None) -> LoadedSettings:
        """The settings with the client's MCP servers beside the configured ones: every tool of theirs asks, as
        a configured server's does unless its ``auto_approve`` names it (theirs name none)."""
        if not servers:
            return self.loaded
        from swebash_ai.config.mcp import McpServerConfig

        merged = dict(self.loaded.mcp_servers)
        for server in servers:
            if not isinstance(server, schema.McpServerStdio):  # not advertised: left out, and the person told
                self._skipped.append(f"MCP server {server.name!r} is not used: swebash-ai takes stdio servers "
                                     "from the editor (configure others in [mcp_servers], see docs/mcp.md).")
                continue
            name = _SERVER_NAME.sub("-", server.name)[:24] or "editor"
            while name in merged:
                name = f"{name[:28]}-ed"
            merged[name] = McpServerConfig.model_validate({"name": name, "command": server.command,
                                                           "args": list(server.args),
                                                           "env": {e.name: e.value for e in server.env}})
        return dataclasses.replace(self.loaded, mcp_servers=merged)

    def _take_skipped(self) -> list[str]:
        skipped, self._skipped = self._skipped, []
        return skipped

    def _open(self, cwd: str, servers: list[Any] | None) -> tuple[Session, EditorApprover]:
        from swebash_ai.session import Session

        where = Path(cwd)
        if not where.is_absolute() or not where.is_dir():
            raise RequestError.invalid_params({"details": f"cwd must be an absolute path to a directory: {cwd!r}"})
        loaded = self._with_servers(servers)
        approver = EditorApprover(self.conn, "", where.resolve(), shown=self._shown, save_rule=self._save_rule,
                                  allowed=self._allowed)
        session = Session(loaded, approver=approver, cwd=where)
        if not session.has_provider:
            raise RequestError.auth_required({"details": SETUP_HELP})
        return session, approver

    def _register(self, session_id: str, session: Session, approver: EditorApprover) -> EditorSession:
        approver.session_id = session_id
        conv = self.sessions[session_id] = EditorSession(session_id, session, approver)
        return conv

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any) -> schema.NewSessionResponse:
        session, approver = self._open(cwd, mcp_servers)
        conv = self._register(session.conversation.id, session, approver)
        problems = [*self._take_skipped(), *await session.start_mcp()]
        self._after_response(self._greet(conv, problems))
        return schema.NewSessionResponse(session_id=conv.id, modes=self._modes(session))

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           **_: Any) -> schema.LoadSessionResponse:
        session, approver = self._open(cwd, mcp_servers)
        try:
            session.resume(session_id)
        except SwebashError as exc:
            await session.aclose()
            raise RequestError.invalid_params({"details": exc.message, "sessionId": session_id}) from exc
        old = self.sessions.pop(session_id, None)
        if old is not None:
            await self._end(old)
        conv = self._register(session_id, session, approver)
        problems = [*self._take_skipped(), *await session.start_mcp()]
        await replay(session.conversation.messages, self._sender(conv.id), session.cwd)
        plan = session.conversation.meta.get("plan")
        if plan is not None:
            from swebash_ai.tools.plan import Plan

            restored = Plan.from_json(plan)
            if restored is not None:
                await self._sender(conv.id)(plan_update(restored))
        self._after_response(self._greet(conv, problems))
        return schema.LoadSessionResponse(modes=self._modes(session))

    def _conversation(self, session_id: str) -> EditorSession:
        conv = self.sessions.get(session_id)
        if conv is None:
            raise RequestError.invalid_params({"details": f"no session {session_id!r} (session/new or session/load "
                                               "first)", "sessionId": session_id})
        return conv

    def _modes(self, session: Session) -> schema.SessionModeState:
        return schema.SessionModeState(current_mode_id=session.gate.mode, available_modes=[
            schema.SessionMode(id=mode, name=mode, description=MODE_TEXT.get(mode)) for mode in MODES])

    async def set_session_mode(self, session_id: str, mode_id: str, **_: Any) -> schema.SetSessionModeResponse:
        conv = self._conversation(session_id)
        if mode_id not in MODES:
            raise RequestError.invalid_params({"details": f"unknown mode {mode_id!r}; modes: {', '.join(MODES)}"})
        try:
            mode = conv.session.set_mode(mode_id)
        except SwebashError as exc:  # a mode the session refuses here
            raise RequestError.invalid_params({"details": exc.message}) from exc
        await self._sender(session_id)(schema.CurrentModeUpdate(session_update="current_mode_update",
                                                                current_mode_id=mode))
        return schema.SetSessionModeResponse()

    # --- turns ---------------------------------------------------------------------------------------------
    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> schema.PromptResponse:
        conv = self._conversation(session_id)
        if conv.running:
            raise RequestError.invalid_request({"details": "a turn is already running in this session"})
        session = conv.session
        updates = conv.updates = TurnUpdates(self._sender(session_id), session.cwd)
        conv.running, conv.cancelled, conv.shown = True, False, {}
        reason: schema.StopReason = "end_turn"
        try:
            blocks: list[tuple[bytes, str]] = []
            text, notices = prompt_text(prompt, self._read_refusal(session), blocks)
            prepared = session.prepare(text, builtins=())
            question, images = prepared.text, list(prepared.images)
            if blocks:
                from swebash_ai.agent.images import ImageRefusal, image_attachment, limits_for

                for number, (data, mime) in enumerate(blocks, 1):
                    got = image_attachment(data, mime, name=f"image {number} from the editor",
                                           limits=limits_for(session.model))
                    if isinstance(got, ImageRefusal):
                        notices.append(got.notice)
                    else:
                        question, images = f"{question}\n\n{got.header}", [*images, got]
            for line in [*notices, *prepared.lines, *prepared.notices]:
                await updates.notice(line)
            events = session.run(question, images)
            try:
                async for event in events:
                    if conv.cancelled:  # a cancel that came before the loop had a turn to stop
                        session.cancel()
                    if isinstance(event, ev.TurnFailed):
                        if not conv.cancelled:
                            raise RequestError.internal_error({"details": event.error.message,
                                                               "title": event.error.title})
                        continue
                    await updates.handle(event)
                    if isinstance(event, ev.ToolCallStarted):
                        conv.event(event.call_id).set()
                    elif isinstance(event, ev.TurnFinished):
                        reason = STOP_REASONS.get(event.reason, "end_turn")
            finally:
                await events.aclose()
                await updates.close_open("Cancelled: the turn ended before this call finished.")
                while session.notices:
                    await updates.notice(session.notices.pop(0), "warning")
        except SwebashError as exc:
            raise RequestError.internal_error({"details": exc.message, "title": exc.title}) from exc
        finally:
            conv.running = False
        return schema.PromptResponse(stop_reason="cancelled" if conv.cancelled else reason)

    async def cancel(self, session_id: str, **_: Any) -> None:
        conv = self.sessions.get(session_id)
        if conv is None or not conv.running:
            return
        conv.cancelled = True
        conv.session.cancel()

    # --- helpers -------------------------------------------------------------------------------------------
    def _sender(self, session_id: str) -> Callable[[Any], Any]:
        async def send(update: Any) -> None:
            await self.conn.session_update(session_id=session_id, update=update)

        return send

    async def _shown(self, session_id: str, call_id: str) -> None:
        conv = self.sessions.get(session_id)
        if conv is not None:
            await conv.event(call_id).wait()

    async def _allowed(self, session_id: str, call_id: str) -> None:
        conv = self.sessions.get(session_id)
        if conv is not None and conv.updates is not None:
            await conv.updates.progress(call_id, status="in_progress")

    async def _save_rule(self, session_id: str, rule: dict[str, Any]) -> None:
        conv = self.sessions.get(session_id)
        if conv is None:
            return
        updates = conv.updates or TurnUpdates(self._sender(session_id), conv.session.cwd)
        try:
            where = conv.session.save_rule(rule)
        except SwebashError as exc:
            await updates.notice(f"Rule not saved: {exc.message}", "warning")
            return
        await updates.notice(f"Saved: {describe_rule(rule)} ({where}). `swebash-ai rules` lists and removes rules.")

    @staticmethod
    def _read_refusal(session: Session) -> Callable[[str], str | None]:
        def refusal(path: str) -> str | None:
            verdict = session.context.path_policy.check(path, "read", str(session.cwd))
            return ("; ".join(verdict.reasons) or "refused") if verdict.decision == "deny" else None

        return refusal

    def _after_response(self, work: Any) -> None:
        """Run ``work`` once the response being handled has gone out (it is queued before this task runs)."""
        task = asyncio.get_running_loop().create_task(work)
        self._later.add(task)
        task.add_done_callback(self._later.discard)

    async def _greet(self, conv: EditorSession, problems: list[str]) -> None:
        """What follows a new or loaded session: its commands, and what the person should know."""
        session = conv.session
        send = self._sender(conv.id)
        try:
            commands = session.custom_commands(builtins=())
            await send(schema.AvailableCommandsUpdate(session_update="available_commands_update", available_commands=[
                schema.AvailableCommand(name=c.name, description=c.description or f"{c.scope} command",
                                        input=schema.AvailableCommandInput(
                                            root=schema.UnstructuredCommandInput(hint="arguments")))
                for c in commands.commands.values()]))
            updates = TurnUpdates(send, session.cwd)
            for line in [*problems, *commands.notices, *session.notices]:
                await updates.notice(line, "warning")
            session.notices.clear()
        except (ConnectionError, OSError) as exc:
            log.warning("swebash-ai acp: could not send the session's commands (%s)", exc)

    async def _end(self, conv: EditorSession) -> None:
        conv.session.cancel()
        conv.session.save()
        for line in await conv.session.aclose():
            log.warning("%s", line)

    async def aclose(self) -> None:
        """The client went away: stop every turn and process, save every session."""
        for task in list(self._later):
            task.cancel()
        for conv in list(self.sessions.values()):
            try:
                await self._end(conv)
            except Exception:  # one session's failure must not keep the others' processes alive
                log.warning("swebash-ai acp: closing session %s failed", conv.id, exc_info=True)
        self.sessions.clear()
