"""Background processes: commands that outlive the tool call that started them (a dev server, a watcher).

Contract:
    ``run_command(background=true)`` (``tools/exec.py``) is judged and approved exactly like a foreground
    command, then hands the command to the session's :class:`ProcessService`, which starts it through
    :func:`~swebash_ai.tools.process.start_contained` (the one way processes start: supervisor, subreaper,
    whole-tree stop) and answers at once with ``process id: <ID>`` and the first output (up to
    :data:`FIRST_WAIT` seconds or :data:`FIRST_LINES` lines). ``read_process`` returns the output since the
    last read from a bounded ring buffer (saying how many bytes it dropped) and the state; ``stop_process``
    ends the whole tree (SIGTERM, a grace, SIGKILL: the supervisor's sweep) and says what it stopped and
    what survived.

Why a session-scoped service: the processes belong to the session, not to a turn. A cancelled turn cancels
the tool call's task, never the pumps and watcher tasks created here; the session's ``aclose()`` (TUI quit,
one-shot exit, Ctrl-C, a crashed loop) stops them all, and a killed swebash-ai closes each supervisor's
control pipe, which stops its command too. Limits (how many run at once, the buffer) are settings.

Exits: a process that ends by itself (not stopped by ``stop_process``, by hand or by the session's end)
after its ``run_command`` call answered is announced once to :attr:`ProcessService.on_exit`, a front end's
listener (the TUI shows a notice: "background process p2 `npm run dev` exited with code 1 after 12 s"),
and kept for the model: :meth:`ProcessService.take_exits` hands the exits it has not heard of to the loop,
which tells the model in its next request (``agent/loop.py``). A ``read_process`` or ``stop_process`` that
showed the ended state already told it, so that exit is not repeated; an exit before the call answered is
in that call's own result, so it is not announced at all.

Undo: an approved command's workspace is snapshotted before it starts (by the exec tool) and again when it
is stopped or exits (``on_end``), so ``/undo`` can revert what it changed. The after-state goes to the
checkpoints that hold the before-state when it ends, whatever the session did meanwhile: the turn that
started it may have been handed to a fork by its save (then the fork's checkpoints, which the fork's undo
reads), or saved before a later fork, or left by ``/new`` (then the original's, whose undo reverts that turn).
A confined command's ``on_end`` also runs the sandbox's check after a run (``sandbox/planted.py``); the lines it
returns are said in the exit notice and in what ``read_process`` and ``stop_process`` return.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import signal
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from swebash_ai.errors import ToolError
from swebash_ai.tools.registry import Tool, ToolContext, ToolResult, tool

if TYPE_CHECKING:  # the process machinery loads with the first background command (the loop imports this module)
    from swebash_ai.sandbox.policy import SandboxPolicy
    from swebash_ai.tools.containment import Containment
    from swebash_ai.tools.process import Contained

__all__ = ["FIRST_LINES", "FIRST_WAIT", "MAX_WAIT", "TOOLS", "BackgroundProcess", "ProcessRow", "ProcessService",
           "Ring", "background_exits", "read_process", "stop_process"]

log = logging.getLogger(__name__)

EndHook = Callable[[], Sequence[str] | None]
"""Run in a thread when a process has ended, before its end is news: what it did, one line each (or nothing)."""

FIRST_WAIT = 1.0  # seconds run_command(background=true) waits for the first output
FIRST_LINES = 5  # ... or until this many lines came
MAX_WAIT = 60  # read_process(wait_seconds) cap: a call must not hold the turn for long
_READ_SIZE = 65_536
_DRAIN_TIMEOUT = 2.0
_KEEP_ENDED = 32  # ended processes remembered (their last output and exit code stay readable)

State = Literal["running", "exited", "stopped"]


class Ring:
    """Bounded output: the last ``cap`` bytes, a read position, and how much was dropped before a read."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.buf = bytearray()
        self.start = 0  # absolute offset of buf[0]
        self.read_to = 0  # absolute offset the reader has had
        self.lines = 0  # newlines ever written (the first-output wait counts them)

    @property
    def end(self) -> int:
        return self.start + len(self.buf)

    def add(self, data: bytes) -> None:
        self.buf += data
        self.lines += data.count(b"\n")
        if len(self.buf) > self.cap:
            cut = len(self.buf) - self.cap
            del self.buf[:cut]
            self.start += cut

    def take(self, *, final: bool) -> tuple[str, int]:
        """The output since the last read (cleaned text) and the bytes dropped from it. Unless ``final``, a
        character cut at the end is held back for the next read."""
        begin = max(self.read_to, self.start)
        data = bytes(self.buf[begin - self.start :])
        skip = _leading_continuations(data) if begin > self.read_to else 0  # the ring cut a character in two
        dropped = begin - self.read_to + skip
        data = data[skip:]
        keep = len(data) if final else _complete_prefix(data)
        self.read_to = begin + skip + keep
        from swebash_ai.tools.output import clean_output

        return clean_output(data[:keep].decode("utf-8", "replace")), dropped


