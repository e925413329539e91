"""The Textual app: renders the events of a :class:`~swebash_ai.session.Session`; owns no agent logic.

Start-up: the first frame is drawn from the settings alone. The session (which imports pydantic tool
models, the provider and its HTTP client) is built in a thread worker after that frame, and the provider
library is preloaded in the same thread, so neither the first frame nor the first question pays for it.

A turn runs in an exclusive async worker that consumes ``session.run(text)``; the loop asks for approval
through :class:`TuiApprover`, which pushes :class:`~swebash_ai.frontends.tui.screens.confirm.ConfirmScreen` and
awaits its answer; the model's questions (``ask_user``) come the same way, to
:class:`~swebash_ai.frontends.tui.screens.ask.AskScreen`. Cancelling (Esc, Ctrl+C) calls ``session.cancel()``: the
loop then finishes the turn itself and leaves the conversation valid.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Container
from textual.screen import Screen
from textual.widgets import Footer
from textual.worker import Worker

from swebash_ai.frontends.tui.controller import Controller
from swebash_ai.frontends.tui.early_frame import NARROW_WIDTH, save_colours
from swebash_ai.frontends.tui.garbage import full_collections_held, pin_mmap_threshold, settle_memory
from swebash_ai.frontends.tui.input_first import InputFirst
from swebash_ai.frontends.tui.session_switch import preload_provider
from swebash_ai.frontends.tui.themes import load_themes
from swebash_ai.frontends.tui.widgets.activity import ActivityPane
from swebash_ai.frontends.tui.widgets.chat import ChatPane
from swebash_ai.frontends.tui.widgets.plan import PlanPanel
from swebash_ai.frontends.tui.widgets.prompt import PromptBar, PromptHistory, PromptInput
from swebash_ai.frontends.tui.widgets.status import StatusBar

if TYPE_CHECKING:
    from textual.driver import Driver

    from swebash_ai.agent.approval import Decision
    from swebash_ai.agent.events import ApprovalRequest
    from swebash_ai.config.file import StartInfo
    from swebash_ai.config.settings import LoadedSettings
    from swebash_ai.frontends.tui.engine import Engine
    from swebash_ai.providers import OllamaOffer
    from swebash_ai.session import Session
    from swebash_ai.tools.ask import Answer, Question
    from swebash_ai.tools.registry import Tool

log = logging.getLogger(__name__)
_T = TypeVar("_T")

DEFAULT_THEME = "dark"
FIRST_FRAME_ENV = "SWEBASH_TUI_FIRST_FRAME_FILE"
"""Benchmark hook: write the wall-clock time of the first frame and the CPU seconds used so far to this file,
then exit."""


class TuiApprover:
    """The :class:`~swebash_ai.agent.approval.Approver` of the TUI: a modal the user answers."""

    interactive = True

    def __init__(self, app: SwebashApp) -> None:
        self._app = app

    async def decide(self, request: ApprovalRequest) -> Decision:
        """Called on the engine loop: ask on the UI loop and wait (a cancelled turn closes the modal)."""
        return await self._on_ui(self._app.ask_approval(request))

    async def ask(self, question: Question) -> Answer:
        """The model's question (``ask_user``), asked like an approval: a modal on the UI loop."""
        return await self._on_ui(self._app.ask_question(question))

    async def _on_ui(self, work: Coroutine[Any, Any, _T]) -> _T:
        ui_loop = self._app.ui_loop
        if ui_loop is None or ui_loop is asyncio.get_running_loop():
            return await work
        future = asyncio.run_coroutine_threadsafe(work, ui_loop)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()
            raise


class MainArea(Container):
    """Chat and tool panes side by side; stacked (class ``-narrow``) below :data:`NARROW_WIDTH` columns."""

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < NARROW_WIDTH, "-narrow")


