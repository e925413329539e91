"""The tool-activity pane: one live entry per tool call.

Each entry shows the tool's name, a one-line summary of the call, its state (checking, waiting for its turn
to ask, waiting for approval, running with the elapsed time, done, failed, timed out, denied, cancelled), the
duration and the exit code. A call that started early but only waits in the question line (``ToolCallWaiting``:
``ask_user`` behind an earlier call's approval) is not shown as running, and its clock starts when its turn
comes. Entries stand in the model's order of the calls of a response, even when a later call started first.
Enter or a click expands it to the full arguments and the output (scrollable); a running
command's output streams into it as it arrives and the entry opens itself the first time output comes; it
closes again when a later call starts (unless the user opened or closed it), so a long turn does not leave
dozens of open logs for every layout pass to arrange.

A long session makes a thousand tool calls, and every Textual layout pass arranges every widget of the
screen: with one entry per call kept forever, the pane alone made each pass of a streamed reply cost
150-250 ms (measured with ``bench/tui_resume_session.py``) and the resume of such a session took seconds.
So the pane keeps at most :data:`LIVE_ENTRIES` (20) finished entries as widgets; earlier calls are kept as
:class:`ToolRecord` (plain data, their output cut to :data:`RECORD_OUTPUT_CHARS`) behind an
:class:`EarlierCalls` line ("N earlier tool calls") that shows them again, :data:`PAGE` at a time. An
entry's arguments and output widgets are only built when it is first expanded (or output streams in). A record
whose output is the result the conversation set aside (agent/result_store.py) keeps no copy of it: shown
again, it is read back through :attr:`ActivityPane.recall` (see :meth:`ActivityPane.set_aside`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Log, Static

from swebash_ai.frontends.tui.early_frame import NO_TOOL_CALLS
from swebash_ai.frontends.tui.shown import MarkerHighlighter, shown, styled
from swebash_ai.frontends.tui.widgets.chat import FollowingScroll
from swebash_ai.frontends.tui.widgets.earlier import EarlierLine
from swebash_ai.safety.terminal_text import StreamSanitizer, safe

#: The clock behind the elapsed time (replaced in snapshot tests so frames never depend on timing).
clock: Callable[[], float] = time.monotonic

STATES: dict[str, tuple[str, str]] = {
    # state: (icon, label)
    "checking": ("○", "checking"),
    "queued": ("○", "waiting for earlier calls"),
    "waiting": ("?", "waiting for approval"),
    "running": ("●", "running"),
    "done": ("✓", "done"),
    "failed": ("✗", "failed"),
    "timeout": ("⏱", "timed out"),
    "denied": ("⊘", "denied"),
    "cancelled": ("■", "cancelled"),
}
LIVE_ENTRIES = 20
"""Most tool calls the pane keeps as widgets while it follows the newest (see the module's docstring)."""
PAGE = 20
"""Earlier calls shown again per Enter (or click) on the "earlier tool calls" line."""
MOST_ENTRIES = 400
"""Most entries kept as widgets even while the user browses earlier calls (new calls then push the oldest
shown back behind the "earlier" line)."""
RECORD_OUTPUT_CHARS = 20_000
"""Most characters of output kept for a call behind the "earlier" line (its last ones)."""
WAITING_FOR = {
    "earlier_calls": "waiting for earlier calls",
    "response": "waiting for the response to end",
    "question": "waiting for another question",
}
"""The label of a call waiting in the question line, by what it waits for (``ToolCallWaiting.waiting_for``)."""
FINAL_STATES = frozenset({"done", "failed", "timeout", "denied", "cancelled"})
_STATUS_TO_STATE = {"ok": "done", "error": "failed", "denied": "denied", "cancelled": "cancelled", "timeout": "timeout"}


def background_note(result: Any) -> str:
    """What a call that started a background process says instead of "done": the process goes on."""
    meta = result.metadata
    if result.status != "ok" or not meta.get("background") or not meta.get("process_id"):
        return ""
    # Stays true after the process ends (the entry is not updated then; /ps says how it is); short: a narrow pane.
    return f"started {meta['process_id']} in the background"


def sandbox_tag(result: Any) -> str:
    """Where a command ran, for its status line: in the sandbox, outside it by your yes, or unconfined."""
    where = result.metadata.get("sandbox")
    if not isinstance(where, str) or where == "none":
        return ""
    if where == "unavailable":
        return "unsandboxed: no sandbox here"
    if where.startswith("outside"):
        return "OUTSIDE the sandbox"
    return "sandbox refused something" if result.metadata.get("sandbox_blocked") else "sandboxed"


def sandbox_refused_line(result: Any) -> str:
    """What the sandbox refused, each operation and path in full, for the wrapped line under a command's status
    ("" when it refused nothing): the status line is one row, and a path cut there is no path at all."""
    if not result.metadata.get("sandbox_blocked"):
        return ""
    from swebash_ai.sandbox.confine import refused_line

    return refused_line(result.metadata)


def diagnostics_tag(result: Any) -> str:
    """What the language server said of an edit, for its status line (the lines are in the entry's body)."""
    diag = result.metadata.get("diagnostics")
    if not isinstance(diag, dict) or diag.get("status") in (None, "none", "pending"):
        return ""
    if diag["status"] != "ok":
        return "no diagnostics" if diag["status"] != "timeout" else "diagnostics timed out"
    errors, warnings = diag.get("errors", 0), diag.get("warnings", 0)
    if not errors and not warnings:
        return f"{diag.get('server', 'server')}: clean"
    return f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"


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


@dataclass(slots=True)
class ToolRecord:
    """A tool call as plain data: what an entry shows, without its widgets. One is kept per call of the
    session, so it has slots, not a ``__dict__`` (a third of its size)."""

    call_id: str
    name: str
    summary: str
    arguments: dict[str, Any] | str
    state: str = "checking"
    duration: float | None = None
    exit_code: int | None = None
    output: str = ""
    aside: bool = False
    """The output is the call's result, which the conversation set aside: read back when shown, not kept here."""

    def finish(self, status: str, content: str, exit_code: int | None, duration: float | None) -> None:
        """As :meth:`ToolEntry.finish`, for a call not shown (a resumed session: no duration is kept)."""
        self.state, self.output = state_for_status(status), content
        self.exit_code, self.duration = exit_code, duration


def _cut_output(text: str) -> str:
    if len(text) <= RECORD_OUTPUT_CHARS:
        return text
    return f"[{len(text) - RECORD_OUTPUT_CHARS:,} earlier characters not kept]\n" + text[-RECORD_OUTPUT_CHARS:]


class ToolEntry(Vertical, can_focus=True):
    """One tool call. ``state`` drives the CSS class (``-running``, ``-done``...).

    Its name, summary, arguments and output are shown with any terminal control characters as visible
    escapes (``\\x1b``) and invisible characters as ``<U+202E>`` markers in reverse video (frontends/tui/shown.py):
    a tool, a server, a file name or the model wrote them (safety/terminal_text.py)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("enter,space", "toggle_expand", "Expand", show=False)]

    def __init__(self, call_id: str, name: str, summary: str, arguments: dict[str, Any] | str,
                 response_id: str = "", position: int = 0) -> None:
        super().__init__(classes="-checking")
        self.call_id = call_id
        self.response_id = response_id
        self.position = position
        """Which response the call belongs to and its place among that response's calls (the model's order)."""
        self.waiting_for = ""  # the label while queued
        self.tool_name = safe(name, visible=True)
        self.summary = " ".join(safe(summary, visible=True).split()) or self.tool_name
        self.arguments = arguments
        self.state = "checking"
        self.started = clock()
        self.duration: float | None = None
        self.exit_code: int | None = None
        self.note = ""  # said instead of the state's label (see background_note)
        self.where = ""  # where a command ran (see sandbox_tag)
        self.refused = ""  # what the sandbox refused, wrapped under the status (see sandbox_refused_line)
        self.has_output = False
        self._user_toggled = False
        self._pending: list[str] = []  # output not in the log yet (no log until the entry is expanded)
        self._clean = StreamSanitizer(visible=True)  # output streams in pieces: a sequence may be cut
        self._header = Static(classes="tool-header")
        self._status = Static(classes="tool-status")
        self._log: Log | None = None  # built with the body on first expansion: most entries never are
        self._result = ""  # the result's text: the conversation's own string, referred to, never copied
        self._ready = False  # on_mount has run (is_mounted turns true only after it)

    def compose(self) -> Any:
        yield self._header
        yield self._status

    def on_mount(self) -> None:
        self._header.update(Content.assemble(styled(self.tool_name, "bold"), "  ", styled(self.summary)))
        self.refresh_status()
        self._ready = True
        self._show_refused()
        if self.expanded:
            self._build_body()

    def _show_refused(self) -> None:
        if self.refused and self._ready and not self.query(".tool-refused"):
            self.mount(Static(self.refused, classes="tool-refused", markup=False), after=self._status)

    def _build_body(self) -> None:
        if self._log is not None or not self._ready:
            return
        self._log = Log(highlight=True, max_lines=5000, classes="tool-output", auto_scroll=True)
        self._log.highlighter = MarkerHighlighter()  # the markers alone: output is not coloured otherwise
        args = Static(shown(format_arguments(self.arguments)), classes="tool-args")
        self.mount(Vertical(args, self._log, classes="tool-body"))
        self.call_after_refresh(self._flush)

    def _flush(self) -> None:
        if self._log is None or not self._log.is_mounted:
            return
        pending, self._pending = self._pending, []
        if pending:
            self._log.write("".join(pending))

    def _write(self, text: str) -> None:
        if self._log is not None and self._log.is_mounted and not self._pending:
            self._log.write(text)
        else:
            self._pending.append(text)
            self._flush()

    @property
    def output_text(self) -> str:
        """All output shown so far (for tests and copy)."""
        shown = "\n".join(self._log.lines) if self._log is not None else ""
        return shown + "".join(self._pending)

    def record(self) -> ToolRecord:
        """This call as plain data (see :class:`ToolRecord`). A call whose output is its result keeps the
        result's string (the one the conversation holds), not the lines of its log joined again."""
        output = self._result if self._result and not self.has_output else self.output_text
        return ToolRecord(self.call_id, self.tool_name, self.summary, self.arguments, self.state,
                          self.duration, self.exit_code, _cut_output(output))

    @classmethod
    def from_record(cls, record: ToolRecord, output: str | None = None) -> ToolEntry:
        """``output``: the record's output read back (a record set aside keeps none)."""
        entry = cls(record.call_id, record.name, record.summary, record.arguments)
        entry.remove_class("-checking")
        entry.state, entry.duration, entry.exit_code = record.state, record.duration, record.exit_code
        entry.add_class(f"-{record.state}")
        if output := output if output is not None else record.output:
            entry._result = safe(output, visible=True)
            entry._pending.append(entry._result)
        return entry

    # --- state ----------------------------------------------------------------------------------------
    @property
    def expanded(self) -> bool:
        return self.has_class("-expanded")

    def set_state(self, state: str) -> None:
        if state == self.state or self.state in FINAL_STATES:
            return
        if state == "running":
            self.started = clock()  # time spent waiting (for approval, for its turn) is not running time
        self.remove_class(f"-{self.state}")
        self.state = state
        self.add_class(f"-{state}")
        self.refresh_status()

    def queue(self, waiting_for: str) -> None:
        """The call waits for its turn to ask (``ToolCallWaiting``). Only a call shown as running (or checking)
        is put back so: the approver marks a question on screen as waiting for approval itself, and the events
        may reach the pane after it did."""
        if self.state not in ("running", "checking", "queued"):
            return
        self.waiting_for = WAITING_FOR.get(waiting_for, STATES["queued"][1])
        if self.state == "queued":
            self.refresh_status()
        self.set_state("queued")

    def resume(self) -> None:
        """Its turn has come (``ToolCallRunning``): running from now on, unless the approver already shows its
        question."""
        if self.state == "queued":
            self.set_state("running")

    def finish(self, status: str, content: str, exit_code: int | None, duration: float, note: str = "",
               where: str = "", refused: str = "") -> None:
        self.exit_code = exit_code
        self.duration = duration
        self.note = note
        self.where = where
        if refused and not self.refused:
            self.refused = safe(refused, visible=True)
            self._show_refused()
        if held := self._clean.finish():
            self._write(held)
        if not self.has_output and content:
            self._result = safe(content, visible=True)  # the same string unless it had something to show
            self._write(self._result)
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
                self._build_body()
        if text := self._clean.feed(text):
            self._write(text)

    def close_if_opened_itself(self) -> None:
        """Close the entry if it is finished and was opened by its output, not by the user."""
        if self.expanded and not self._user_toggled and self.state in FINAL_STATES:
            self.remove_class("-expanded")

    def status_text(self) -> str:
        icon, label = STATES.get(self.state, ("?", self.state))
        if self.state == "queued" and self.waiting_for:
            label = self.waiting_for
        parts = [f"{icon} {self.note or label}"]
        if self.state == "running":
            parts.append(format_seconds(max(0.0, clock() - self.started)))
        elif self.duration is not None and self.state not in ("denied",):
            parts.append(format_seconds(self.duration))
        if self.exit_code is not None:
            parts.append(f"exit {self.exit_code}")
        if self.where:
            parts.append(self.where)
        return " · ".join(parts)

    def refresh_status(self) -> None:
        # One line (see the stylesheet): the per-second tick of a running call needs no re-layout.
        self._status.update(self.status_text(), layout=False)

    # --- expanding ------------------------------------------------------------------------------------
    def action_toggle_expand(self) -> None:
        self._user_toggled = True
        self.toggle_class("-expanded")
        if self.expanded:
            self._build_body()
            self.scroll_visible()

    def on_click(self, event: events.Click) -> None:
        if event.widget in (self._header, self._status, self):
            self.focus()
            self.action_toggle_expand()