def _leading_continuations(data: bytes) -> int:
    i = 0
    while i < min(3, len(data)) and 0x80 <= data[i] <= 0xBF:
        i += 1
    return i


def _complete_prefix(data: bytes) -> int:
    """The length of ``data`` without a UTF-8 character cut at its end."""
    for back in range(1, min(4, len(data)) + 1):
        b = data[-back]
        if b < 0x80:
            return len(data)
        if b >= 0xC0:  # a lead byte: how long should its character be?
            need = 2 if b < 0xE0 else 3 if b < 0xF0 else 4
            return len(data) if back >= need else len(data) - back
    return len(data)


@dataclass(frozen=True)
class ProcessRow:
    """A background process as a front end lists it (plain data: safe to read from another thread)."""

    id: str
    command: str
    state: str
    pid: int
    seconds: float
    running: bool


class BackgroundProcess:
    """One background command: its containment, its output ring and its state (see the module docstring)."""

    def __init__(self, pid_id: str, command: str, cwd: Path, job: Contained, cap: int, approved: bool,
                 on_end: EndHook | None, on_exit: Callable[[BackgroundProcess], None] | None = None,
                 ) -> None:
        self.id, self.command, self.cwd, self.job, self.approved = pid_id, command, cwd, job, approved
        self.ring = Ring(cap)
        self.started = time.monotonic()
        self.ended_at: float | None = None
        self.state: State = "running"
        self.exit_code: int | None = None
        self.signal: str | None = None
        self.containment: Containment | None = None
        self._on_end = on_end
        self._on_exit = on_exit
        self.end_notes: list[str] = []
        """What ``on_end`` did when it ended (the sandbox's check after a run put back a planted hook...): said
        in its exit notice and in what read_process and stop_process return."""
        self.announce = False
        """Whether an exit by itself is announced: set once ``run_command`` answered that it runs."""
        self.model_knows_end = False
        """A result the model read showed it ended: its exit is not told again (:meth:`ProcessService.take_exits`)."""
        self._changed = asyncio.Event()
        self._pumps = [asyncio.create_task(self._pump(job.stdout)), asyncio.create_task(self._pump(job.stderr))]
        self._ending: asyncio.Task[None] | None = None
        self._stop_requested = False
        self.stopped_by = ""
        self._watch = asyncio.create_task(self._watch_exit())

    @property
    def running(self) -> bool:
        return self.state == "running"

    def describe_state(self) -> str:
        if self.state == "running":
            return "running"
        if self.state == "stopped":
            how = f"killed by {self.signal}" if self.signal else f"exit code {self.exit_code}"
            return f"stopped by {self.stopped_by} ({how})"
        return f"killed by {self.signal}" if self.signal else f"exited with code {self.exit_code}"

    def ended_words(self) -> str:
        """The state with how long it ran once it ended: ``exited with code 1 after 12 s``."""
        if self.ended_at is None:
            return self.describe_state()
        return f"{self.describe_state()} after {_duration(self.ended_at - self.started)}"

    def exit_notice(self) -> str:
        """The one line a front end shows when it ended by itself (and what was done after it, in full)."""
        notes = "".join(f"; {n}" for n in self.end_notes)
        return f"background process {self.id} `{_short(self.command)}` {self.ended_words()}{notes}"

    def row(self) -> ProcessRow:
        end = self.ended_at if self.ended_at is not None else time.monotonic()
        state = "running" if self.running else self.describe_state()
        return ProcessRow(self.id, self.command, state, self.job.pid, end - self.started, self.running)

    async def _pump(self, reader: asyncio.StreamReader) -> None:
        # stdout and stderr into one ring, in arrival order: a server logs requests on one and errors on the other
        while data := await reader.read(_READ_SIZE):
            self.ring.add(data)
            self._changed.set()

    async def _watch_exit(self) -> None:
        await self.job.exited()
        await self._end(stop=False)

    async def stop(self, by: str = "stop_process") -> None:
        """Stop the whole tree (idempotent; an exited process is left as it is). ``by``: who asked, as the
        state will say (``stop_process``, ``hand (/ps)``, ``the end of the session``)."""
        if self.running and not self._stop_requested:
            self._stop_requested, self.stopped_by = True, by
        await self._end(stop=True)

    async def _end(self, *, stop: bool) -> None:
        if self._ending is None:
            self._ending = asyncio.create_task(self._finish(stop))
        await asyncio.shield(self._ending)

    async def _finish(self, stop: bool) -> None:
        try:
            self.containment = await (self.job.stop() if stop else self.job.wait())
            await asyncio.wait(self._pumps, timeout=_DRAIN_TIMEOUT)
        finally:
            for task in self._pumps:
                task.cancel()
            self.job.close()
            rc = self.job.returncode
            if rc is not None and rc < 0:
                self.signal = signal.Signals(-rc).name if -rc in signal.valid_signals() else f"signal {-rc}"
                rc = 128 - rc
            self.exit_code, self.ended_at = rc, time.monotonic()
            if self._on_end is not None:  # the check after a run, the after-snapshot for undo: before the end is
                try:  # news, so the notice and what the model reads say what they did
                    notes = await asyncio.to_thread(self._on_end)
                    self.end_notes = list(notes or ())
                except Exception:
                    log.exception("the end of background process %s could not be recorded", self.id)
            self.state = "stopped" if stop and self._stop_requested else "exited"
            self._changed.set()
            if self.state == "exited" and self.announce and self._on_exit is not None:
                try:
                    self._on_exit(self)
                except Exception:  # a front end's listener must not break the process's ending
                    log.exception("the background process exit listener failed")

    async def wait_output(self, since: int, timeout: float, *, lines: int | None = None) -> None:  # noqa: ASYNC109
        """Return when output past ``since`` came (``lines``: when that many lines in all came), the process
        ended, or ``timeout`` passed."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout

        def ready() -> bool:
            if not self.running:
                return True
            return self.ring.lines >= lines if lines is not None else self.ring.end > since

        while not ready():
            self._changed.clear()
            if ready():
                break
            left = deadline - loop.time()
            if left <= 0:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)

    def read(self) -> tuple[str, int]:
        """The output since the last read, bytes dropped.

        Not masked here: a result that carries it is marked ``unasked_output`` when nobody approved the command,
        and the loop's one secrets scan masks it with the stricter rules (as for a foreground command).
        """
        return self.ring.take(final=not self.running)


class ProcessService:
    """The session's background processes: start, list, read, stop, and stop all when the session ends."""

    def __init__(self, max_running: int = 8, buffer_bytes: int = 32_768) -> None:
        self.max_running, self.buffer_bytes = max_running, buffer_bytes
        self._procs: dict[str, BackgroundProcess] = {}
        self._ids = itertools.count(1)
        self.closed = False
        self.on_exit: Callable[[BackgroundProcess], None] | None = None
        """Called (on the loop the processes run on) when one exits by itself; see the module docstring."""
        self._untold: list[BackgroundProcess] = []

    def get(self, pid_id: str) -> BackgroundProcess | None:
        return self._procs.get(pid_id.strip())

    def require(self, pid_id: str) -> BackgroundProcess:
        """The process ``pid_id``.

        Raises:
            ToolError: no such process (the message lists the known ones).
        """
        proc = self.get(pid_id)
        if proc is None:
            raise ToolError(_unknown(pid_id, self._procs))
        return proc

    def running(self) -> list[BackgroundProcess]:
        return [p for p in list(self._procs.values()) if p.running]

    def rows(self) -> list[ProcessRow]:
        """Every process this session remembers, oldest first (for ``/ps``; safe from another thread)."""
        return [p.row() for p in list(self._procs.values())]

    async def start(self, command: str, argv: Sequence[str], *, cwd: Path, env: dict[str, str], approved: bool,
                    on_end: EndHook | None = None) -> BackgroundProcess:
        """Start ``argv`` (bash running ``command``) in the background.

        Raises:
            ToolError: the limit of running processes is reached, the session has ended, or it cannot start.
        """
        if self.closed:
            raise ToolError("The session is ending; no background process can start now.")
        busy = self.running()
        if len(busy) >= self.max_running:
            shown = "; ".join(f"{p.id}: {_short(p.command)}" for p in busy)
            raise ToolError(
                f"{len(busy)} background processes are already running, the limit (setting "
                f"background_max_running = {self.max_running}). Stop one you no longer need with stop_process "
                f"first. Running: {shown}."
            )
        from swebash_ai.tools.containment import MARKER_VAR
        from swebash_ai.tools.process import start_contained

        env = dict(env)
        env[MARKER_VAR] = uuid.uuid4().hex
        job = await start_contained(argv, cwd=cwd, env=env)
        proc = BackgroundProcess(f"p{next(self._ids)}", command, cwd, job, self.buffer_bytes, approved, on_end,
                                 self._exited)
        self._procs[proc.id] = proc
        self._forget_old()
        return proc

    async def stop(self, pid_id: str, by: str = "stop_process") -> BackgroundProcess:
        """Stop one process by id (``by``: see :meth:`BackgroundProcess.stop`).

        Raises:
            ToolError: no such process.
        """
        proc = self.require(pid_id)
        await proc.stop(by)
        return proc

    async def aclose(self) -> list[BackgroundProcess]:
        """Stop every process still running (the session ends); returns those it stopped. Safe to repeat."""
        self.closed = True
        live = self.running()
        await asyncio.gather(*(p.stop("the end of the session") for p in live), return_exceptions=True)
        return live

    async def stop_all(self) -> list[str]:
        """Stop every process still running (the session ends): one line per process stopped, naming what
        survived it, for the front end to show."""
        lines = []
        for proc in await self.aclose():
            line = f"stopped background process {proc.id} at the end of the session: $ {proc.command}"
            if proc.containment is not None and not proc.containment.complete:
                line += f" ({proc.containment.survivors_text()})"
            line += "".join(f"; {n}" for n in proc.end_notes)
            lines.append(line)
        return lines

    def take_exits(self) -> list[BackgroundProcess]:
        """The processes that exited by themselves since the last call, which no result the model read has
        shown ended yet (each is returned once)."""
        untold, self._untold = [p for p in self._untold if not p.model_knows_end], []
        for proc in untold:
            proc.model_knows_end = True
        return untold

    def _exited(self, proc: BackgroundProcess) -> None:
        self._untold.append(proc)
        if self.on_exit is not None:  # read at the exit: a front end may set it after the process started
            self.on_exit(proc)

    def _forget_old(self) -> None:
        ended = [k for k, p in self._procs.items() if not p.running]
        for key in ended[: max(0, len(ended) - _KEEP_ENDED)]:
            del self._procs[key]


