"""Running a shell command as a contained process tree: the one place that starts processes.

Contract:
    The only place in the package that starts processes (the exec tool, ``tools/exec.py``, calls
    :func:`run_process`; background commands and MCP stdio servers, ``tools/background.py`` and
    ``tools/mcp_stdio.py``, call :func:`start_contained`; the undo snapshots, ``tools/snapshots.py``, call
    :func:`run_program` for git, and the TUI's clipboard reader, ``frontends/tui/clipboard.py``, for
    ``wl-paste``/``xclip``/``pngpaste``):
    ``bash --noprofile --norc -c``, stdin from ``/dev/null``, its own session (no controlling tty:
    ``sudo``/``ssh`` cannot prompt), a scrubbed
    environment (no secret-looking variables, no ``BASH_ENV``/``ENV``/exported functions, pagers and
    colours off, hardened git config), optionally under bubblewrap (never a silent fallback). When
    :func:`run_process` returns or raises, nothing the command started is running, or the result names
    what could not be stopped: after a timeout, a cancellation (Ctrl-C cancels the tool's task: stop, then
    :class:`CommandCancelled` saying what the stop did) or a normal exit (left-over background processes
    are stopped and named). Output is read concurrently, streamed to ``on_output`` at most ~20 times a
    second, kept bounded and cleaned (``tools/output.py``).

Containment (``tools/containment.py`` says which mechanism holds where):
    :func:`start_contained` is the API for anything that runs a command, to completion or in the
    background: it returns a :class:`Contained` with ``wait()`` / ``stop()`` that end everything the
    command started and report it (a :class:`~swebash_ai.tools.containment.Containment`: what was stopped,
    what survived, pids and command lines). On Linux the command runs under a per-run supervisor
    (``tools/supervisor.py``), a child subreaper: no descendant can leave its tree by ``setsid``, a double
    fork or a cleared environment, and a crashed swebash-ai still ends the run (the supervisor sees its
    control pipe close). The next command's supervisor is started ahead of time (one idle spare), so a
    command does not wait for Python's start-up. Elsewhere: process group, marker variable and snapshots
    (the fallback).
    Stopping runs in a task shielded from cancellation, so a second Ctrl-C cannot interrupt it.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from swebash_ai.errors import ToolError
from swebash_ai.tools import containment
from swebash_ai.tools.command_env import GIT_HARDENING, build_argv, child_environment
from swebash_ai.tools.containment import KILL_GRACE, MARKER_VAR, Containment, ProcessInfo, become_subreaper
from swebash_ai.tools.output import Capture, Live, budget, clean_output

if TYPE_CHECKING:
    from swebash_ai.sandbox.policy import SandboxPolicy

__all__ = [
    "GIT_HARDENING",
    "KILL_GRACE",
    "MARKER_VAR",
    "CommandCancelled",
    "Contained",
    "Containment",
    "ProcessInfo",
    "ProcessResult",
    "build_argv",
    "child_environment",
    "clean_output",
    "prewarm",
    "run_process",
    "run_program",
    "start_contained",
    "stop_all",
    "supervised",
]

log = logging.getLogger(__name__)

_READ_SIZE = 65_536
_TRACK_FIRST, _TRACK_EVERY = 0.02, 0.1
_EXIT_POLL = 0.01  # the fallback polls the exit status: asyncio's wait() also waits for the pipes to close
_DRAIN_TIMEOUT = 2.0


@dataclass(frozen=True)
class ProcessResult:
    """What a command did. ``exit_code`` is 128+N when signal N (``signal``) ended it, ``None`` if unknown;
    ``stdout``/``stderr`` are cleaned text cut in the middle (``[… N bytes cut …]``) beyond the cap, while
    ``*_bytes`` count all that was written; ``stopped`` counts background processes stopped at the end and
    ``containment`` says which, and which could not be stopped."""

    exit_code: int | None
    signal: str | None
    stdout: str
    stderr: str
    timed_out: bool
    timeout: float
    truncated: bool
    stdout_bytes: int
    stderr_bytes: int
    duration: float
    stopped: int = 0
    containment: Containment | None = None
    sandbox_note: str | None = None
    """Set when the command ran in the sandbox, failed, and its output shows what the sandbox refuses."""

    @property
    def status(self) -> Literal["ok", "error", "timeout"]:
        return "timeout" if self.timed_out else "ok" if self.exit_code == 0 else "error"

    @property
    def survivors(self) -> tuple[ProcessInfo, ...]:
        return self.containment.survivors if self.containment is not None else ()

    def render(self) -> str:
        """The result as text for a model: a status line, then the ``stdout:`` and ``stderr:`` sections."""
        head = f"exit code {self.exit_code}" + (f" (killed by {self.signal})" if self.signal else "")
        c = self.containment
        if self.timed_out:
            head = f"timed out after {self.timeout:g} s; {_stop_words(c, 'killed')}. Output:"
        lines = [head]
        if self.stopped and not self.timed_out:
            names = f": {c.stopped_names()}" if c is not None and c.stopped else ""
            verb = "was" if self.stopped == 1 else "were"
            lines.append(f"note: {containment.processes(self.stopped, 'background')} still running at the end {verb} "
                         f"stopped{names}")
        if c is not None and not c.complete and not self.timed_out:
            lines.append(f"warning: {c.survivors_text()}")
        # The fallback's caveat goes with a claim (killed, stopped); a plain exit claims nothing about the rest.
        claims = self.timed_out or self.stopped > 0
        lines += [f"note: {n}" for n in c.notes if claims or n != containment.FALLBACK_NOTE] if c is not None else []
        for name, text in (("stdout", self.stdout), ("stderr", self.stderr)):
            if text:
                lines += [f"{name}:", text[:-1] if text.endswith("\n") else text]
        if not (self.stdout or self.stderr):
            lines.append("(no output)")
        if self.sandbox_note:
            lines.append(f"note: {self.sandbox_note}")
        return "\n".join(lines)


def _stop_words(c: Containment | None, verb: str) -> str:
    """What a stop did, in words that claim no more than was done."""
    if c is not None and not c.complete:
        return f"{c.survivors_text()}; the rest were {verb}"
    if c is not None and c.mechanism != "subreaper":
        return f"the command and every process found were {verb}"
    return f"the command and all it started were {verb}"


class CommandCancelled(asyncio.CancelledError):
    """The run was cancelled and stopped; ``result_message`` says what the stop did (the loop makes it the
    cancelled call's result)."""

    def __init__(self, containment: Containment) -> None:
        self.containment = containment
        notes = "".join(f" ({n})" for n in containment.notes)
        what = _stop_words(containment, "stopped")
        self.result_message = f"Interrupted by the user before it finished; {what}.{notes}"
        super().__init__(self.result_message)


_SUPERVISOR = Path(__file__).with_name("supervisor.py")
_STOP_WAIT = KILL_GRACE + 4.0  # the supervisor's grace, its SIGKILL rounds and a loaded machine's delays
_live: set[Contained] = set()
_spare: list[_Supervisor] = []  # at most one warm supervisor, waiting for a command (not bound to a loop)
_spare_lock = threading.Lock()


def supervised() -> bool:
    """Whether commands run under the per-run subreaper supervisor here (Linux) or the fallback."""
    return sys.platform.startswith("linux") and bool(sys.executable) and _SUPERVISOR.is_file()


@dataclass
class _Supervisor:
    popen: subprocess.Popen[bytes]
    control: int  # our end of the stop pipe: closing it stops the run
    report: int  # our end of the report pipe: it ends when the supervisor does

    @classmethod
    def spawn(cls, command: Sequence[str], cwd: Path | str, env: Mapping[str, str], stdin: int = subprocess.DEVNULL,
              ) -> _Supervisor:
        """Start a supervisor: with ``command`` it runs it at once; without, it is a warm spare. The command
        inherits its stdin (``subprocess.PIPE``: a pipe from us, as an MCP server needs), stdout and stderr."""
        control, report = os.pipe(), os.pipe()
        try:
            popen = subprocess.Popen(
                [sys.executable, "-I", "-S", str(_SUPERVISOR), str(control[0]), str(report[1]), str(KILL_GRACE),
                 *command],
                stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=dict(env),
                start_new_session=True, pass_fds=(control[0], report[1]),
            )
        except BaseException:
            os.close(control[1])
            os.close(report[0])
            raise
        finally:
            os.close(control[0])
            os.close(report[1])
        return cls(popen, control[1], report[0])

    def send(self, command: Sequence[str], cwd: Path, env: Mapping[str, str]) -> bool:
        """Hand a warm spare its command; False if it is gone."""
        fields = [os.fsencode(cwd), str(len(command)).encode(), *map(os.fsencode, command)]
        fields += [os.fsencode(k) + b"=" + os.fsencode(v) for k, v in env.items()]
        payload = b"\0".join(fields)
        data = str(len(payload)).encode() + b"\n" + payload
        try:
            while data:
                data = data[os.write(self.control, data) :]
        except OSError:
            self.discard()
            return False
        return True

    def discard(self) -> None:
        for fd in (self.control, self.report):
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=2)
        for pipe in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if pipe is not None:
                pipe.close()