class EarlierCalls(EarlierLine):
    """The line above the entries standing for the calls kept as records; Enter or a click shows more."""


class ActivityPane(FollowingScroll):
    """Every tool call of the session, newest at the bottom; the earliest behind an "earlier" line."""

    BORDER_TITLE = "Tools"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: dict[str, ToolEntry] = {}
        """The calls shown as widgets, by call id."""
        self.earlier: list[ToolRecord] = []
        """The calls before those, oldest first."""
        self.recall: Callable[[str], str | None] | None = None
        """The text of a call's result as the conversation holds it (read back when set aside); the app sets it."""
        self._aside_live: set[str] = set()
        """Calls set aside while still shown as entries: their records keep no output (see :meth:`set_aside`)."""
        self._placeholder = Static(NO_TOOL_CALLS, classes="placeholder")
        self._more = EarlierCalls(classes="earlier")
        self._more.display = False

    @property
    def placeholder(self) -> Static:
        """The line shown while there are no tool calls."""
        return self._placeholder

    @property
    def earlier_line(self) -> EarlierCalls:
        return self._more

    def compose(self) -> Any:
        yield self._placeholder
        yield self._more

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
        self, call_id: str, name: str, summary: str, arguments: dict[str, Any] | str, state: str = "running",
        *, response_id: str = "", position: int = 0,
    ) -> ToolEntry:
        """``response_id``, ``position``: the call's place in its response; it is shown above the later calls of
        that response that started before it (one its policy allowed outright starts while the response streams)."""
        self._placeholder.display = False
        for earlier in self.entries.values():
            earlier.close_if_opened_itself()
        entry = ToolEntry(call_id, name, summary, arguments, response_id, position)
        later = self._later_of_response(response_id, position)
        self.entries[call_id] = entry
        if later is not None:
            self.mount(entry, before=later)
        else:
            self.mount(entry)
        entry.set_state(state)
        if state == "running":
            self._ticker.resume()
        self._trim()
        return entry

    def _later_of_response(self, response_id: str, position: int) -> ToolEntry | None:
        """The first shown entry of the same response that comes after ``position`` in the model's order."""
        if not response_id:
            return None
        return next((e for e in self.query_children(ToolEntry)
                     if e.response_id == response_id and e.position > position
                     and self.entries.get(e.call_id) is e), None)

    def wait(self, call_id: str, waiting_for: str) -> None:
        """The call waits for its turn to ask (see :meth:`ToolEntry.queue`)."""
        entry = self.entries.get(call_id)
        if entry is not None:
            entry.queue(waiting_for)

    def resume(self, call_id: str) -> None:
        """The call's turn has come (see :meth:`ToolEntry.resume`)."""
        entry = self.entries.get(call_id)
        if entry is not None:
            entry.resume()
            if entry.state == "running":
                self._ticker.resume()

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
        self, call_id: str, name: str, status: str, content: str, exit_code: int | None, duration: float,
        *, note: str = "", where: str = "", refused: str = "",
    ) -> None:
        """``note``: said instead of the state's label (a background process started: not "done"); ``where``:
        where a command ran (:func:`sandbox_tag`); ``refused``: what the sandbox refused, shown wrapped in full
        (:func:`sandbox_refused_line`)."""
        entry = self.entries.get(call_id) or self.start(call_id, name, name, {})
        entry.finish(status, content, exit_code, duration, note, where, refused)
        if name == "task":  # a helper's group closes when it is done (unless the user opened or closed it)
            entry.close_if_opened_itself()

    def child(self, call_id: str, line: str) -> None:
        """A line of a helper agent's progress (its calls, as they start and end) in the entry of the ``task``
        call that runs it: that entry is the helper's group, open while it works."""
        entry = self.entries.get(call_id)
        if entry is not None:
            entry.append_output(line)

    # --- the calls kept as records ----------------------------------------------------------------------
    def load_history(self, records: Iterable[ToolRecord]) -> None:
        """Calls of a resumed conversation, older than any shown: the last :data:`LIVE_ENTRIES` become
        entries, the others records (mounting a thousand entries took seconds)."""
        records = list(records)
        if not records:
            return
        self._placeholder.display = False
        room = max(0, LIVE_ENTRIES - len(self.entries))
        kept, shown = (records[:-room], records[-room:]) if room else (records, [])
        self.earlier[:0] = kept
        entries = [ToolEntry.from_record(record, self._output_of(record)) for record in shown]
        self.entries = {**{e.call_id: e for e in entries}, **self.entries}
        if entries:
            self.mount_all(entries, after=self._more)
        self._update_more()

    def show_earlier(self) -> None:
        """Show the :data:`PAGE` calls before the first shown (the user browses back)."""
        if not self.earlier:
            return
        page, self.earlier = self.earlier[-PAGE:], self.earlier[:-PAGE]
        entries = [ToolEntry.from_record(record, self._output_of(record)) for record in page]
        self.entries = {**{e.call_id: e for e in entries}, **self.entries}
        self.mount_all(entries, after=self._more)
        self._update_more()
        if not self.earlier:
            entries[0].focus()  # the line that had the focus is gone

    def _trim(self) -> None:
        """Put the oldest finished entries back behind the "earlier" line, down to :data:`LIVE_ENTRIES`
        while the pane follows the newest call (not while the user reads earlier ones, up to
        :data:`MOST_ENTRIES`)."""
        excess = len(self.entries) - LIVE_ENTRIES
        if excess <= 0 or (not self.is_anchored and len(self.entries) <= MOST_ENTRIES):
            return
        gone: list[ToolEntry] = []
        for entry in self.query_children(ToolEntry):
            if self.entries.get(entry.call_id) is not entry:
                continue  # already on its way out (removal completes later)
            if len(gone) == excess or entry.state not in FINAL_STATES or entry.has_focus:
                break  # records stay in order: only the oldest run of finished calls goes
            gone.append(entry)
        for entry in gone:
            record = entry.record()
            if entry.call_id in self._aside_live:
                self._aside_live.discard(entry.call_id)
                self._drop_output(record)
            self.earlier.append(record)
            del self.entries[entry.call_id]
        if gone:
            self.remove_children(gone)
            self._update_more()

    def _update_more(self) -> None:
        count = len(self.earlier)
        self._more.display = bool(count)
        if count:
            calls = "call" if count == 1 else "calls"
            self._more.update(f"▲ {count:,} earlier tool {calls}: Enter or click shows {min(PAGE, count)} more")

    # --- results the conversation set aside ---------------------------------------------------------------
    def set_aside(self, call_ids: Iterable[str]) -> None:
        """The conversation set these calls' results aside (agent/result_store.py): their records drop the copy
        of it they hold (now, or when their entry becomes a record); shown again, it is read back."""
        wanted = set(call_ids)
        if self.recall is None or not wanted:
            return
        self._aside_live |= wanted & self.entries.keys()
        wanted -= self.entries.keys()
        for record in reversed(self.earlier):
            if not wanted:
                break
            if record.call_id in wanted:
                wanted.discard(record.call_id)
                self._drop_output(record)

    def _drop_output(self, record: ToolRecord) -> None:
        """Drop ``record``'s output when it is what :attr:`recall` gives back (a helper's group, say, is not)."""
        if record.aside or not record.output or self.recall is None:
            return
        text = self.recall(record.call_id)
        if text is not None and record.output in (_cut_output(text), _cut_output(safe(text, visible=True))):
            record.output, record.aside = "", True

    def _output_of(self, record: ToolRecord) -> str | None:
        if not record.aside or self.recall is None:
            return None
        return _cut_output(self.recall(record.call_id) or "")

    async def clear(self) -> None:
        for entry in list(self.entries.values()):
            await entry.remove()
        self.entries.clear()
        self._aside_live.clear()
        self.earlier.clear()
        self._update_more()
        self._placeholder.display = True
        self.anchor(False)