def background_exits(service: object) -> str:
    """The note telling the model which background processes exited by themselves since it last heard (empty
    when none did, or when there is no :class:`ProcessService`)."""
    if not isinstance(service, ProcessService):
        return ""
    exits = service.take_exits()
    if not exits:
        return ""
    lines = [f"- {p.exit_notice()}" for p in exits]
    return "\n".join([_EXITS_HEAD, *lines])


_EXITS_HEAD = "[swebash-ai] Since your last request, by itself (read_process shows the last output):"


def exits_told(note: str) -> list[tuple[str, bool]]:
    """The exits a note of :func:`background_exits` told the model, as (the line a front end showed when it
    happened, whether the process failed): what a resumed conversation shows again. Another note is one line."""
    head, _, rest = note.partition("\n")
    if head != _EXITS_HEAD:
        return [(note, False)]
    told = []
    for line in rest.splitlines():
        notice = line.removeprefix("- ")
        ended = notice.rpartition("` ")[2]  # after the command, which may hold anything
        told.append((notice, not ended.startswith("exited with code 0 ")))
    return told


def _duration(seconds: float) -> str:
    s = round(seconds)
    return f"{seconds:.1f} s" if seconds < 10 else f"{s} s" if s < 120 else f"{s // 60} min {s % 60} s"


