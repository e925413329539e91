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
from swebash_ai.frontends.acp.updates import CallIds, TurnUpdates, plan_update, prompt_text, replay
from swebash_ai.words import count

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
MCP_PROMPT_WAIT = 5.0
"""Seconds a prompt waits for MCP servers still starting; then its turn runs without their tools."""
SYSTEM_FOLDERS = frozenset({"bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "run", "sbin",
                            "sys", "usr", "var", "System", "Library", "private"})
"""Top-level folders of the operating system (Linux's hierarchy, macOS's): nothing in them is a project, save
the temporary folders and ``/var/www``, where a web project lives."""
_SHARED_TEMPS = ("/tmp", "/var/tmp")  # noqa: S108 - named to refuse them as workspaces, never written
_PROJECTS_UNDER_SYSTEM = ("var/www", "var/tmp", "private/tmp", "private/var/folders")


def workspace_refusal(where: Path) -> str | None:
    """Why ``where`` (a directory) cannot be an editor session's workspace, or ``None``: the workspace is what
    the tools may read and write, so it must be a project, never the whole disk, the home folder or the
    system's own files."""
    import tempfile

    real = where.resolve()
    home = Path.home().resolve()
    if real == Path(real.anchor):
        return "it is the root folder, and the whole disk would be the workspace"
    if real == home or real in home.parents:
        return "it is your home folder (or above it), and every file you have would be the workspace"
    temps = {Path(tempfile.gettempdir()).resolve(), *(Path(t).resolve() for t in _SHARED_TEMPS)}
    if real in temps:
        return "it is the temporary folder every program shares"
    if any(real.is_relative_to(t) for t in temps) or real.is_relative_to(home):
        return None
    inside = real.relative_to(real.anchor)
    if inside.parts[0] in SYSTEM_FOLDERS and not any(
            inside.is_relative_to(p) and inside != Path(p) for p in _PROJECTS_UNDER_SYSTEM):
        return f"it is a folder of the operating system ({real.anchor}{inside.parts[0]})"
    return None


def _warm(via_litellm: bool, model: str) -> None:
    """Import what the first turn needs (the provider's library, the HTTP client and anyio's asyncio backend,
    which the connection pool loads on its first request) in a thread, while the editor is still opening a
    session: the first answer then starts as soon as a later one would."""
    try:
        if via_litellm:
            from swebash_ai.providers.litellm_provider import import_litellm

            import_litellm()
        else:
            from swebash_ai.providers.http_provider import preload_http

            preload_http(model)
        import anyio._backends._asyncio  # noqa: F401
    except Exception as exc:  # the turn reports a real problem; a warm-up never fails anything
        log.debug("swebash-ai acp: warm-up failed: %s", exc)


