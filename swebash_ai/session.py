"""A session wires settings -> provider, tools, policies, approver, audit; runs turns; saves history.

Both front ends (the TUI and one-shot) stand on this one class and differ only in how they render events
and how they ask for approval. Nothing here imports a UI library.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import uuid
from collections.abc import AsyncGenerator, Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swebash_ai.agent.approval import Approver, DenyApprover, SessionApprovals
from swebash_ai.agent.audit import AuditLog
from swebash_ai.agent.conversation import NOTES, Conversation, is_note_only
from swebash_ai.agent.decide import MODES, UNASKED_MODES, Gate
from swebash_ai.agent.events import AgentEvent, ApprovalRequest, Notice, ToolCallStarted, TurnFailed
from swebash_ai.agent.instructions import Instructions, load_instructions
from swebash_ai.agent.loop import Agent, LoopLimits
from swebash_ai.agent.project import ProjectRules, load_project
from swebash_ai.agent.prompt import build_system_prompt
from swebash_ai.agent.provenance import rebuild as rebuild_provenance
from swebash_ai.agent.session_files import locate_session
from swebash_ai.agent.user_prompt import PreparedPrompt, images_refused, prepare_prompt
from swebash_ai.config.settings import LoadedSettings, Settings
from swebash_ai.errors import ConfigError, ProviderError, SwebashError
from swebash_ai.observe import Observer
from swebash_ai.providers import ProviderChoice, choose_provider, make_provider
from swebash_ai.providers.base import Provider, RetryingProvider
from swebash_ai.providers.text_tools import TextToolCallProvider, is_tools_unsupported
from swebash_ai.safety.on_demand import CommandPolicyOnDemand
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.tools import builtin_tools
from swebash_ai.tools.background import ProcessService
from swebash_ai.tools.checkpoints import Checkpoints, UndoResult, checkpoints_for, move_unsaved, undo_last_turn
from swebash_ai.tools.registry import Tool, ToolContext, ToolRegistry

if TYPE_CHECKING:  # custom commands, hooks, images and agents load when used
    from swebash_ai.agent.agent_files import Agents
    from swebash_ai.agent.custom_commands import CommandSet
    from swebash_ai.agent.hooks import Opinion
    from swebash_ai.agent.images import ImageAttachment
    from swebash_ai.config.hooks import Hook

log = logging.getLogger(__name__)


def session_path_policy(loaded: LoadedSettings, cwd: Path) -> PathPolicy:
    """The path policy of a session in ``cwd``: the tools' guard, and the guard of every file the app reads
    by itself (see :mod:`swebash_ai.safety.unasked`)."""
    roots = [Path(r).expanduser() for r in loaded.settings.workspace_roots] or [cwd]
    where = loaded.locations
    # The config file holds API keys; sessions, checkpoints, the audit log and the prompt history hold
    # everything tools returned and the user typed. Wherever SWEBASH_AI_HOME or XDG put them.
    own = [loaded.config_file, where.sessions_dir, where.audit_log, where.prompt_history]
    return PathPolicy(roots=roots, extra_deny=loaded.settings.path_deny, protected_files=own)


class Session:
    """One conversation with its tools and provider. Build once per front end; ``run`` per user turn."""

    def __init__(
        self,
        loaded: LoadedSettings,
        *,
        approver: Approver | None = None,
        cwd: Path | None = None,
        provider: Provider | None = None,
        tools: Sequence[Tool] | None = None,
        services: Mapping[str, Any] | None = None,
        conversation: Conversation | None = None,
        environ: Mapping[str, str] | None = None,
        probe_ollama: bool = True,
    ) -> None:
        self.loaded = loaded
        self.settings: Settings = loaded.settings
        self.cwd = (cwd or Path.cwd()).resolve()
        self.approver: Approver = approver or DenyApprover()
        self.conversation = conversation or Conversation()
        self._environ = environ
        self._services = dict(services or {})
        # The sandbox keeps the files trusted hooks run read-only: they run later, outside it.
        self._services.setdefault("read_only_files", self._hook_files)
        self._tools = list(tools) if tools is not None else builtin_tools()
        self.session_approvals = SessionApprovals()
        self._unsaved_mark = uuid.uuid4().hex  # the checkpoints recorded since the last save (move_unsaved)
        self.on_set_aside: Callable[[list[str]], None] | None = None  # told the calls whose results went aside
        self.notices: list[str] = []
        self.trust_notice: str | None = None  # "the project's rules wait for trust": a front end that asks drops it
        self.choice: ProviderChoice | None = None
        self.provider: Provider | None = provider
        if provider is None:
            self.choice = choose_provider(self.settings, environ, probe_ollama=probe_ollama,
                                          model_from=loaded.model_from)
            if self.choice is not None:
                self.provider = make_provider(self.choice, self.settings, on_retry=self._on_retry)
        if isinstance(self.provider, RetryingProvider):
            self.provider.on_call_start = self._call_starting
        if self.provider is not None:
            mode = self.settings.tool_calling
            self.provider = TextToolCallProvider(self.provider, text_mode=mode == "text", recover=mode != "native")
        self.registry = ToolRegistry.from_settings(self.settings, self._tools)
        self.gate = Gate(workspace=self.cwd, run_hook=self._run_hook)
        self.set_mode(self.settings.approval_mode)
        self.project = ProjectRules()
        self.context = self._make_context()
        self.load_project()
        self.instructions = self._load_instructions()
        self.agent: Agent | None = self._make_agent() if self.provider is not None else None
        self._toolbox: Agent | None = None
        self.observers: list[Observer] = self._make_observers()
        self.mcp: Any = None
        """The :class:`~swebash_ai.tools.mcp_client.McpHost` once :meth:`start_mcp` ran with servers configured."""

    # --- MCP servers (see tools/mcp_client.py) ----------------------------------------------------------
    async def start_mcp(self) -> list[str]:
        """Start the configured MCP servers and offer their tools; one message per server that did not start.

        Nothing of the ``mcp`` SDK is imported when no server is configured.
        """
        if not self.loaded.mcp_servers or self.mcp is not None:
            return []
        from swebash_ai.tools.mcp_client import McpHost

        self.mcp = McpHost(self.loaded.mcp_servers, self._environ, confine=self._confine_server)
        messages: list[str] = await self.mcp.start([t.name for t in self._tools])
        self._tools = [*self._tools, *self.mcp.tools]
        self.registry = ToolRegistry.from_settings(self.settings, self._tools)
        if self.agent is not None:
            self.agent = self._make_agent()
        return messages

    def _confine_server(self, argv: list[str], cwd: Path) -> list[str]:
        """A ``sandbox = true`` MCP server's argv in the sandbox of this session's unasked commands."""
        from swebash_ai.sandbox.confine import confine_server

        return confine_server(self.context.path_policy, self.settings, argv, cwd)

    async def aclose(self) -> list[str]:
        """End every background process, language server and MCP server process this session started (safe to
        call more than once); returns one line per background process it stopped, for the front end to show."""
        stopped = await self.processes.stop_all()
        if (lsp := self._services.pop("lsp", None)) is not None:  # tools/diagnostics.py made it
            stopped += await lsp.aclose()
        if self.mcp is not None:
            await self.mcp.aclose()
        self._observe("close")
        self.observers = []
        return stopped

    # --- background processes (see tools/background.py) -----------------------------------------------
    @property
    def processes(self) -> ProcessService:
        """The background processes of this session: they outlive a turn, and end with :meth:`aclose`."""
        svc: ProcessService = self.context.processes
        return svc

    def take_processes(self, old: Session) -> None:
        """Adopt ``old``'s background processes (the TUI switched model or profile: the session goes on)."""
        svc = old.processes
        svc.max_running, svc.buffer_bytes = self.settings.background_max_running, self.settings.background_buffer_bytes
        self.context.processes = svc
        old.context.processes = ProcessService()

    # --- wiring ---------------------------------------------------------------------------------------
    def _make_context(self) -> ToolContext:
        path_policy = session_path_policy(self.loaded, self.cwd)
        return ToolContext(
            settings=self.settings,
            cwd=self.cwd,
            path_policy=path_policy,
            command_policy=CommandPolicyOnDemand(path_policy),
            services=self._services,
            rules=self.loaded.rules,
            processes=ProcessService(self.settings.background_max_running, self.settings.background_buffer_bytes),
        )

    def load_project(self) -> ProjectRules:
        """(Re)read the project's rules file and put the rules and hooks in force (see agent/project.py)."""
        self.project = load_project(self.cwd, self.context.path_policy, self.loaded.trusted_projects,
                                    self.settings.fs_max_size)
        self.trust_notice = None
        if self.project.problem:
            self.notices.append(self.project.problem)
        elif self.project.needs_trust:
            since = " changed since you trusted it (it, or a file its hooks run)" if self.project.stale else ""
            self.trust_notice = (f"{self.project.path}{since}: its ask and deny rules apply; its allow rules and "
                                 "hooks wait until you trust it (`swebash-ai trust`, which lists them).")
            self.notices.append(self.trust_notice)
        rules = self.loaded.rules + self.project.in_force
        self.gate.rules = rules
        self.gate.hooks = self.loaded.hooks + self.project.hooks_in_force
        self.context.rules = rules
        self._services["lsp_tables"] = {**self.loaded.lsp, **self.project.lsp_in_force}  # trusted: its servers too
        return self.project

    def trust_project(self) -> ProjectRules:
        """Trust the project file as it is now (recorded in the user's config), and put it in force."""
        from swebash_ai.config.edit import trust_project

        if self.project.path is None or not self.project.sha256 or self.project.problem:
            raise ConfigError("There is no project rules file here to trust.")
        if self.project.unverified:
            raise ConfigError(f"{self.project.path} cannot be trusted: {self.project.unverified}.")
        trust_project(self.loaded.config_file, self.project.path, self.project.sha256)
        self.reload_rules()
        return self.project

    def save_rule(self, body: dict[str, Any]) -> str:
        """Append a rule to the user's config file and put it in force now; returns where it went."""
        from swebash_ai.config.edit import add_rule
        from swebash_ai.config.rules import parse_rule_list

        parse_rule_list([body], str(self.loaded.config_file), "[[rules]]", "config")  # a bad rule is never written
        number = add_rule(self.loaded.config_file, body)
        self.reload_rules()
        return f"{self.loaded.config_file} [[rules]] #{number}"

    def reload_rules(self) -> None:
        """Read the rules and trusted projects of the config file again (after a change), and put them in force.

        Raises:
            ConfigError: the file no longer parses, or holds a bad rule.
        """
        from swebash_ai.config.file import read_config_file
        from swebash_ai.config.hooks import parse_trusted
        from swebash_ai.config.rules import parse_rules

        config = read_config_file(self.loaded.profile)
        where = str(config.path)
        rules = parse_rules(config.top.get("rules"), config.profile_table.get("rules"), where, config.profile)
        trusted = parse_trusted(config.top.get("trusted_projects"), where)
        self.loaded = dataclasses.replace(self.loaded, rules=rules, trusted_projects=trusted)
        self.load_project()

    def set_mode(self, mode: str | None = None) -> str:
        """Set the approval mode (``None``: the next one, as Shift+Tab does); returns it."""
        if mode is None:  # Shift+Tab passes over a mode that cannot work here
            following = self.gate.next_mode()
            while following in UNASKED_MODES and _unasked_problem(self.settings):
                following = self.gate.next_mode()
            return following
        if mode not in MODES:
            raise ConfigError(f"Unknown approval mode {mode!r} ({', '.join(MODES)}).")
        if mode in UNASKED_MODES and (problem := _unasked_problem(self.settings)):
            raise ConfigError(problem, title="Approval mode unavailable", hint="See `swebash-ai sandbox --show`; "
                              "accept-edits applies edits unasked and asks about commands.")
        self.gate.mode = mode
        return mode

    def _hook_files(self) -> list[Path]:
        return [self.cwd / word for hook in self.gate.hooks for word in hook.file_words()]

    async def _turn_diagnostics(self) -> str:
        from swebash_ai.tools.diagnostics import turn_report  # with lsp_diagnostics = "turn" only

        report = await turn_report(self._services, self.cwd)
        if report:
            self.conversation.note_for_next_turn(report)
        return report

    def _call_starting(self, name: str) -> None:
        """The model began a tool call (its arguments still stream): a command's supervisor starts now, so the
        command finds it ready, and an answer that runs nothing never starts one (issue 23: 12% of a ``-c hi``)."""
        if name == "run_command" and self.registry.get(name) is not None:
            from swebash_ai.tools.process import prewarm

            prewarm()

    async def _run_hook(self, hook: Hook, payload: dict[str, Any]) -> Opinion:
        from swebash_ai.agent.hooks import run_hook  # with the first hook that has a say

        return await run_hook(hook, payload, self.cwd)

    def _make_agent(self) -> Agent:
        assert self.provider is not None
        s = self.settings
        audit = self._audit_log()
        agent = Agent(
            self.provider,
            self.registry,
            self.context,
            self.approver,
            limits=LoopLimits.from_settings(s),
            confirm=s.tools_confirm,
            system_prompt=self.system_prompt(),
            audit=audit,
            session_approvals=self.session_approvals,
            gate=self.gate,
        )
        if s.subagents and not s.tools_allow:  # the task tool (docs/agents.md); tools_allow names what is offered
            from swebash_ai.agent.subagents import attach_task, provider_for

            found = self.find_agents()
            self.notices.extend(n for n in found.notices if getattr(self, "agent", None) is None)  # once
            attach_task(agent, found, s, instructions=self.instructions.render(), keep=self._keep_child,
                        provider_for=provider_for(s, self._environ, self._on_retry))
        return agent

    def _keep_child(self, call_id: str, transcript: dict[str, Any]) -> None:
        self.conversation.meta.setdefault("subagents", {})[call_id] = transcript  # saved with the session

    def find_agents(self) -> Agents:
        """The agents a ``task`` call may start, read now (see agent/agent_files.py)."""
        from swebash_ai.agent.agent_files import load_agents

        return load_agents(self.cwd, self.loaded.locations.config_dir, self.context.path_policy,
                           project_trusted=self.project.trusted, known_tools=frozenset(t.name for t in self._tools),
                           max_bytes=self.settings.fs_max_size)

    def _load_instructions(self) -> Instructions:
        """AGENTS.md files in force (none when ``project_instructions`` is off); problems become notices."""
        if not self.settings.project_instructions:
            return Instructions()
        found = load_instructions(
            self.cwd, self.loaded.locations.config_dir, self.settings.instructions_max_chars,
            policy=self.context.path_policy, max_bytes=self.settings.fs_max_size,
        )
        self.notices.extend(found.notices)
        return found

    def system_prompt(self) -> str:
        s = self.settings
        return build_system_prompt(self.cwd, self.registry.names(), s.system_prompt, self.instructions.render())

    # --- the user's text: custom commands and @mentions (agent/user_prompt.py) ------------------------
    def custom_commands(self, builtins: Collection[str] | None = None) -> CommandSet:
        """The command files in force, read now (an edit applies at once), each through the path guard.
        ``builtins``: the front end's own command names (the app's, by default)."""
        from swebash_ai.agent.custom_commands import BUILTIN_COMMANDS, load_commands

        return load_commands(self.cwd, self.loaded.locations.config_dir, self.context.path_policy,
                             builtins=BUILTIN_COMMANDS if builtins is None else builtins,
                             max_bytes=self.settings.fs_max_size)

    def prepare(self, text: str, builtins: Collection[str] | None = None) -> PreparedPrompt:
        """The message to send for what the user typed: ``/NAME args`` expanded, ``@path`` attached (an image
        downscaled for this model's provider: pass ``PreparedPrompt.images`` to :meth:`run`)."""
        commands = self.custom_commands(builtins) if text.lstrip().startswith("/") else None
        prepared = prepare_prompt(text, self.context, commands, builtins=builtins, model=self.model)
        if "@" in text and self.agent is not None and "task" in self.agent.registry:  # @NAME asks for an agent
            from swebash_ai.agent.subagents import ask_for_agents

            prepared = ask_for_agents(prepared, self.find_agents(), self.cwd)
        return prepared

    def _audit_log(self) -> AuditLog | None:
        if not self.settings.audit:
            return None
        return AuditLog(self.loaded.locations.audit_log, self.conversation.id)

    def _on_retry(self, err: ProviderError, delay: float, attempt: int) -> None:
        self.notices.append(f"{err.title}: retrying in {delay:.1f}s (attempt {attempt + 1})")
        self._observe("on_retry")

    # --- observers: turn statistics, OpenTelemetry (see swebash_ai/observe) ---------------------------
    def _make_observers(self) -> list[Observer]:
        found: list[Observer] = []
        if self.settings.audit:
            from swebash_ai.observe.recorder import TurnRecorder

            found.append(TurnRecorder(self.loaded.locations.turns_log, self.conversation.id, self.model))
        if self.settings.telemetry == "otlp":
            try:
                from swebash_ai.observe.otel import telemetry_observer
            except ImportError as exc:
                self.notices.append(f"Telemetry is on but OpenTelemetry is not installed ({exc.name}): "
                                    "pip install 'swebash-ai[telemetry]'. The session goes on without it.")
            else:
                found.append(telemetry_observer(self.settings, self.model))
        return found

    def _follow_the_session(self) -> None:
        """The session id turns and tool calls are recorded under (observers, audit): the conversation's, which
        changes when a save forks it."""
        for observer in self.observers:
            if hasattr(observer, "session_id"):
                observer.session_id = self.conversation.id
        for agent in (self.agent, self._toolbox):
            if agent is not None and agent.audit is not None:
                agent.audit.session_id = self.conversation.id

    def _observe(self, method: str, *args: Any) -> None:
        for observer in self.observers:
            try:
                getattr(observer, method)(*args)
            except Exception:  # an observer is never allowed to break a turn
                log.warning("observer %s failed in %s", type(observer).__name__, method, exc_info=True)

    @property
    def model(self) -> str:
        return self.provider.model if self.provider is not None else ""

    @property
    def has_provider(self) -> bool:
        return self.agent is not None

    @property
    def session_file(self) -> Path:
        return self.loaded.locations.sessions_dir / f"{self.conversation.id}.jsonl"

    # --- turns ----------------------------------------------------------------------------------------
    async def run(self, text: str, images: Sequence[ImageAttachment] = ()) -> AsyncGenerator[AgentEvent, None]:
        """Run one user turn (``images``: sent with ``text``, see agent/images.py); the conversation is saved
        when it ends, however it ends. Images for a model known to take none fail the turn before any request."""
        if self.agent is None:
            from swebash_ai.providers import no_provider_error

            raise no_provider_error()
        if images and (refused := images_refused(self.model, images)) is not None:
            yield TurnFailed(refused)
            return
        self._begin_turn()
        try:
            for notice in await self.compact(upcoming=text):
                yield notice
            mark = len(self.conversation.messages)
            self._follow_the_session()
            for attempt in (1, 2):
                tools_ran = False
                self.conversation.images.attach_to_next(images)  # the typed message carries them, each attempt
                async with contextlib.aclosing(self.agent.run_turn(self.conversation, text)) as events:
                    retry = False
                    async for event in events:
                        while self.notices:
                            yield Notice(self.notices.pop(0), "warning")
                        tools_ran = tools_ran or isinstance(event, ToolCallStarted)
                        if isinstance(event, TurnFailed) and attempt == 1 and not tools_ran and self._fall_back(event):
                            retry = True
                            break
                        self._observe("on_event", event)
                        yield event
                if not retry:
                    if self.settings.lsp_diagnostics == "turn" and (report := await self._turn_diagnostics()):
                        yield Notice(report)  # and the model hears it with the next message
                    return
                dropped = self.conversation.messages[mark:]
                self.conversation.truncate(mark)
                for note in (n for m in dropped for n in m.get(NOTES) or ()):  # told again, in the retry
                    self.conversation.note_for_next_turn(note)
                yield Notice(
                    f"{self.model} refused native tool calls; describing the tools in the prompt instead.", "warning"
                )
        finally:
            try:
                self.save()
            finally:  # the turn's figures go out once it is saved: under the id of the file that holds it
                self._follow_the_session()
                self._observe("end_turn")

    async def compact(self, *, force: bool = False, upcoming: str = "") -> list[Notice]:
        """Replace older turns with a summary the model writes (see :mod:`swebash_ai.agent.compaction`).

        Automatic before a turn when the conversation (with ``upcoming``, the next user message) nears
        ``context_tokens``; ``force`` (``/compact``) does it now. Returns what to tell the user; a failed
        summary request leaves the conversation as it was (requests are trimmed as before) and says so.
        """
        from swebash_ai.agent import compaction as cp

        if self.agent is None or self.provider is None:
            return [Notice("No model is configured to write a summary.", "warning")] if force else []
        budget = self.settings.context_tokens
        tools = self.registry.definitions(copied=False) or None  # measured only
        size = cp.request_tokens(self.conversation, self.agent.system_prompt, tools) + len(upcoming) // 4
        if not force and (not self.settings.auto_compact or size < budget * cp.COMPACT_AT):
            return []
        # On demand everything but the latest turn is summarized; automatically, what fits KEEP_RECENT stays.
        cut = cp.plan_cut(self.conversation, 0 if force else int(budget * cp.KEEP_RECENT))
        if cut == 0:
            return [Notice("Nothing to compact: the conversation is only its latest turn.")] if force else []
        try:
            summary = await cp.summarize(self.provider, list(self.conversation.full_messages(cut)), budget * 2)
        except (SwebashError, ValueError) as exc:
            reason = exc.message if isinstance(exc, SwebashError) else str(exc)
            return [Notice(f"Could not summarize the earlier conversation ({reason}); older turns are left out "
                           "of requests instead, as before.", "warning")]
        cp.apply_summary(self.conversation, cut, summary)
        self.save()
        after = cp.request_tokens(self.conversation, self.agent.system_prompt, tools)
        return [Notice(f"Compacted the conversation (about {size} -> {after} tokens): {cut} earlier messages "
                       f"replaced by this summary, saved in the session:\n\n{summary}")]

    # --- checkpoints and undo (docs/undo.md) ---------------------------------------------------------
    @property
    def checkpoints(self) -> Checkpoints:
        return checkpoints_for(self.loaded.locations.sessions_dir, self.conversation.id)

    def _begin_turn(self) -> None:
        """Point the write tools at this turn's checkpoints."""
        store = self.checkpoints
        # One number per turn, a ``!command`` included, counted by the conversation and saved with it: turn N is
        # the Nth turn of the file that holds it, and a fork goes on from its own count. Until a fork, two runs'
        # turn N sit in one index, told apart by ``writer`` (see undo_last_turn).
        store.turn = self.conversation.meta["turns"] = self._turns_counted() + 1
        store.writer = self._unsaved_mark
        self.context.services["checkpoints"] = store

    def _turns_counted(self) -> int:
        """The turns of the conversation so far. A session saved before the count gets it on resume (its user
        turns, or its checkpoints' highest number), not at its next turn, when another run may have added some."""
        counted = self.conversation.meta.get("turns")
        if not isinstance(counted, int):
            users = sum(1 for m in self.conversation.messages if m.get("role") == "user" and not is_note_only(m))
            counted = self.conversation.meta["turns"] = max(users, self.checkpoints.last_turn())
        return counted

    def undo(self, *, force: bool = False) -> UndoResult:
        """Revert the file changes of the newest turn not yet undone; the model hears of it next turn.

        Raises:
            UndoRefused: nothing to undo, or a file changed since the tool wrote it (and not ``force``).
        """
        result = undo_last_turn(self.checkpoints, force=force, known=self._turns_counted())
        self.conversation.note_for_next_turn(result.note_for_model())
        self.save()
        return result

    def _fall_back(self, failed: TurnFailed) -> bool:
        """Switch to text tool calls when the server refused native ones (``tool_calling = "auto"``)."""
        wrapper = self.provider
        if not isinstance(wrapper, TextToolCallProvider) or not wrapper.recover or wrapper.text_mode:
            return False
        if not len(self.registry) or not is_tools_unsupported(failed.error):
            return False
        wrapper.text_mode = True
        return True

    async def run_shell(self, command: str) -> AsyncGenerator[AgentEvent, None]:
        """``!command``: run a command the user typed through the exec tool, its policy and approval."""
        agent = self.agent or self._toolbox_agent()
        self._begin_turn()
        try:
            async for event in agent.run_tool(self.conversation, "run_command", {"command": command}, typed=command):
                yield event
        finally:
            self.save()

    def _toolbox_agent(self) -> Agent:
        """An agent without a model, for ``!command`` when no provider is configured."""
        from swebash_ai.providers.scripted import ScriptedProvider

        if self._toolbox is None:
            registry = ToolRegistry([t for t in self._tools if t.name == "run_command"])
            self._toolbox = Agent(
                ScriptedProvider(model=""),
                registry,
                self.context,
                self.approver,
                confirm=self.settings.tools_confirm,
                audit=self._audit_log(),
                session_approvals=self.session_approvals,
                gate=self.gate,
            )
        return self._toolbox

    def cancel(self) -> None:
        if self._toolbox is not None:
            self._toolbox.cancel()
        if self.agent is not None:
            self.agent.cancel()

    def save(self) -> str | None:
        """Save; when another instance saved this session meanwhile, it forks (:meth:`Conversation.save`): the
        line saying so is returned and queued in :attr:`notices`, which both front ends show after a turn."""
        if not self.conversation.messages:
            return None
        self.conversation.meta["model"] = self.model
        if self.agent is not None:  # what the model was offered, for `swebash-ai export`
            self.conversation.meta["system"] = self.agent.system_prompt
            self.conversation.meta["tools"] = self.agent.registry.definitions()
        before = self.checkpoints
        try:
            forked = self.conversation.save(self.session_file)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            log.warning("swebash-ai: cannot save the session to %s (%s); its previous save is intact.",
                        self.session_file, reason)
            return None
        finally:
            self._set_aside()
        if forked:  # the turns not saved under the old id are the fork's alone; so are their checkpoints
            before.writer = self._unsaved_mark
            move_unsaved(before, self.checkpoints)
            self.notices.append(forked)
            self._follow_the_session()  # the turns and tool calls that follow are the fork's
        recorder = self.context.services.get("checkpoints")
        if isinstance(recorder, Checkpoints) and recorder.wrote and recorder.writer == self._unsaved_mark:
            with contextlib.suppress(OSError):  # this file holds this run's turns now: its undo prefers them
                self.checkpoints.claim(self._unsaved_mark)
        self._unsaved_mark = uuid.uuid4().hex
        return forked

    def _set_aside(self) -> None:
        """Set aside the large results of every turn before the last (see agent/result_store.py)."""
        moved = self.conversation.set_aside_results()
        if moved and self.on_set_aside is not None:
            self.on_set_aside(moved)

    def new_conversation(self) -> None:
        self.save()
        self.conversation = Conversation()
        self.session_approvals.clear()
        self.context.provenance.clear()
        if self.agent is not None:
            self.agent = self._make_agent()

    def resume(self, session_id: str | None) -> Conversation:
        """Load a saved session (newest when ``session_id`` is None). Raises ConfigError if none matches."""
        path = locate_session(self.loaded.locations.sessions_dir, session_id)
        self.conversation = Conversation.load(path)
        self._turns_counted()
        self.context.provenance.clear()
        rebuild_provenance(self.conversation.messages, self.context.provenance)  # derived, never a stored list
        self._set_aside()  # a long session read back from its file: its old results need not stay in memory
        if self.agent is not None:
            self.agent = self._make_agent()
        return self.conversation

    async def explain(self, request: ApprovalRequest) -> str:
        """Ask the model to explain in one sentence what a call will do (the "Describe" choice)."""
        from swebash_ai.agent.approval import explain_call

        return await explain_call(self.provider, request)


def build_session(
    flags: Mapping[str, Any] | None = None,
    *,
    profile: str | None = None,
    approver: Approver | None = None,
    cwd: str | os.PathLike[str] | None = None,
    **kw: Any,
) -> Session:
    """Load settings and build a session (the composition root calls this)."""
    from swebash_ai.config.settings import load_settings

    loaded = load_settings(flags, profile=profile)
    return Session(loaded, approver=approver, cwd=Path(cwd) if cwd else None, **kw)


def _unasked_problem(settings: Settings) -> str | None:
    """Why auto mode cannot run here (it needs the sandbox), or ``None``; the sandbox loads only for it."""
    from swebash_ai.sandbox.confine import unasked_mode_problem

    return unasked_mode_problem(settings)