def _take_spare() -> _Supervisor | None:
    with _spare_lock:
        return _spare.pop() if _spare else None


def _refill_spare() -> None:
    """Start the next command's supervisor now: Python's start-up then costs that command nothing."""
    try:
        fresh = _Supervisor.spawn((), "/", {})
    except OSError as exc:
        log.debug("cannot start a spare supervisor: %s", exc)
        return
    with _spare_lock:
        _spare.append(fresh)
        extra = _spare[1:]
        del _spare[1:]
    for s in extra:
        s.discard()


def prewarm() -> None:
    """Start the next command's supervisor in the background if none waits (call it when a command is
    likely soon, e.g. as a turn starts: the model's answer takes longer than Python's start-up)."""
    if supervised() and not _spare:
        asyncio.get_running_loop().run_in_executor(None, _refill_spare)


@atexit.register
def _discard_spare() -> None:
    while (s := _take_spare()) is not None:
        s.discard()


async def _reader(pipe: Any) -> tuple[asyncio.StreamReader, asyncio.BaseTransport]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(loop=loop)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), pipe)
    return reader, transport


async def _writer(pipe: Any) -> asyncio.StreamWriter:
    """A writer on ``pipe``; closing the writer closes its transport, so none is kept beside it."""
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, pipe)
    return asyncio.StreamWriter(transport, protocol, None, loop)