def _short(command: str, limit: int = 60) -> str:
    text = " ".join(command.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _unknown(pid_id: str, procs: dict[str, BackgroundProcess]) -> str:
    known = ", ".join(f"{k} ({'running' if p.running else 'ended'})" for k, p in procs.items()) or "none"
    return (f"No background process {pid_id!r} in this session. Known: {known}. Ids look like 'p1' and come "
            "from run_command(background=true); processes end with the session that started them.")


def service_of(ctx: ToolContext) -> ProcessService:
    svc = ctx.processes
    if svc is None:
        raise ToolError("Background processes are not available here (no session owns them).")
    assert isinstance(svc, ProcessService)
    return svc


def _report(proc: BackgroundProcess, text: str, dropped: int, cap: int) -> list[str]:
    lines = []
    if dropped:
        lines.append(f"[… {dropped} bytes of output dropped: the buffer keeps the last {cap} bytes; read more "
                     "often, or filter the output (e.g. | grep) …]")
    if text:
        lines += ["output:", text[:-1] if text.endswith("\n") else text]
    else:
        lines.append("(no new output)")
    return lines


def _ending_lines(proc: BackgroundProcess) -> list[str]:
    c = proc.containment
    if c is None:
        return []
    lines = [f"note: {n}" for n in proc.end_notes]
    if c.stopped_count:
        from swebash_ai.tools.containment import processes

        lines.append(f"also stopped {processes(c.stopped_count)} it had started: {c.stopped_names()}")
    if not c.complete:
        lines.append(f"warning: {c.survivors_text()}")
    lines += [f"note: {n}" for n in c.notes]
    return lines


async def start_background(ctx: ToolContext, command: str, workdir: Path, *, keep_env: Sequence[str],
                           sandbox: SandboxPolicy | None = None, backend: str = "auto",
                           on_end: EndHook | None) -> ToolResult:
    """The background half of ``run_command``: the command was judged and approved already."""
    from swebash_ai.tools.command_env import build_argv, child_environment

    try:
        svc = service_of(ctx)
        argv = build_argv(command, cwd=workdir, sandbox=sandbox, backend=backend)
        env = child_environment(os.environ, keep_env, sandbox)
        proc = await svc.start(command, argv, cwd=workdir, env=env, approved=ctx.approved, on_end=on_end)
    except ToolError as exc:
        if on_end is not None:  # nothing ran: close the snapshot record all the same
            await asyncio.to_thread(on_end)
        return ToolResult.error(exc.message)
    try:
        await proc.wait_output(0, FIRST_WAIT, lines=FIRST_LINES)
    except asyncio.CancelledError:
        await proc.stop("the cancelled call")  # the model never learnt its id: nothing is left behind
        raise
    text, dropped = proc.read()
    lines = [f"process id: {proc.id}", f"state: {proc.describe_state()}",
             *_report(proc, text, dropped, svc.buffer_bytes)]
    if proc.running:
        proc.announce = True  # from now on its exit is news (no await since the state above was read)
        lines.append(f"It keeps running after this turn. read_process(id=\"{proc.id}\") returns new output; "
                     f"stop_process(id=\"{proc.id}\") stops it.")
    else:
        lines += _ending_lines(proc)
    meta = {"process_id": proc.id, "background": True, "state": proc.state, "cwd": str(workdir),
            "dropped_bytes": dropped}
    return ToolResult(True, "\n".join(lines), "ok", proc.exit_code, metadata=meta, unasked_output=not proc.approved)


def _describe_read(args: Any) -> str:
    return f"read process {args.id}" + (f" (wait up to {args.wait_seconds:g} s)" if args.wait_seconds else "")


@tool("exec", describe=_describe_read)
async def read_process(
    ctx: ToolContext,
    id: str,
    wait_seconds: Annotated[float, Field(ge=0, le=MAX_WAIT)] = 0,
) -> ToolResult:
    """Read what a background process (started with run_command(background=true)) printed since the last read.

    Returns its state (running, or exited with its code and how long it ran) and its new output (stdout and
    stderr together).
    Only the last part of a flood of output is kept; the result says how much was dropped.

    Args:
        id: The process id run_command returned, e.g. `p1`.
        wait_seconds: Wait up to this many seconds for new output or the exit (0: answer at once; at most 60).
    """
    try:
        proc = service_of(ctx).require(id)
    except ToolError as exc:
        return ToolResult.error(exc.message)
    if wait_seconds:
        await proc.wait_output(proc.ring.read_to, wait_seconds)
    text, dropped = proc.read()
    lines = [f"process {proc.id}: {proc.ended_words()}  ($ {_short(proc.command, 100)})",
             *_report(proc, text, dropped, proc.ring.cap)]
    if not proc.running:
        lines += _ending_lines(proc)
        proc.model_knows_end = True
    meta = {"process_id": proc.id, "state": proc.state, "dropped_bytes": dropped}
    return ToolResult(True, "\n".join(lines), "ok", proc.exit_code, metadata=meta, unasked_output=not proc.approved)


def _describe_stop(args: Any) -> str:
    return f"stop process {args.id}"


@tool("exec", describe=_describe_stop)
async def stop_process(
    ctx: ToolContext,
    id: str,
) -> ToolResult:
    """Stop a background process and everything it started (SIGTERM, then SIGKILL after a short grace).

    Args:
        id: The process id run_command returned, e.g. `p1`.
    """
    try:
        proc = service_of(ctx).require(id)
    except ToolError as exc:
        return ToolResult.error(exc.message)
    was_running = proc.running
    await proc.stop()
    head = (f"stopped process {proc.id} ($ {_short(proc.command, 100)}): {proc.describe_state()}" if was_running
            else f"process {proc.id} had already ended: {proc.describe_state()}")
    proc.model_knows_end = True
    text, dropped = proc.read()
    lines = [head, *_ending_lines(proc)]
    if text or dropped:
        lines += _report(proc, text, dropped, proc.ring.cap)
    c = proc.containment
    meta = {"process_id": proc.id, "state": proc.state, "was_running": was_running,
            "survivors": [{"pid": p.pid, "cmdline": p.cmdline} for p in c.survivors] if c is not None else []}
    ok = c is None or c.complete
    return ToolResult(ok, "\n".join(lines), "ok" if ok else "error", proc.exit_code, metadata=meta,
                      unasked_output=not proc.approved)


TOOLS: list[Tool] = [read_process, stop_process]
