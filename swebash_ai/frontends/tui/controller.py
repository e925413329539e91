"""What the app does with the user's input: run turns and ``!commands``, dispatch slash commands, and
render the session's events into the chat, tool and status panes.

Kept apart from ``app.py`` (layout, keys, start-up) so each stays small. Every failure here becomes a
clear message in the chat pane; nothing escapes as a traceback.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import logging
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from swebash_ai.frontends.tui import commands
from swebash_ai.frontends.tui.provider_setup import ProviderSetup
from swebash_ai.frontends.tui.session_switch import SessionSwitch
from swebash_ai.frontends.tui.widgets.activity import (
    background_note,
    diagnostics_tag,
    sandbox_refused_line,
    sandbox_tag,
)

if TYPE_CHECKING:
    from swebash_ai.agent.events import AgentEvent
    from swebash_ai.agent.images import ImageAttachment
    from swebash_ai.errors import SwebashError
    from swebash_ai.frontends.tui.host import ControllerHost
    from swebash_ai.providers import OllamaOffer
    from swebash_ai.session import Session

log = logging.getLogger(__name__)

IDLE_COLLECT_AFTER = 1.0
"""Seconds after a turn before the garbage it made is collected (see ``full_collections_held``)."""

DEEP_COLLECT_TURNS = 10
"""Turns between two collections of everything, frozen objects included (see ``collect_everything``)..."""
QUIET_BEFORE_DEEP_COLLECT = 5.0
"""...run once no key has come for this many seconds and no turn runs (it takes a few hundred ms)."""

BUSY_COMMANDS = frozenset({"/new", "/model", "/ollama", "/profile", "/sessions", "/compact", "/undo", "/login"})


def coalesce(events: Iterable[AgentEvent]) -> Iterator[AgentEvent]:
    """Merge runs of text deltas into one (a batch from a fast stream holds hundreds)."""
    from swebash_ai.agent.events import TextDelta

    text: list[str] = []
    for event in events:
        if isinstance(event, TextDelta):
            text.append(event.text)
            continue
        if text:
            yield TextDelta("".join(text))
            text = []
        yield event
    if text:
        yield TextDelta("".join(text))


def turn_answers(messages: Sequence[Mapping[str, object]]) -> list[str]:
    """The text of each answer of the last turn, as the conversation keeps it (what ``ChatPane.share_replies``
    lets the chat's messages hold instead of copies of their own)."""
    answers: list[str] = []
    for message in reversed(messages):
        if message.get("role") == "user":
            break
        if message.get("role") == "assistant" and isinstance(content := message.get("content"), str) and content:
            answers.append(content)
    return answers


class Controller:
    """Turns user input into session calls and session events into widgets."""

    def __init__(self, app: ControllerHost) -> None:
        self.app = app
        self._future: concurrent.futures.Future[None] | None = None
        self._turns_since_deep_collect = 0
        self._deep_collect_due = False
        self.can_go_on = False
        """The last turn stopped at a tool limit: Ctrl+G runs another with a fresh budget."""
        self._chips: Sequence[ImageAttachment] = ()  # the running turn's images from the prompt's chips
        self._set_aside: collections.deque[str] = collections.deque()
        """Calls whose results the session set aside (on the engine thread, at its save): the tool pane drops its
        copies once the turn is over (:meth:`ActivityPane.set_aside`)."""
        self.provider_setup = ProviderSetup(self)
        self.switch = SessionSwitch(self)
        """/model, /ollama, /profile, /login, /sessions: a new session, or another conversation in it."""

    @property
    def session(self) -> Session | None:
        return self.app.session

    # --- start-up -------------------------------------------------------------------------------------
    def session_ready(
        self, session: Session | None, error: SwebashError | None, offer: OllamaOffer | None = None
    ) -> None:
        app = self.app
        app.session = session
        app.activity.recall = self._recall
        if error is not None:
            app.chat.add_error(error.title, error.message, error.hint)
        if session is not None:
            from swebash_ai.frontends.tui.approvals import apply_pending_mode
            from swebash_ai.frontends.tui.processes import watch_exits

            apply_pending_mode(app, session)
            watch_exits(app, session)
            if session.project.needs_trust and session.trust_notice in session.notices:
                session.notices.remove(session.trust_notice)  # the trust question follows; its answer says the rest
            self.show_provider(session, offer, starting=True)
            self._show_instructions(session)
            if session.conversation.messages:
                self.render_conversation(session)
        app.session_ready.set()
        if session is not None:
            from swebash_ai.frontends.tui.user_input import load_prompt_helpers

            app.run_worker(load_prompt_helpers(app, session), group="setup", exit_on_error=False)
        if session is not None and session.project.needs_trust:
            from swebash_ai.frontends.tui.approvals import offer_trust

            app.run_worker(offer_trust(app, session), group="trust", exit_on_error=False)
        if session is not None and session.loaded.mcp_servers:
            app.run_worker(self.start_mcp(session), group="mcp", exit_on_error=False)

    async def start_mcp(self, session: Session) -> None:
        """Worker: start the session's MCP servers on the engine loop (where its turns run); say which did not
        start. Questions asked meanwhile run without their tools."""
        app = self.app
        problems = await app.engine.call(session.start_mcp())
        for problem in problems:
            app.chat.add_notice(problem + " (/mcp shows the servers)", "warning")
        if session.mcp is not None and session.mcp.tools:
            ready = sum(1 for s in session.mcp.servers if s.state == "ready")
            tools = len(session.mcp.tools)
            app.notify(f"MCP: {ready} server{'' if ready == 1 else 's'} ready, {tools} tool{'' if tools == 1 else 's'}."
                       " /mcp lists them.")

    async def cmd_mcp(self, arg: str) -> None:
        session = await self.ready_session()
        if session is None:
            return
        host = session.mcp
        if host is None:
            self.app.chat.add_info(f"Add [mcp_servers.NAME] tables to {session.loaded.config_file} "
                                   "(see docs/mcp.md).", title="No MCP servers configured")
            return
        lines = []
        for server in host.servers:
            lines.append(server.summary())
            for t in server.tools:
                approve = "runs without asking" if t.remote_name in server.config.auto_approve else "asks"
                hint = t.hints()
                lines.append(f"    {t.name} ({approve}{'; ' + hint if hint else ''})")
        lines += [f"{name}: disabled (enabled = false)" for name in host.disabled]
        self.app.chat.add_info("\n".join(lines), title="MCP servers")

    def _show_instructions(self, session: Session) -> None:
        """Which AGENTS.md files the model follows, and any refused or unreadable, said at start-up."""
        files = session.instructions.files
        if files:
            names = ", ".join(str(f.path) for f in files)
            self.app.chat.add_notice(f"Following instructions from {names} (/context shows the budget).")
        for refused in session.instructions.refused:  # a pop-up too: a refusal may mean a hostile repository
            self.app.notify(f"{refused.path}: {refused.reason}", title="Instruction file refused",
                            severity="warning", timeout=10)
        self.show_notices(session)  # unreadable or cut instruction files: now, not at the first turn

    def show_notices(self, session: Session | None) -> None:
        """What the session queued for the user (a save forked to a new session, a retry...), as warnings."""
        while session is not None and session.notices:
            self.app.chat.add_notice(session.notices.pop(0), "warning")

    def show_provider(self, session: Session, offer: OllamaOffer | None = None, *, starting: bool = False) -> None:
        self.provider_setup.show_provider(session, offer, starting=starting)

    def open_setup(self, *, offer: OllamaOffer | None = None, reason: str = "", pending: str | None = None) -> None:
        """The setup screen (see :class:`~swebash_ai.frontends.tui.provider_setup.ProviderSetup`)."""
        self.provider_setup.open(offer=offer, reason=reason, pending=pending)

    def render_conversation(self, session: Session) -> None:
        """Show a resumed conversation (see :func:`swebash_ai.frontends.tui.user_input.render_conversation`)."""
        from swebash_ai.frontends.tui.user_input import render_conversation

        render_conversation(self.app, session)

    # --- input ----------------------------------------------------------------------------------------
    async def submit(self, text: str) -> None:
        app = self.app
        stripped = text.strip()
        bar = app.prompt.attachments
        if not stripped and not (bar is not None and bar.images):
            return
        from swebash_ai.frontends.tui.user_input import is_custom

        parsed = commands.parse(stripped)
        if parsed is not None and not await is_custom(app, parsed.name):
            await self.command(stripped)
            return
        if app.busy:
            app.notify("The assistant is still working; press Esc to cancel it first.", severity="warning")
            return
        if stripped.startswith("!"):
            command = stripped[1:].strip()
            if not command:
                return
            app.chat.add_user(stripped)
            self.start_turn(command, shell=True)  # noqa: S604 - runs through the exec tool's policy
        else:
            images = bar.take() if bar is not None else []  # the chips go with this message
            app.chat.add_user(text)
            self.start_turn(text, shell=False, images=images)

    def go_on(self) -> None:
        """Ctrl+G after a turn stopped at a tool limit: another turn, with a fresh budget, to finish the task."""
        from swebash_ai.agent.user_prompt import GO_ON

        if self.app.busy or not self.can_go_on:
            self.app.notify("Nothing to go on with: Ctrl+G follows a turn that stopped at its tool limit.")
            return
        self.app.chat.add_user("↻ Go on (a fresh budget of tool calls)")
        self.start_turn(GO_ON, shell=False, prepare=False)

    def start_turn(self, text: str, *, shell: bool, prepare: bool = True,
                   images: Sequence[ImageAttachment] = ()) -> None:
        app = self.app
        if self.can_go_on:
            self.can_go_on = False
            app.refresh_bindings()
        app.busy = True
        app.status.set_busy("running" if shell else "thinking")
        app.turn_worker = app.run_worker(self.run_turn(text, shell=shell, prepare=prepare, images=images),
                                         group="turn", exclusive=True, exit_on_error=False)

    async def run_turn(self, text: str, *, shell: bool, prepare: bool = True,
                       images: Sequence[ImageAttachment] = ()) -> None:
        """Worker: run the turn on the engine thread and render its events as they arrive in batches."""
        try:
            await self._run_turn(text, shell=shell, prepare=prepare, images=images)
        finally:
            from swebash_ai.frontends.tui.garbage import release_render_caches, release_text_caches

            release_render_caches()
            release_text_caches(self.app.chat.app)  # the Textual app itself
            # The collection the app holds off, when the user is most likely reading the answer.
            self.app.set_timer(IDLE_COLLECT_AFTER, self.collect_when_idle)
            self.app.prompt.paths_stale = True  # the turn's tools may have made files: walk again at the next @

    def collect_when_idle(self) -> None:
        """The full garbage collection held off while the app runs (see ``full_collections_held``), unless
        a new turn has started meanwhile (its end schedules another)."""
        from swebash_ai.frontends.tui.garbage import collect_garbage

        if not self.app.busy:
            collect_garbage()
            self._turns_since_deep_collect += 1
            if self._turns_since_deep_collect >= DEEP_COLLECT_TURNS and not self._deep_collect_due:
                self._deep_collect_due = True
                self.app.set_timer(QUIET_BEFORE_DEEP_COLLECT, self.collect_everything_when_quiet)

    def collect_everything_when_quiet(self) -> None:
        """The occasional collection of everything (``collect_everything``), once the user has not typed for
        :data:`QUIET_BEFORE_DEEP_COLLECT` seconds; during a turn, at the end of it."""
        from swebash_ai.frontends.tui.garbage import collect_everything

        app = self.app
        if app.busy:
            self._deep_collect_due = False  # the turn's end schedules it again
            return
        quiet = time.monotonic() - app.input_first.last_input
        if quiet < QUIET_BEFORE_DEEP_COLLECT:
            app.set_timer(QUIET_BEFORE_DEEP_COLLECT - quiet, self.collect_everything_when_quiet)
            return
        self._deep_collect_due = False
        self._turns_since_deep_collect = 0
        collect_everything()

    async def _run_turn(self, text: str, *, shell: bool, prepare: bool = True,
                        images: Sequence[ImageAttachment] = ()) -> None:
        from swebash_ai.errors import SwebashError
        from swebash_ai.frontends.tui.engine import EventPipe, pump

        app = self.app
        future: concurrent.futures.Future[None] | None = None
        try:
            await app.session_ready.wait()
            session = app.session
            if session is None:
                app.chat.add_error("No session", "The session could not start; see the error above.")
                return
            if not shell and not session.has_provider:
                # The question waits for a provider: the setup screen, then it is asked.
                self.provider_setup.open(reason="Choose a provider, and your question is asked right after.",
                                         pending=text, images=images)
                return
            self._chips = images
            if prepare and not shell:  # /NAME expanded, @path attached: read through the path guard
                from swebash_ai.frontends.tui.user_input import BUILTINS, show_prepared

                prepared = await asyncio.to_thread(session.prepare, text, BUILTINS)
                show_prepared(app.chat, prepared, images)
                text = "\n\n".join([prepared.text.rstrip(), *(i.header for i in images)]).lstrip()
                images = [*prepared.images, *images]
            gate = app.input_first
            pipe = EventPipe(asyncio.get_running_loop(), lambda: gate.last_input)
            session.on_set_aside = self._set_aside.extend  # a deque's extend: safe from the engine thread
            events = session.run_shell(text) if shell else session.run(text, images)
            future = self._future = app.engine.submit(pump(events, pipe))
            async for batch in pipe.batches():
                for event in coalesce(batch):
                    await self.handle(event)
            await asyncio.wrap_future(future)  # raises what the turn raised (a ConfigError...)
            app.chat.share_replies(turn_answers(session.conversation.messages))
        except SwebashError as exc:
            app.chat.add_error(exc.title, exc.message, exc.hint)
        except asyncio.CancelledError:
            if future is not None:
                future.cancel()
            app.chat.add_notice("Cancelled.", "warning")
            raise
        except concurrent.futures.CancelledError:
            app.chat.add_notice("Cancelled.", "warning")
        except Exception as exc:
            log.exception("turn failed")
            app.chat.add_error("Internal error", f"{type(exc).__name__}: {exc}",
                               "The conversation is kept; please report this.")
        finally:
            self._future = None
            await app.chat.end_reply()
            self.show_notices(app.session)  # the turn's save may have forked the session
            self._release_set_aside()
            app.busy = False
            app.status.set_busy("")

    def _recall(self, call_id: str) -> str | None:
        """The text of a call's result, read back when the conversation set it aside (the tool pane's recall)."""
        session = self.app.session
        return session.conversation.tool_result(call_id) if session is not None else None

    def _release_set_aside(self) -> None:
        ids: list[str] = []
        while self._set_aside:
            ids.append(self._set_aside.popleft())
        self.app.activity.set_aside(ids)

    def cancel(self) -> None:
        """Ask the loop to stop; if the turn still runs two seconds later, cancel it outright."""
        app = self.app
        app.status.set_busy("cancelling")
        if app.session is not None:
            app.engine.call_soon(app.session.cancel)
        future, worker = self._future, app.turn_worker

        def force() -> None:
            if future is not None and not future.done():
                future.cancel()
            if worker is not None and not worker.is_finished:
                worker.cancel()

        app.set_timer(2.0, force)

    async def handle(self, event: AgentEvent) -> None:
        """Render one event."""
        from swebash_ai.agent import events as ev
        from swebash_ai.agent.limits import LIMIT_SETTINGS, spent_line

        app = self.app
        match event:
            case ev.TextDelta(text=text):
                await app.chat.write_reply(text)
            case ev.ToolCallStarted():
                await app.chat.end_reply()
                app.activity.start(event.call_id, event.name, event.summary, event.arguments,
                                   response_id=event.response_id, position=event.position)
            case ev.ToolCallWaiting():
                app.activity.wait(event.call_id, event.waiting_for)
            case ev.ToolCallRunning():
                app.activity.resume(event.call_id)
            case ev.ApprovalRequested():
                app.activity.set_state(event.request.call_id, "waiting")
            case ev.ToolOutput():
                app.activity.output(event.call_id, event.text)
            case ev.ToolCallFinished(result=result):
                app.activity.finish(event.call_id, event.name, result.status, result.text, result.exit_code,
                                    result.duration, note=background_note(result),
                                    where=sandbox_tag(result) or diagnostics_tag(result),
                                    refused=sandbox_refused_line(result))
            case ev.PlanUpdated(plan=plan):
                app.plan.show(plan)
            case ev.Usage():
                app.status.add_usage(event.prompt_tokens, event.completion_tokens, event.cost, event.cached_tokens)
            case ev.BudgetUsed():
                app.status.set_budget(spent_line(event))
            case ev.Notice():
                app.chat.add_notice(event.text, event.level)
            case ev.ModelNote():
                pass  # the exits it tells were shown when they happened (processes.watch_exits)
            case ev.SubagentEvent():
                from swebash_ai.agent.subagents import progress_line

                call_id, line, inner = progress_line(event)
                if isinstance(inner, ev.Usage):  # a helper's tokens are the turn's too
                    app.status.add_usage(inner.prompt_tokens, inner.completion_tokens, inner.cost, inner.cached_tokens)
                if line:
                    app.activity.child(call_id, line)
            case ev.TurnFinished(reason=reason):
                await app.chat.end_reply()
                if reason == "cancelled":
                    app.chat.add_notice("Cancelled. The conversation is kept; ask again or go on.", "warning")
                elif reason in LIMIT_SETTINGS:
                    self.can_go_on = True
                    app.chat.add_notice("Tell the model what to do differently, or press Ctrl+G to go on." if reason
                                        == "loop" else "Press Ctrl+G to go on with a fresh budget.", "warning")
                    app.refresh_bindings()
                elif event.denied:
                    app.chat.add_notice(f"{event.denied} call{'' if event.denied == 1 else 's'} denied.", "info")
            case ev.TurnFailed(error=error):
                await app.chat.end_reply()
                app.chat.add_error(error.title, error.message, error.hint)
                from swebash_ai.errors import ImageInputError

                bar = app.prompt.attachments
                if isinstance(error, ImageInputError) and error.status is None and bar is not None:
                    for image in self._chips:  # refused before sending: the chips wait for another model
                        bar.add(image)

    # --- slash commands -------------------------------------------------------------------------------
    async def command(self, text: str) -> None:
        app = self.app
        parsed = commands.parse(text)
        if parsed is None:
            return
        name, arg = parsed.name, parsed.argument
        if name not in commands.SLASH_COMMANDS:
            matches = commands.complete(name)
            hint = f" Did you mean {', '.join(matches)}?" if matches else " Type /help for the list."
            app.chat.add_notice(f"Unknown command {name}.{hint}", "warning")
            return
        if name in BUSY_COMMANDS and app.busy:
            app.notify(f"{name} must wait until the assistant is done (Esc cancels it).", severity="warning")
            return
        handler = getattr(self.switch, "cmd_" + name[1:], None) or getattr(self, "cmd_" + name[1:])
        try:
            await handler(arg)
        except Exception as exc:  # a command must never take the app down
            from swebash_ai.errors import SwebashError

            if isinstance(exc, SwebashError):
                app.chat.add_error(exc.title, exc.message, exc.hint)
            else:
                log.exception("command %s failed", name)
                app.chat.add_error(f"{name} failed", f"{type(exc).__name__}: {exc}")

    async def ready_session(self) -> Session | None:
        await self.app.session_ready.wait()
        if self.app.session is None:
            self.app.chat.add_error("No session", "The session could not start; see the error above.")
        return self.app.session

    async def clear_screen(self) -> None:
        await self.app.chat.clear()
        await self.app.activity.clear()

    async def cmd_ps(self, arg: str) -> None:
        from swebash_ai.frontends.tui.processes import ps_command

        session = await self.ready_session()
        if session is not None:
            await ps_command(self.app, session, arg)

    async def cmd_diagnostics(self, arg: str) -> None:
        from swebash_ai.frontends.tui.processes import diagnostics_command

        session = await self.ready_session()
        if session is not None:
            await diagnostics_command(self.app, session, arg)

    async def cmd_help(self, arg: str) -> None:
        from swebash_ai.frontends.tui.user_input import BUILTINS, help_rows, prompt_hints
        from swebash_ai.frontends.tui.widgets.chat import HelpMessage

        session = self.app.session
        if session is None:
            self.app.chat.append(HelpMessage())
            return
        found = await asyncio.to_thread(session.custom_commands, BUILTINS)
        self.app.prompt.custom = prompt_hints(found)
        self.app.chat.append(HelpMessage(*help_rows(found)))

    async def cmd_context(self, arg: str) -> None:
        session = await self.ready_session()
        if session is not None:
            from swebash_ai.frontends.tui.context_report import context_report

            self.app.chat.add_info(context_report(session), title="Context")

    async def cmd_stats(self, arg: str) -> None:
        from swebash_ai.observe.stats import Window, collect, render

        session = self.app.session
        if session is None:
            self.app.chat.add_error("No session", "The session could not start; see the error above.")
            return
        where, sid = session.loaded.locations, session.conversation.id
        report = await asyncio.to_thread(lambda: render(collect(where, Window(session=sid))))
        self.app.chat.add_info(report + "\n\nAll sessions: swebash-ai stats --all (or --since 7d).", title="Stats")

    async def cmd_compact(self, arg: str) -> None:
        session = await self.ready_session()
        if session is None:
            return
        app = self.app
        app.busy = True
        app.status.set_busy("compacting")
        try:
            notices = await app.engine.call(session.compact(force=True))
        finally:
            app.busy = False
            app.status.set_busy("")
        for notice in notices:
            await self.handle(notice)

    async def cmd_clear(self, arg: str) -> None:
        await self.clear_screen()

    async def cmd_exit(self, arg: str) -> None:
        self.app.exit(0)

    async def cmd_new(self, arg: str) -> None:
        session = await self.ready_session()
        if session is None:
            return
        session.new_conversation()
        await self.clear_screen()
        self.app.plan.show(None)
        self.app.status.reset_usage()
        self.show_notices(session)
        self.app.chat.add_notice("New conversation.")

    async def cmd_theme(self, arg: str) -> None:
        app = self.app
        if not arg:
            app.chat.add_notice(f"Theme: {app.theme}. Themes: {app.theme_names()}. Use /theme NAME.")
        elif app.set_theme(arg):
            app.notify(f"Theme: {arg}")
        else:
            app.chat.add_notice(f"Unknown theme '{arg}'. Themes: {app.theme_names()}.", "warning")

    async def cmd_tools(self, arg: str) -> None:
        session = await self.ready_session()
        if session is None:
            return
        lines = []
        for name in session.registry.names():
            tool = session.registry.get(name)
            desc = (tool.description.splitlines() or [""])[0] if tool is not None else ""
            lines.append(f"  {name} ({tool.category if tool else '?'}): {desc}")
        body = "\n".join(lines) or "No tools are enabled (see SWEBASH_AI_TOOLS_* settings)."
        self.app.chat.add_info(body, title="Tools the model may use")

    async def cmd_rules(self, arg: str) -> None:
        session = await self.ready_session()
        if session is not None:
            from swebash_ai.frontends.tui.approvals import cmd_rules

            cmd_rules(self.app, session, arg)

    async def cmd_agents(self, arg: str) -> None:
        session = await self.ready_session()
        if session is not None:
            from swebash_ai.commands.agents import render_agents

            s = session.settings
            self.app.chat.add_notice(render_agents(session.find_agents(), enabled=s.subagents and not s.tools_allow))

    async def cmd_save(self, arg: str) -> None:
        session = await self.ready_session()
        if session is None:
            return
        if not session.conversation.messages:
            self.app.chat.add_notice("Nothing to save yet.")
            return
        session.save()
        self.show_notices(session)
        self.app.chat.add_notice(f"Saved to {session.session_file} (resume with /sessions or --resume "
                                 f"{session.conversation.id}).")

    async def cmd_undo(self, arg: str) -> None:
        """``/undo [--force]``: revert the file changes of the last turn not yet undone (docs/undo.md)."""
        from swebash_ai.tools.checkpoints import UndoRefused

        session = await self.ready_session()
        if session is None:
            return
        if arg.strip() not in ("", "--force"):
            self.app.chat.add_notice(f"/undo takes no argument but --force (got '{arg.strip()}').", "warning")
            return
        try:
            result = session.undo(force=arg.strip() == "--force")
        except UndoRefused as exc:
            self.app.chat.add_notice(str(exc), "warning")
            return
        self.app.chat.add_info(result.summary(), title="Undo")
        self.show_notices(session)