class Contained:
    """One command and everything it starts, as a unit that can be stopped (see the module docstring).

    Read ``stdout``/``stderr`` (and write ``stdin`` when it was started with one); ``await wait()`` for it to
    end by itself, or ``await stop()`` to end it now: either stops whatever is left and returns the
    :class:`Containment` (also kept in ``result``). Both are idempotent and finish even if the caller is
    cancelled meanwhile; ``close()`` releases the pipes once read. Built by :func:`start_contained`.
    """

    def __init__(
        self,
        *,
        marker: str,
        stdout: asyncio.StreamReader,
        stderr: asyncio.StreamReader,
        proc: asyncio.subprocess.Process | None = None,
        supervisor: _Supervisor | None = None,
        transports: Sequence[asyncio.BaseTransport] = (),
        stdin: asyncio.StreamWriter | None = None,
    ) -> None:
        self.stdout, self.stderr, self.stdin, self.marker = stdout, stderr, stdin, marker
        self._proc, self._sup, self._transports = proc, supervisor, list(transports)
        self.pid: int = supervisor.popen.pid if supervisor is not None else proc.pid  # type: ignore[union-attr]
        """The process swebash-ai started: the supervisor, or the command itself under the fallback."""
        # The fallback's sweep; under a supervisor only needed if the command kills it (built then: the
        # psutil scans it takes cost every command a millisecond or two)
        self._tree = containment.Tree(self.pid, marker) if supervisor is None else None
        loop = asyncio.get_running_loop()
        self._exited: asyncio.Future[None] = loop.create_future()
        self._data = bytearray()
        self._tracker: asyncio.Task[None] | None = None
        if supervisor is not None:  # the report pipe ends when the supervisor does (only it holds the write end)
            os.set_blocking(supervisor.report, False)
            loop.add_reader(supervisor.report, self._read_report)
        else:
            self._tracker = asyncio.create_task(self._track())
        self._ending: asyncio.Task[Containment] | None = None
        self.result: Containment | None = None
        _live.add(self)

    @property
    def running(self) -> bool:
        return self.result is None and not self._exited.done()

    @property
    def returncode(self) -> int | None:
        """The command's exit code (negative: killed by that signal), once known."""
        if self._proc is not None:
            return self._proc.returncode
        status = None if self.result is None else self.result.exit_status
        return None if status is None else os.waitstatus_to_exitcode(status)

    async def exited(self) -> None:
        """Return when the command ended (under the supervisor: when the supervisor did).

        Not ``Process.wait()``: asyncio also waits for the output pipes to close, which a background
        process holding them would delay."""
        await asyncio.shield(self._exited)

    async def wait(self) -> Containment:
        """Wait for the command to end by itself, then stop what it left running."""
        await self.exited()
        return await self._end()

    async def stop(self) -> Containment:
        """Stop the command and everything it started now."""
        return await self._end()

    def close(self) -> None:
        """Release the pipes (what is unread is lost)."""
        if self.stdin is not None:
            self.stdin.close()
        for t in self._transports:
            t.close()

    async def _end(self) -> Containment:
        if self._ending is None:
            self._ending = asyncio.create_task(self._finish())
        return await asyncio.shield(self._ending)

    def _read_report(self) -> None:
        assert self._sup is not None
        try:
            chunk = os.read(self._sup.report, 65_536)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        self._data += chunk
        if not chunk:
            asyncio.get_running_loop().remove_reader(self._sup.report)
            if not self._exited.done():
                self._exited.set_result(None)

    async def _finish(self) -> Containment:
        try:
            if self._tracker is not None:
                self._tracker.cancel()
            if self._sup is None:
                assert self._tree is not None
                result = await asyncio.to_thread(self._tree.kill, KILL_GRACE)
            else:
                result = await self._finish_supervised(self._sup)
        finally:
            _live.discard(self)
            if self._sup is not None:  # after the run, not during it: the spare's start-up competes for the CPU
                asyncio.get_running_loop().run_in_executor(None, _refill_spare)
        self.result = result
        if not result.complete:
            log.warning("%s", result.survivors_text())
        return result

    async def _finish_supervised(self, sup: _Supervisor) -> Containment:
        with contextlib.suppress(OSError):
            os.close(sup.control)  # the supervisor's signal to stop (a no-op once the command ended)
        try:
            await asyncio.wait_for(self.exited(), _STOP_WAIT)
        except TimeoutError:
            log.warning("the supervisor (pid %s) did not finish in %.1f s; killing it", self.pid, _STOP_WAIT)
            sup.popen.kill()
            await self.exited()
        os.close(sup.report)
        await asyncio.to_thread(sup.popen.wait)
        report, done = containment.parse_report(bytes(self._data))
        if done and report.mechanism == "subreaper":
            return report
        # The supervisor was killed (by the command, `kill -9 $PPID`) or could not be a subreaper: sweep the
        # way the fallback does; orphans it left re-parented to us, as we are a subreaper too.
        swept = await asyncio.to_thread(containment.Tree(self.pid, self.marker).kill, KILL_GRACE)
        notes = swept.notes if done else (
            "the command killed its supervisor: processes were then looked for by process group and marker "
            "variable only, and one that left both may still be running",
        )
        stopped = report.stopped + swept.stopped
        return Containment(
            "fallback", stopped, report.stopped_count + swept.stopped_count, report.survivors + swept.survivors,
            report.exit_status, notes,
        )

    async def _track(self) -> None:
        """The fallback: remember descendants while the command runs, and notice when it ends."""
        assert self._proc is not None
        next_snapshot = time.monotonic() + _TRACK_FIRST
        while self._proc.returncode is None:
            if time.monotonic() >= next_snapshot and self._tree is not None:
                await asyncio.to_thread(self._tree.snapshot)
                next_snapshot = time.monotonic() + _TRACK_EVERY
            await asyncio.sleep(_EXIT_POLL)
        if not self._exited.done():
            self._exited.set_result(None)


