"""What the controller needs from the app, as a protocol, so the dependency runs one way: app -> controller.

``SwebashApp`` satisfies :class:`ControllerHost` structurally (mypy checks it where the app builds its
controller); ``controller.py`` imports this module, never ``app.py``. Textual's own methods are typed as
plain callables here: the controller calls them like any caller would, and their exact overloads belong to
Textual.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.worker import Worker

    from swebash_ai.agent.approval import Approver
    from swebash_ai.config.settings import LoadedSettings
    from swebash_ai.frontends.tui.engine import Engine
    from swebash_ai.frontends.tui.input_first import InputFirst
    from swebash_ai.frontends.tui.widgets.activity import ActivityPane
    from swebash_ai.frontends.tui.widgets.chat import ChatPane
    from swebash_ai.frontends.tui.widgets.plan import PlanPanel
    from swebash_ai.frontends.tui.widgets.prompt import PromptInput
    from swebash_ai.frontends.tui.widgets.status import StatusBar
    from swebash_ai.session import Session
    from swebash_ai.tools.registry import Tool


class ControllerHost(Protocol):
    """The app as the controller sees it: its state, its panes, and a few Textual calls."""

    session: Session | None
    session_ready: asyncio.Event
    loaded: LoadedSettings | None
    busy: bool
    input_first: InputFirst
    turn_worker: Worker[None] | None
    cwd: Path
    tools: Sequence[Tool] | None
    services: dict[str, Any] | None
    theme: str
    setup_on_start: bool

    @property
    def approver(self) -> Approver: ...

    @property
    def chat(self) -> ChatPane: ...

    @property
    def activity(self) -> ActivityPane: ...

    @property
    def status(self) -> StatusBar: ...

    @property
    def plan(self) -> PlanPanel: ...

    @property
    def prompt(self) -> PromptInput: ...

    @property
    def engine(self) -> Engine: ...

    @property
    def is_running(self) -> bool:
        """False once the app stopped (a build that ends later must not touch its widgets)."""
        ...

    def theme_names(self) -> str: ...

    def set_theme(self, name: str) -> bool: ...

    @property
    def run_worker(self) -> Callable[..., Any]: ...

    @property
    def set_timer(self) -> Callable[..., Any]: ...

    @property
    def notify(self) -> Callable[..., Any]: ...

    @property
    def push_screen(self) -> Callable[..., Any]: ...

    @property
    def exit(self) -> Callable[..., Any]: ...

    @property
    def refresh_bindings(self) -> Callable[..., Any]: ...