@dataclasses.dataclass
class EditorSession:
    """One ACP session: its swebash-ai session and the state of its turn."""

    id: str
    session: Session
    approver: EditorApprover
    running: bool = False
    cancelled: bool = False
    shown: dict[str, asyncio.Event] = dataclasses.field(default_factory=dict)
    """The provider's id of a call of this turn -> set once its ``tool_call`` update went out (until it ends)."""
    updates: TurnUpdates | None = None
    mcp_start: asyncio.Task[None] | None = None
    """The start of the session's MCP servers, in the background."""
    to_ask: list[Any] = dataclasses.field(default_factory=list)
    """The editor's MCP servers put to the person before they start (no sandbox works here)."""

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
        self._to_ask: list[Any] = []
        """The editor's MCP servers of the session being opened that start only after a yes (no sandbox works)."""
        self._warming = False
        self.client_fs = (False, False)
        """Whether the client reads and writes files for the agent (its buffers): ``fs`` of its capabilities."""
        self.client_terminal = False
        """Whether the client runs commands in terminals of its own (``terminal`` of its capabilities)."""

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    # --- setup ---------------------------------------------------------------------------------------------
    def _has_provider(self) -> bool:
        from swebash_ai.providers import choose_provider

        settings = self.loaded.settings
        choice = choose_provider(settings, None, model_from=self.loaded.model_from)
        if choice is not None and not self._warming:  # while the editor opens a session, not in the first turn
            self._warming = True
            self._after_response(asyncio.to_thread(_warm, bool(choice.via_litellm), choice.model))
        return choice is not None

    def warm(self) -> None:
        """Start importing what the first turn needs, before the editor's first message is read."""
        self._has_provider()

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **_: Any) -> schema.InitializeResponse:
        fs = getattr(client_capabilities, "fs", None)
        self.client_fs = (getattr(fs, "read_text_file", False) is True, getattr(fs, "write_text_file", False) is True)
        self.client_terminal = getattr(client_capabilities, "terminal", False) is True
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
    def _with_servers(self, servers: list[Any] | None, cwd: Path) -> LoadedSettings:
        """The settings with the client's MCP servers beside the configured ones. A client's server is a
        command nobody said yes to: it runs in the sandbox, as an unasked command does (``sandbox``), in the
        session's folder; where no sandbox works it is put to the person first (:mod:`.servers`); every tool
        of theirs asks, as a configured server's does unless its ``auto_approve`` names it (theirs name none)."""
        self._to_ask = []  # a session that failed to open leaves none behind
        if not servers:
            return self.loaded
        from swebash_ai.config.mcp import McpServerConfig
        from swebash_ai.frontends.acp.servers import sandbox_works

        merged = dict(self.loaded.mcp_servers)
        confined = any(isinstance(s, schema.McpServerStdio) for s in servers) and sandbox_works(self.loaded.settings)
        for server in servers:
            if not isinstance(server, schema.McpServerStdio):  # not advertised: left out, and the person told
                self._skipped.append(f"MCP server {server.name!r} is not used: swebash-ai takes stdio servers "
                                     "from the editor (configure others in [mcp_servers], see docs/mcp.md).")
                continue
            name = _SERVER_NAME.sub("-", server.name)[:24] or "editor"
            while name in merged or name in {c.name for c in self._to_ask}:
                name = f"{name[:28]}-ed"
            config = McpServerConfig.model_validate({"name": name, "command": server.command,
                                                     "args": list(server.args), "cwd": str(cwd),
                                                     "env": {e.name: e.value for e in server.env},
                                                     "sandbox": confined,
                                                     "startup_timeout": self.loaded.settings.acp_mcp_startup_timeout})
            config._startup_setting = "acp_mcp_startup_timeout"
            if confined:
                merged[name] = config
            else:
                self._to_ask.append(config)
        return dataclasses.replace(self.loaded, mcp_servers=merged)

    def _take_skipped(self) -> list[str]:
        skipped, self._skipped = self._skipped, []
        return skipped

    def _open(self, cwd: str, servers: list[Any] | None) -> tuple[Session, EditorApprover]:
        from swebash_ai.session import Session

        where = Path(cwd)
        if not where.is_absolute() or not where.is_dir():
            raise RequestError.invalid_params({"details": f"cwd must be an absolute path to a directory: {cwd!r}"})
        refusal = workspace_refusal(where)
        if refusal is not None:
            raise RequestError.invalid_params({"details": f"swebash-ai does not take {cwd} as a workspace: {refusal}. "
                                               "Open a project folder in the editor and start the agent there."})
        loaded = self._with_servers(servers, where.resolve())
        approver = EditorApprover(self.conn, "", where.resolve(), shown=self._shown, save_rule=self._save_rule,
                                  allowed=self._allowed, ids=CallIds(),
                                  timeout=self.loaded.settings.acp_permission_timeout, diff_of=self._buffer_diff)
        session = Session(loaded, approver=approver, cwd=where)
        if not session.has_provider:
            raise RequestError.auth_required({"details": SETUP_HELP})
        return session, approver

    def _register(self, session_id: str, session: Session, approver: EditorApprover) -> EditorSession:
        approver.session_id = session_id
        if any(self.client_fs):
            from swebash_ai.frontends.acp.files import ClientFiles
            from swebash_ai.tools.editor_files import SERVICE

            session.context.services[SERVICE] = ClientFiles(self.conn, session_id, can_read=self.client_fs[0],
                                                            can_write=self.client_fs[1])
        if self.client_terminal:
            from swebash_ai.frontends.acp.terminals import ClientTerminals
            from swebash_ai.tools.editor_terminal import SERVICE as TERMINALS

            async def show(call_id: str, terminal_id: str) -> None:
                if conv.updates is not None:
                    await conv.updates.terminal(approver.ids.of(call_id), terminal_id)

            session.context.services[TERMINALS] = ClientTerminals(self.conn, session_id, show)
        conv = self.sessions[session_id] = EditorSession(session_id, session, approver, to_ask=self._to_ask)
        self._to_ask = []
        return conv

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any) -> schema.NewSessionResponse:
        session, approver = self._open(cwd, mcp_servers)
        conv = self._register(session.conversation.id, session, approver)
        self._after_response(self._greet(conv, self._take_skipped()))
        self._start_mcp(conv)
        self._after_response(self._warm_provider(conv))
        return schema.NewSessionResponse(session_id=conv.id, modes=self._modes(session))

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           **_: Any) -> schema.LoadSessionResponse:
        from swebash_ai.agent.conversation import is_session_id

        if not is_session_id(session_id):
            raise RequestError.invalid_params({"details": f"{session_id!r} is not a session id (letters, digits, "
                                               "'-' and '_', as session/new gave it)", "sessionId": session_id})
        session, approver = self._open(cwd, mcp_servers)
        old = self.sessions.pop(session_id, None)
        if old is not None:  # saved before the file is read again: else the new copy's next save forks it
            await self._end(old)
        try:
            session.resume(session_id)
            if session.conversation.id != session_id:  # the CLI's --resume takes a prefix; an editor names one
                raise SwebashError(f"No saved session is called '{session_id}' (a whole id is needed).")
        except SwebashError as exc:
            await session.aclose()
            raise RequestError.invalid_params({"details": exc.message, "sessionId": session_id}) from exc
        conv = self._register(session_id, session, approver)
        problems = self._take_skipped()
        await replay(list(session.conversation.full_messages()), self._sender(conv.id), session.cwd, approver.ids)
        plan = session.conversation.meta.get("plan")
        if plan is not None:
            from swebash_ai.tools.plan import Plan

            restored = Plan.from_json(plan)
            if restored is not None:
                await self._sender(conv.id)(plan_update(restored))
        self._after_response(self._greet(conv, problems))
        self._start_mcp(conv)
        self._after_response(self._warm_provider(conv))
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
        updates = conv.updates = TurnUpdates(self._sender(session_id), session.cwd, conv.approver.ids)
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
            await self._servers_started(conv, updates)
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
                    elif isinstance(event, ev.ToolCallFinished):  # a later call may repeat its provider's id
                        conv.shown.pop(event.call_id, None)
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

    async def _buffer_diff(self, session_id: str, request: Any) -> list[Any] | None:
        conv = self.sessions.get(session_id)
        if conv is None:
            return None
        from swebash_ai.frontends.acp.files import buffer_diff

        return await buffer_diff(conv.session.context, request.tool, request.arguments)

    async def _allowed(self, session_id: str, call_id: str) -> None:
        conv = self.sessions.get(session_id)
        if conv is not None and conv.updates is not None:
            await conv.updates.progress(call_id, status="in_progress")

    async def _save_rule(self, session_id: str, rule: dict[str, Any]) -> None:
        conv = self.sessions.get(session_id)
        if conv is None:
            return
        updates = conv.updates or TurnUpdates(self._sender(session_id), conv.session.cwd, conv.approver.ids)
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

    def _after_response(self, work: Any) -> asyncio.Task[None]:
        """Run ``work`` once the response being handled has gone out (it is queued before this task runs)."""
        task = asyncio.get_running_loop().create_task(work)
        self._later.add(task)
        task.add_done_callback(self._later.discard)
        return task

    def _start_mcp(self, conv: EditorSession) -> None:
        if conv.session.loaded.mcp_servers or conv.to_ask:
            conv.mcp_start = self._after_response(self._start_servers(conv))

    async def _servers_started(self, conv: EditorSession, updates: TurnUpdates) -> None:
        """A turn's wait for the servers still starting: a few seconds, then it runs without their tools."""
        if conv.mcp_start is None or conv.mcp_start.done():
            return
        await asyncio.wait({conv.mcp_start}, timeout=MCP_PROMPT_WAIT)
        if not conv.mcp_start.done():
            await updates.notice("MCP servers are still starting: this turn runs without their tools.", "warning")

    @staticmethod
    async def _warm_provider(conv: EditorSession) -> None:
        """The provider's HTTP client, built while the editor is still idle (an https one reads the CA bundle:
        tens of milliseconds the first prompt would otherwise wait)."""
        provider = conv.session.provider
        while provider is not None and not hasattr(provider, "warm"):
            provider = getattr(provider, "inner", None)
        if provider is not None:
            try:
                await provider.warm()
            except Exception as exc:  # the first request builds it then, and reports a real problem
                log.debug("swebash-ai acp: could not prepare the provider's client: %s", exc)

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

    async def _start_servers(self, conv: EditorSession) -> None:
        """The session's MCP servers, started once its response went out: a slow or broken one never holds
        ``session/new``; their tools join the turns that start once they are ready (as in the TUI)."""
        session = conv.session
        refused: list[str] = []
        if conv.to_ask:
            from swebash_ai.frontends.acp.servers import ask_for_servers

            refused = await ask_for_servers(session, conv.approver, conv.to_ask, self._sender(conv.id))
        problems = [*refused, *await session.start_mcp()]
        if session.mcp is not None and session.mcp.tools:
            ready = sum(1 for s in session.mcp.servers if s.state == "ready")
            problems.insert(0, f"MCP: {count(ready, 'server')} ready, {count(len(session.mcp.tools), 'tool')}.")
        if not problems:
            return
        if conv.running:  # said after the answer, not in the middle of it
            session.notices.extend(problems)
            return
        updates = TurnUpdates(self._sender(conv.id), session.cwd)
        try:
            for line in problems:
                await updates.notice(line, "info" if line.startswith("MCP: ") else "warning")
        except (ConnectionError, OSError) as exc:
            log.warning("swebash-ai acp: could not tell the editor about its MCP servers (%s)", exc)

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
