"""The tool-activity pane: one live entry per tool call.

Each entry shows the tool's name, a one-line summary of the call, its state (checking, waiting for
approval, running with the elapsed time, done, failed, timed out, denied, cancelled), the duration and
the exit code. Enter or a click expands it to the full arguments and the output (scrollable); a running
command's output streams into it as it arrives and the entry opens itself the first time output comes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Log, Static

from swebash_ai.tui.early_frame import NO_TOOL_CALLS
from swebash_ai.tui.widgets.chat import FollowingScroll

#: The clock behind the elapsed time (replaced in snapshot tests so frames never depend on timing).
clock: Callable[[], float] = time.monotonic

STATES: dict[str, tuple[str, str]] = {
    # state: (icon, label)
    "checking": ("○", "checking"),
    "waiting": ("?", "waiting for approval"),
    "running": ("●", "running"),
    "done": ("✓", "done"),
    "failed": ("✗", "failed"),
    "timeout": ("⏱", "timed out"),
    "denied": ("⊘", "denied"),
    "cancelled": ("■", "cancelled"),
}
FINAL_STATES = frozenset({"done", "failed", "timeout", "denied", "cancelled"})
_STATUS_TO_STATE = {"ok": "done", "error": "failed", "denied": "denied", "cancelled": "cancelled", "timeout": "timeout"}


def state_for_status(status: str) -> str:
    """Entry state for a ``ToolResult.status``."""
    return _STATUS_TO_STATE.get(status, "failed")


def format_seconds(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.1f}s"
    if seconds < 60:
        return f"{seconds:.0f}s"
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


def format_arguments(arguments: dict[str, Any] | str) -> str:
    if isinstance(arguments, str):
        return arguments
    given = {k: v for k, v in arguments.items() if v is not None}  # unset optional arguments are noise
    return json.dumps(given, indent=2, ensure_ascii=False)


class ToolEntry(Vertical, can_focus=True):
    """One tool call. ``state`` drives the CSS class (``-running``, ``-done``...)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter,space", "toggle_expand", "Expand", show=False)]

    def __init__(self, call_id: str, name: str, summary: str, arguments: dict[str, Any] | str) -> None:
        super().__init__(classes="-checking")
        self.call_id = call_id
        self.tool_name = name
        self.summary = " ".join(summary.split()) or name
        self.arguments = arguments
        self.state = "checking"
        self.started = clock()
        self.duration: float | None = None
        self.exit_code: int | None = None
        self.has_output = False
        self._user_toggled = False
        self._pending: list[str] = []  # output that arrived before the log was mounted
        self._header = Static(classes="tool-header")
        self._status = Static(classes="tool-status")
        self._args = Static(Content(format_arguments(arguments)), classes="tool-args")
        self._log = Log(max_lines=5000, classes="tool-output", auto_scroll=True)
        self._body = Vertical(self._args, self._log, classes="tool-body")

    def compose(self) -> Any:
        yield self._header
        yield self._status
        yield self._body

    def on_mount(self) -> None:
        self._header.update(Content.assemble((self.tool_name, "bold"), "  ", self.summary))
        self.refresh_status()
        self.call_after_refresh(self._flush)

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        if pending:
            self._log.write("".join(pending))

    def _write(self, text: str) -> None:
        if self._log.is_mounted and not self._pending:
            self._log.write(text)
        else:
            self._pending.append(text)
            if self._log.is_mounted:
                self._flush()

    @property
    def output_text(self) -> str:
        """All output shown so far (for tests and copy)."""
        return "\n".join(self._log.lines) + "".join(self._pending)

    # --- state ----------------------------------------------------------------------------------------
    @property
    def expanded(self) -> bool:
        return self.has_class("-expanded")

    def set_state(self, state: str) -> None:
        if state == self.state or self.state in FINAL_STATES:
            return
        if state == "running":
            self.started = clock()  # time spent waiting for approval is not running time
        self.remove_class(f"-{self.state}")
        self.state = state
        self.add_class(f"-{state}")
        self.refresh_status()

    def finish(self, status: str, content: str, exit_code: int | None, duration: float) -> None:
        self.exit_code = exit_code
        self.duration = duration
        if not self.has_output and content:
            self._write(content)
        elif self.has_output and exit_code is not None:
            self._write(f"\n[exit {exit_code}]\n")
        self.remove_class(f"-{self.state}")
        self.state = state_for_status(status)
        self.add_class(f"-{self.state}")
        self.refresh_status()

    def append_output(self, text: str) -> None:
        if not self.has_output:
            self.has_output = True
            if not self._user_toggled:
                self.add_class("-expanded")
        self._write(text)

    def status_text(self) -> str:
        icon, label = STATES.get(self.state, ("?", self.state))
        parts = [f"{icon} {label}"]
        if self.state == "running":
            parts.append(format_seconds(max(0.0, clock() - self.started)))
        elif self.duration is not None and self.state not in ("denied",):
            parts.append(format_seconds(self.duration))
        if self.exit_code is not None:
            parts.append(f"exit {self.exit_code}")
        return " · ".join(parts)

    def refresh_status(self) -> None:
        # One line (see the stylesheet): the per-second tick of a running call needs no re-layout.
        self._status.update(self.status_text(), layout=False)

    # --- expanding ------------------------------------------------------------------------------------
    def action_toggle_expand(self) -> None:
        self._user_toggled = True
        self.toggle_class("-expanded")
        if self.expanded:
            self.scroll_visible()

    def on_click(self, event: events.Click) -> None:
        if event.widget in (self._header, self._status, self):
            self.focus()
            self.action_toggle_expand()


class ActivityPane(FollowingScroll):
    """Every tool call of the session, newest at the bottom."""

    BORDER_TITLE = "Tools"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: dict[str, ToolEntry] = {}
        self._placeholder = Static(NO_TOOL_CALLS, classes="placeholder")

    @property
    def placeholder(self) -> Static:
        """The line shown while there are no tool calls."""
        return self._placeholder

    def compose(self) -> Any:
        yield self._placeholder

    def on_mount(self) -> None:
        self._ticker = self.set_interval(1.0, self._tick, pause=True)

    def _tick(self) -> None:
        running = [e for e in self.entries.values() if e.state == "running"]
        for entry in running:
            entry.refresh_status()
        if not running:
            self._ticker.pause()

    def entry(self, call_id: str) -> ToolEntry | None:
        return self.entries.get(call_id)

    def start(
        self, call_id: str, name: str, summary: str, arguments: dict[str, Any] | str, state: str = "running"
    ) -> ToolEntry:
        self._placeholder.display = False
        entry = ToolEntry(call_id, name, summary, arguments)
        self.entries[call_id] = entry
        self.mount(entry)
        entry.set_state(state)
        if state == "running":
            self._ticker.resume()
        return entry

    def set_state(self, call_id: str, state: str) -> None:
        entry = self.entries.get(call_id)
        if entry is not None:
            entry.set_state(state)
            if state == "running":
                self._ticker.resume()

    def output(self, call_id: str, text: str) -> None:
        entry = self.entries.get(call_id)
        if entry is not None:
            entry.append_output(text)

    def finish(
        self, call_id: str, name: str, status: str, content: str, exit_code: int | None, duration: float
    ) -> None:
        entry = self.entries.get(call_id) or self.start(call_id, name, name, {})
        entry.finish(status, content, exit_code, duration)

    async def clear(self) -> None:
        for entry in list(self.entries.values()):
            await entry.remove()
        self.entries.clear()
        self._placeholder.display = True
        self.anchor(False)