async def start_contained(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], stdin: bool = False,
                          ) -> Contained:
    """Start ``argv`` (stdin from /dev/null, or a pipe with ``stdin``; stdout and stderr piped) under containment.

    ``env`` should carry :data:`MARKER_VAR` (the fallback's way to find descendants). On Linux the command
    runs under a per-run supervisor (``tools/supervisor.py``), warm when one was started ahead of it;
    elsewhere directly, in its own session.

    Raises:
        ToolError: it could not be started.
    """
    become_subreaper()  # the backstop for a supervisor the command kills, and the fallback's mechanism
    marker = env.get(MARKER_VAR, "")
    if not supervised():
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, cwd=cwd, env=dict(env), start_new_session=True,
            )
        except OSError as exc:
            raise ToolError(f"Cannot start the command: {exc}") from exc
        assert proc.stdout is not None and proc.stderr is not None
        return Contained(marker=marker, stdout=proc.stdout, stderr=proc.stderr, proc=proc, stdin=proc.stdin)
    sup = None if stdin else _take_spare()  # a spare's stdin is /dev/null
    if sup is None or not sup.send(argv, cwd, env):
        try:
            sup = _Supervisor.spawn(argv, cwd, env, subprocess.PIPE if stdin else subprocess.DEVNULL)
        except OSError as exc:
            raise ToolError(f"Cannot start the command: {exc}") from exc
    try:
        out, out_t = await _reader(sup.popen.stdout)
        err, err_t = await _reader(sup.popen.stderr)
        writer = await _writer(sup.popen.stdin) if stdin else None
    except BaseException:
        sup.discard()  # closing its control pipe stops the command it already started
        raise
    return Contained(marker=marker, stdout=out, stderr=err, supervisor=sup, transports=(out_t, err_t), stdin=writer)