class SwebashApp(App[int]):
    """swebash-ai's interactive assistant: chat, tool activity, prompt, status bar."""

    CSS_PATH = "app.tcss"
    TITLE = "swebash-ai"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "interrupt", "Cancel / quit", priority=True),
        Binding("escape", "escape", "Cancel", show=False),
        Binding("ctrl+l", "clear_screen", "Clear"),
        Binding("f2", "focus_tools", "Tools"),
        Binding("ctrl+g", "go_on", "Go on", priority=True),
        Binding("shift+tab", "cycle_mode", "Mode", priority=True),
        Binding("ctrl+n", "new_conversation", "New", show=False),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
    ]

    def __init__(
        self,
        loaded: LoadedSettings | Callable[[], LoadedSettings],
        *,
        cwd: Path,
        resume: str | None = None,
        resume_latest: bool = False,
        tools: Sequence[Tool] | None = None,
        services: dict[str, Any] | None = None,
        probe_ollama: bool = True,
        session: Session | None = None,
        start: StartInfo | None = None,
        driver_class: type[Driver] | None = None,
        setup_on_start: bool = True,
    ) -> None:
        super().__init__(driver_class=driver_class)
        # ``loaded`` may be a loader: validating the settings imports pydantic (~70 ms), so the
        # command line hands over a loader and what the first frame needs (``start``), read cheaply.
        self._load_settings: Callable[[], LoadedSettings] | None = loaded if callable(loaded) else None
        self.loaded: LoadedSettings | None = None if callable(loaded) else loaded
        if start is None:
            if self.loaded is None:
                raise TypeError("SwebashApp needs start= when given a settings loader")
            start = self.loaded.start_info
        self.start = start
        self.cwd = cwd
        self.resume_id = resume
        self.resume_latest = resume_latest
        self.tools = tools
        self.services = services
        self.probe_ollama = probe_ollama
        self.setup_on_start = setup_on_start
        """With no provider, open the setup screen once the session is ready (else say how, once)."""
        self.session: Session | None = session
        self.session_ready = asyncio.Event()
        self.approver = TuiApprover(self)
        self.controller = Controller(self)
        self.history = PromptHistory(start.locations.prompt_history)
        self.busy = False
        self.turn_worker: Worker[None] | None = None
        self.ui_loop: asyncio.AbstractEventLoop | None = None
        self._engine: Engine | None = None
        self._collections_held = contextlib.ExitStack()
        self.input_first = InputFirst(self)
        self._typed_ahead: list[events.Event] | None = []  # keys that came before the prompt (see on_mount)
        # Before the first frame, so the stylesheet is computed once, for the right theme.
        self._theme_problems = self._load_themes()
        self._last_ctrl_c = 0.0
        self.pending_mode: str | None = None
        """An approval mode chosen (Shift+Tab) before the session was ready."""

    # --- layout ---------------------------------------------------------------------------------------
    def compose(self) -> Any:
        with MainArea(id="main"):
            yield ChatPane(id="chat")
            yield ActivityPane(id="activity")
        yield PlanPanel(id="plan")
        yield PromptBar(self.history, id="prompt-bar")
        yield StatusBar(id="status")
        yield Footer()

    @property
    def chat(self) -> ChatPane:
        return self.query_one("#chat", ChatPane)

    @property
    def activity(self) -> ActivityPane:
        return self.query_one("#activity", ActivityPane)

    @property
    def plan(self) -> PlanPanel:
        return self.query_one("#plan", PlanPanel)

    @property
    def status(self) -> StatusBar:
        return self.query_one("#status", StatusBar)

    @property
    def prompt(self) -> PromptInput:
        return self.query_one("#prompt", PromptInput)

    @property
    def engine(self) -> Engine:
        """The thread the session's turns run on (started on first use)."""
        if self._engine is None:
            from swebash_ai.frontends.tui.engine import Engine

            self._engine = Engine()
        return self._engine

    def on_unmount(self) -> None:
        self.input_first.release()
        if self._engine is not None:
            if self.session is not None:
                # Background and MCP server processes end with the app (bounded: every stop has a deadline).
                with contextlib.suppress(Exception):
                    self._engine.submit(self.session.aclose()).result(timeout=12)
            self._engine.stop()
        self._collections_held.close()

    def post_message(self, message: Any) -> bool:
        """Keys and pastes from the terminal: kept until the prompt can take them (typed while the app
        starts); then each holds repaints until it is handled (see input_first)."""
        if isinstance(message, (events.Key, events.Paste)) and not message.is_forwarded:
            if self._typed_ahead is not None:
                self._typed_ahead.append(message)
                return True
            if self.ui_loop is not None and _running_loop() is self.ui_loop:
                self.input_first.hold()
        return super().post_message(message)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded:
            self._type_into_prompt(event)
        await super().on_event(event)

    def _type_into_prompt(self, event: events.Key) -> None:
        """A printable key typed while a pane of the main screen has the focus goes to the prompt, which
        takes the focus (at once, before Textual forwards the key to the focused widget), unless the pane
        has a use for that key (Space expands a tool call)."""
        if not event.is_printable or len(self.screen_stack) != 1:
            return
        focused = self.focused
        with contextlib.suppress(Exception):  # no prompt yet (the app is starting or closing)
            prompt = self.prompt
            if focused is prompt or (focused is not None and event.key in focused._bindings.key_to_bindings):
                return
            self.screen.set_focus(prompt)

    def on_mount(self) -> None:
        self.ui_loop = asyncio.get_running_loop()
        self._collections_held.enter_context(full_collections_held())
        pin_mmap_threshold()  # before the first request body (see garbage.py)
        for problem in self._theme_problems:
            self.notify(problem, title="Themes", severity="warning", timeout=8)
        self.status.set_info(self.start.model or "connecting…", self.start.profile, self.cwd)
        self.status.set_mode(self.start.mode)
        self.chat.border_title = "Chat"
        self.activity.border_title = "Tools"
        self.prompt.focus()
        typed, self._typed_ahead = self._typed_ahead or [], None
        for message in typed:
            self.post_message(_typed_before_start(message))
        self.call_after_refresh(self._after_first_frame)

    # --- themes ---------------------------------------------------------------------------------------
    def _load_themes(self) -> list[str]:
        """Register the theme files and select the configured theme; returns problems to report."""
        found = load_themes(self.start.locations.themes_dir)
        for theme in found.themes.values():
            self.register_theme(theme)
        problems = [f"Theme file skipped: {reason}" for _path, reason in found.failed]
        wanted = self.start.theme or DEFAULT_THEME
        if not self.set_theme(wanted):
            problems.append(f"Unknown theme '{wanted}'; using '{DEFAULT_THEME}'. Themes: {self.theme_names()}")
            self.set_theme(DEFAULT_THEME)
        return problems

    def theme_names(self) -> str:
        return ", ".join(sorted(self.available_themes))

    def set_theme(self, name: str) -> bool:
        """Switch theme; False when no theme has that name."""
        if name not in self.available_themes:
            return False
        self.theme = name
        return True

    # --- start-up -------------------------------------------------------------------------------------
    def _after_first_frame(self) -> None:
        marker = os.environ.get(FIRST_FRAME_ENV)
        if marker:
            Path(marker).write_text(f"{time.time():.6f} {time.process_time():.6f}\n", encoding="utf-8")
            self.exit(0)
            return
        colours = self._drawn_colours()
        self.run_worker(lambda: save_colours(self.start.locations.state_dir, self.theme, colours), thread=True,
                        group="setup", exit_on_error=False)
        if self.session is not None:
            self.controller.session_ready(self.session, None)
        else:
            self.run_worker(self._build_session, thread=True, group="setup", exit_on_error=False)

    def _drawn_colours(self) -> dict[str, str]:
        """The theme's colours as this frame drew them, for the next early frame. Text colours are blends
        ("auto 60%") that Textual resolves against the background: they are taken from widgets that use them."""
        colours = dict(self.theme_variables)
        for name, widget in (("text", self.status), ("text-muted", self.activity.placeholder)):
            color = widget.rich_style.color
            if color is not None and color.triplet is not None:
                colours[name] = color.triplet.hex
        return colours

    def _build_session(self) -> None:
        """Thread worker: build the session, resume if asked, preload the provider library."""
        from swebash_ai.errors import SwebashError
        from swebash_ai.session import Session

        error: SwebashError | None = None
        session: Session | None = None
        offer: OllamaOffer | None = None
        if self.loaded is None and self._load_settings is not None:
            try:
                self.loaded = self._load_settings()
            except SwebashError as exc:  # a bad setting: leave the way one-shot does, exit code 2
                self.call_from_thread(self.exit, return_code=2, message=f"swebash-ai: {exc}")
                return
        assert self.loaded is not None
        try:
            # A local Ollama server is offered (see Controller.session_ready), not used unasked.
            session = Session(self.loaded, approver=self.approver, cwd=self.cwd, tools=self.tools,
                              services=self.services, probe_ollama=False)
            if not session.has_provider and self.probe_ollama:
                from swebash_ai.providers import ollama_offer

                offer = ollama_offer()
            if self.resume_id or self.resume_latest:
                try:
                    session.resume(self.resume_id)
                except SwebashError as exc:
                    error = exc
        except SwebashError as exc:
            error = exc
        except Exception as exc:
            log.exception("cannot build the session")
            error = SwebashError(f"{type(exc).__name__}: {exc}", title="Cannot start the session")
        self.call_from_thread(self.controller.session_ready, session, error, offer)
        if session is not None:
            preload_provider(session)
        settle_memory()

    # --- approval -------------------------------------------------------------------------------------
    async def ask_approval(self, request: ApprovalRequest) -> Decision:
        """Show the confirmation modal and wait for the answer (Deny if the turn is cancelled meanwhile)."""
        from swebash_ai.agent.approval import Decision
        from swebash_ai.frontends.tui.screens.confirm import ConfirmScreen

        self.activity.set_state(request.call_id, "waiting")
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()

        def answered(decision: Decision | None) -> None:
            if not future.done():
                future.set_result(decision if decision is not None else Decision.DENY)

        session = self.session
        explain: Callable[[ApprovalRequest], Awaitable[str]] | None = None
        if session is not None and session.has_provider:
            engine = self.engine

            async def explain(req: ApprovalRequest) -> str:
                assert session is not None
                return await engine.call(session.explain(req))

        screen = ConfirmScreen(request, explain=explain)
        self.status.set_busy("waiting for your approval")
        await self.push_screen(screen, callback=answered)
        try:
            decision = await future
        except asyncio.CancelledError:
            if screen.is_current:
                screen.dismiss(Decision.DENY)
            raise
        finally:
            if self.busy:
                self.status.set_busy("working")
        if decision is Decision.ALLOW_ALWAYS:
            from swebash_ai.frontends.tui.approvals import save_always

            if session is not None:
                save_always(self, session, request)
            decision = Decision.ALLOW_ONCE
        if decision is not Decision.DENY:
            self.activity.set_state(request.call_id, "running")
        return decision

    async def ask_question(self, question: Question) -> Answer:
        """Show the model's question and wait for the answer ("no answer" if the turn is cancelled meanwhile)."""
        from swebash_ai.frontends.tui.screens.ask import AskScreen
        from swebash_ai.tools.ask import Answer

        self.activity.set_state(question.call_id, "waiting")
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()

        def answered(answer: Answer | None) -> None:
            if not future.done():
                future.set_result(answer if answer is not None else Answer(None))

        screen = AskScreen(question)
        self.status.set_busy("waiting for your answer")
        await self.push_screen(screen, callback=answered)
        try:
            answer = await future
        except asyncio.CancelledError:
            if screen.is_current:
                screen.dismiss(Answer(None))
            raise
        finally:
            if self.busy:
                self.status.set_busy("working")
        self.activity.set_state(question.call_id, "running")
        return answer

    # --- prompt ---------------------------------------------------------------------------------------
    def on_prompt_input_page(self, message: PromptInput.Page) -> None:
        """PageUp/PageDown typed in the prompt scroll the chat (where the earlier messages are)."""
        if message.up:
            self.chat.scroll_page_up(animate=False)
        else:
            self.chat.scroll_page_down(animate=False)

    def on_prompt_input_paths_stale(self, message: PromptInput.PathsStale) -> None:
        from swebash_ai.frontends.tui.user_input import refresh_paths

        if self.session is not None:
            self.run_worker(refresh_paths(self, self.session), group="paths", exclusive=True, exit_on_error=False)

    async def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        await self.controller.submit(message.text)

    def on_prompt_input_image_path_pasted(self, message: PromptInput.ImagePathPasted) -> None:
        from swebash_ai.frontends.tui.image_input import attach_path

        self.run_worker(attach_path(self, message.path), group="images", exit_on_error=False)

    def on_prompt_input_paste_requested(self, message: PromptInput.PasteRequested) -> None:
        from swebash_ai.frontends.tui.image_input import paste_image

        self.run_worker(paste_image(self), group="images", exit_on_error=False)

    # --- actions --------------------------------------------------------------------------------------
    def action_interrupt(self) -> None:
        """Ctrl+C: cancel the running turn; on an idle prompt, twice within two seconds quits."""
        if self.busy:
            self.action_cancel_turn()
            return
        now = time.monotonic()
        if now - self._last_ctrl_c < 2.0:
            self.exit(0)
            return
        self._last_ctrl_c = now
        self.notify("Press Ctrl+C again to quit.", timeout=2)

    def action_escape(self) -> None:
        """Esc: from a pane, back to the prompt (a running turn goes on); in the prompt, cancel the turn."""
        if self.focused is not self.prompt and len(self.screen_stack) == 1:
            self.screen.set_focus(self.prompt)
            return
        self.action_cancel_turn()

    def action_cancel_turn(self) -> None:
        if not self.busy:
            return
        self.controller.cancel()

    async def action_clear_screen(self) -> None:
        await self.controller.clear_screen()

    async def action_new_conversation(self) -> None:
        await self.controller.command("/new")

    def action_focus_tools(self) -> None:
        entries = list(self.activity.entries.values())
        if entries:
            entries[-1].focus()
        else:
            self.activity.focus()

    def action_go_on(self) -> None:
        """After a turn stopped at its tool limit: another turn with a fresh budget."""
        self.controller.go_on()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "go_on":  # shown in the footer only while there is something to go on with
            return self.controller.can_go_on and not self.busy
        return True

    def action_cycle_mode(self) -> None:
        """Shift+Tab: the next approval mode; in a dialog it still moves the focus back."""
        if self.screen is not self.screen_stack[0]:
            self.screen.focus_previous()
            return
        from swebash_ai.frontends.tui.approvals import cycle_mode

        cycle_mode(self)

    def action_focus_prompt(self) -> None:
        self.prompt.focus()

    async def action_slash(self, command: str) -> None:
        await self.controller.command(command)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Cancel turn", "Stop the running answer and tools (Esc)", self.action_cancel_turn)
        yield SystemCommand("Clear screen", "Clear the chat and tool panes (Ctrl+L)", self.action_clear_screen)
        yield SystemCommand("New conversation", "Start over; the current one stays saved",
                            self.action_new_conversation)
        yield SystemCommand("Sessions", "Resume a saved session", lambda: self._slash("/sessions"))
        yield SystemCommand("Tools", "List the tools the model may use", lambda: self._slash("/tools"))
        yield SystemCommand("Save", "Save the conversation now", lambda: self._slash("/save"))
        yield SystemCommand("Help", "Commands and keys", lambda: self._slash("/help"))
        yield SystemCommand("Focus tool pane", "Select tool calls to expand them (F2)", self.action_focus_tools)
        if self.controller.can_go_on and not self.busy:
            yield SystemCommand("Go on", "Continue the stopped task with a fresh budget of tool calls (Ctrl+G)",
                                self.action_go_on)
        for name, (arg, desc) in sorted(self.prompt.custom.items()):  # command files: typed with arguments
            yield SystemCommand(name, desc, lambda name=name, arg=arg: self._type_command(name, arg))
        for name in sorted(self.available_themes):
            yield SystemCommand(f"Theme: {name}", f"Switch to the {name} theme",
                                lambda name=name: self._slash(f"/theme {name}"))

    def _type_command(self, name: str, arg: str) -> None:
        """A custom command from the palette: into the prompt, for its arguments (or sent at once without)."""
        if not arg:
            self._slash_turn(name)
            return
        self.prompt.load_text(name + " ")
        self.prompt.move_cursor((0, len(name) + 1))
        self.prompt.focus()

    def _slash_turn(self, name: str) -> None:
        self.run_worker(self.controller.submit(name), group="slash")

    def _slash(self, command: str) -> None:
        self.run_worker(self.controller.command(command), group="slash")


def _typed_before_start(message: events.Event) -> events.Event:
    """A key typed before the app had the terminal went through its line editing, which turns Enter into
    a newline (ctrl+j): it was an Enter."""
    if isinstance(message, events.Key) and message.key == "ctrl+j":
        return events.Key("enter", "\r")
    return message


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