async def stop_all() -> list[Containment]:
    """Stop every contained command still running (the session is ending)."""
    return list(await asyncio.gather(*(c.stop() for c in list(_live))))


async def _pump(reader: asyncio.StreamReader, cap: Capture, live: Live | None, name: str) -> None:
    while data := await reader.read(_READ_SIZE):
        cap.add(data)
        if live is not None:
            live.feed(name, data)


async def run_process(
    command: str,
    *,
    cwd: Path | str,
    timeout: float,  # noqa: ASYNC109 - the deadline covers the kill, not just a wait
    max_output: int = 100_000,
    on_output: Callable[[str], None] | None = None,
    sandbox: SandboxPolicy | None = None,
    sandbox_backend: str = "auto",
    environ: Mapping[str, str] | None = None,
    keep_env: Iterable[str] = (),
) -> ProcessResult:
    """Run ``command`` with bash and return its (bounded, cleaned) output; see the module docstring.

    Args:
        command: The bash command line.
        cwd: Directory to run in (must exist).
        timeout: Seconds before the whole process tree is killed.
        max_output: Bytes of output kept in the result (stdout and stderr together; head and tail).
        on_output: Receives live output (cleaned text), at most ~20 calls a second.
        sandbox: Run it confined by this policy (``swebash_ai/sandbox``), with ``sandbox_backend``; the
            supervisor, the timeout and the scrubbed environment apply as without. A failed command whose
            stderr shows a refusal gets a note naming the sandbox (``sandbox_note``).
        environ: The environment to scrub and pass on (default: ``os.environ``).
        keep_env: Secret-looking variables of ``environ`` to pass on all the same.

    Raises:
        ToolError: it cannot be started (no such directory, bash missing, no sandbox works here).
        CommandCancelled: (an ``asyncio.CancelledError``) re-raised once the whole tree is stopped.
    """
    workdir = Path(cwd)
    argv = build_argv(command, cwd=workdir, sandbox=sandbox, backend=sandbox_backend)
    env = child_environment(os.environ if environ is None else environ, keep_env, sandbox)
    env[MARKER_VAR] = uuid.uuid4().hex
    start = time.monotonic()
    job = await start_contained(argv, cwd=workdir, env=env)
    out, err = Capture(max_output), Capture(max_output)
    live = Live(on_output, asyncio.get_running_loop()) if on_output is not None else None
    readers = [
        asyncio.create_task(_pump(job.stdout, out, live, "out")),
        asyncio.create_task(_pump(job.stderr, err, live, "err")),
    ]
    ended = asyncio.create_task(job.exited())
    try:
        done, _ = await asyncio.wait({ended}, timeout=timeout)
        timed_out = not done
        report = await (job.stop() if timed_out else job.wait())
        await asyncio.wait(readers, timeout=_DRAIN_TIMEOUT)
    except asyncio.CancelledError:
        try:
            report = await job.stop()
        finally:
            if live is not None:
                live.flush(final=True)  # and no timer left behind
        raise CommandCancelled(report) from None
    finally:  # a pipe held open by something we could not kill must not hang us
        for task in (*readers, ended):
            task.cancel()
        job.close()
    if live is not None:
        live.flush(final=True)
    rc, sig_name = job.returncode, None
    if rc is not None and rc < 0:
        sig_name = signal.Signals(-rc).name if -rc in signal.valid_signals() else f"signal {-rc}"
        rc = 128 - rc
    out_limit, err_limit = budget(out.seen, err.seen, max_output)
    out_text, out_cut = out.text(out_limit)
    err_text, err_cut = err.text(err_limit)
    note = None
    if sandbox is not None and not timed_out:
        from swebash_ai.sandbox.confine import blocked_note
        from swebash_ai.sandbox.detect import choose

        note = blocked_note(err_text + out_text[-2000:], choose(sandbox_backend).backend or "?", rc, str(cwd))
    return ProcessResult(
        exit_code=rc,
        signal=sig_name,
        stdout=out_text,
        stderr=err_text,
        timed_out=timed_out,
        timeout=timeout,
        truncated=bool(out_cut or err_cut),
        stdout_bytes=out.seen,
        stderr_bytes=err.seen,
        duration=time.monotonic() - start,
        stopped=report.stopped_count if not timed_out else 0,
        containment=report,
        sandbox_note=note,
    )


def run_program(argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, timeout: float,
                ok_codes: tuple[int, ...] = (0,), umask: int = -1, data: bytes | None = None) -> bytes:
    """Run one of swebash-ai's own helper programs (fixed arguments, not a user's command) and return its
    stdout. Its own session, stdin from /dev/null (or ``data``), ``env`` as given (the caller builds it whole);
    at the timeout the whole group is killed. ``ok_codes``: the exit codes that are not failures (``grep``-like
    programs exit 1 for "nothing found"). ``umask``: the child's (-1: ours), for private files.

    Raises:
        ToolError: it could not start, failed (its stderr is in the message) or timed out.
    """


    try:
        stdin = subprocess.DEVNULL if data is None else subprocess.PIPE
        proc = subprocess.Popen(argv, cwd=cwd, env=dict(env), stdin=stdin, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True, umask=umask)
    except OSError as exc:
        raise ToolError(f"Cannot start {argv[0]}: {exc}") from exc
    try:
        out, err = proc.communicate(data, timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise ToolError(f"{Path(argv[0]).name} took longer than {timeout:g} s") from None
    if proc.returncode not in ok_codes:
        detail = err.decode("utf-8", "replace").strip().splitlines()
        raise ToolError(f"{Path(argv[0]).name} {argv[1] if len(argv) > 1 else ''} failed: "
                        f"{detail[-1] if detail else f'exit {proc.returncode}'}")
    return out
