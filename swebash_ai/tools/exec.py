"""Running shell commands: ``run_command`` (the tool) and :func:`run_process` (the one process site).

Contract:
    This module is the only place in the package that starts processes. A command runs as
    ``bash --noprofile --norc -c COMMAND`` with ``stdin`` from ``/dev/null``, in its own session and process
    group (so it has no controlling terminal: ``sudo``/``ssh`` cannot prompt), in a scrubbed environment
    (no secret-looking variables, no ``BASH_ENV``/``ENV``/``PROMPT_COMMAND``/exported functions, pagers
    off, colours off, hardened git configuration). Optionally under bubblewrap (``exec_sandbox=bwrap``);
    when bwrap is requested but missing the command is refused, never run unsandboxed.

    When it returns or raises, nothing the command started is still running: at a timeout, at
    cancellation (Ctrl-C cancels the tool's task; the tree is killed, then ``CancelledError`` is re-raised)
    and also after a normal exit, where left-over background processes are stopped and counted in the
    result. Output (stdout and stderr, read concurrently) is streamed to ``on_output`` at most ~20 times a
    second and kept in a bounded buffer per stream (the first half of the cap and a ring of the last
    half), so ``yes`` cannot grow memory; escape sequences and control characters are removed before
    anything is shown or returned; bytes are decoded as UTF-8 with replacement.

Why this kill strategy:
    Killing the child is not enough (``subprocess.run(timeout=...)`` leaves grandchildren running), and
    killing its process group is not enough either: a grandchild that calls ``setsid`` leaves the group.
    So: SIGTERM to the group and to every known descendant, a short grace, SIGKILL, and repeated sweeps
    until nothing is left. Descendants are known three ways, because each one alone has holes:
    (1) ``psutil`` snapshots of the tree taken while the command runs (an escaped grandchild is caught
    while its parent is still alive); (2) a per-run marker variable in the environment that every
    descendant inherits (catches what was started between two snapshots); (3) the agent becomes a child
    subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``) so orphans re-parent to us rather than to init: their
    parent chain stays inside this process, and their zombies are ours to reap (we do, so no pid lingers).
    Killing runs in a worker thread, so a second cancellation (or the event loop closing) cannot stop it
    half way.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import ctypes
import logging
import os
import re
import shutil
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import psutil
from pydantic import Field

from swebash_ai.errors import ToolError
from swebash_ai.safety.redact import looks_secret_env
from swebash_ai.safety.verdict import Verdict
from swebash_ai.tools.registry import Tool, ToolContext, ToolResult, tool

__all__ = [
    "MAX_COMMAND_CHARS",
    "TOOLS",
    "ProcessResult",
    "build_argv",
    "child_environment",
    "clean_output",
    "run_command",
    "run_process",
]

log = logging.getLogger(__name__)

MAX_COMMAND_CHARS = 10_000
KILL_GRACE = 0.5
"""Seconds between SIGTERM and SIGKILL."""
MARKER_VAR = "SWEBASH_EXEC_ID"
"""Environment variable carrying a per-run id, inherited by every descendant (see the module docstring)."""

_READ_SIZE = 65_536
_LIVE_INTERVAL = 0.05  # at most ~20 on_output calls a second
_LIVE_MAX = 16_384  # characters of live output per call; a flood shows its latest part
_TRACK_FIRST, _TRACK_EVERY = 0.02, 0.1
_DRAIN_TIMEOUT = 2.0

# git settings that make reading commands safe in a hostile repository. Deliberately absent:
# ``diff.external=`` (an empty value makes git try to run "" and every ``git diff`` fails) and
# ``core.sshCommand`` (an empty value breaks ssh remotes, ``false`` breaks every approved push/fetch).
GIT_HARDENING: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.hooksPath", "/dev/null"),
    ("protocol.ext.allow", "never"),
)
_ENV_DROP = frozenset(
    {"BASH_ENV", "ENV", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "GIT_CONFIG_PARAMETERS", "GIT_EXTERNAL_DIFF"}
)
_ENV_SET: dict[str, str] = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "MANPAGER": "cat",
    "SYSTEMD_PAGER": "",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",  # `git commit` without -m fails at once instead of waiting for an editor
    "SSH_ASKPASS_REQUIRE": "never",
    "TERM": "dumb",
    "NO_COLOR": "1",
    "PYTHONUNBUFFERED": "1",  # live output from Python scripts
}

# CSI, OSC (BEL or ST terminated), DCS/SOS/PM/APC, other ESC sequences, then stray C0/C1 controls
# (a lone ESC included). Tab, newline and carriage return are handled apart.
_ESCAPES = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b[ -/]*[0-~]"
    r"|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
)
_COMPLETE_ESCAPE = re.compile(
    r"\x1b(?:\][^\x07\x1b]*(?:\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|\[[0-?]*[ -/]*[@-~]|[ -/]*[0-~])"
)
_OVERWRITTEN = re.compile(r"[^\n]*\r(?=[^\n\r])")  # "10%\r20%" -> "20%" (what a terminal would show)


def clean_output(text: str) -> str:
    """Remove escape sequences and control characters; keep what a terminal would finally show per line."""
    text = _ESCAPES.sub("", text).replace("\r\n", "\n")
    return _OVERWRITTEN.sub("", text).replace("\r", "")


# --- environment and argv -------------------------------------------------------------------------------


def child_environment(base: Mapping[str, str]) -> dict[str, str]:
    """The environment a command gets: ``base`` minus secrets and shell start-up hooks, plus safe defaults."""
    env = {
        k: v
        for k, v in base.items()
        if k not in _ENV_DROP
        and not k.startswith(("BASH_FUNC_", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "GIT_CONFIG_COUNT"))
        and not looks_secret_env(k)
    }
    env.update(_ENV_SET)
    env["GIT_CONFIG_COUNT"] = str(len(GIT_HARDENING))
    for n, (key, value) in enumerate(GIT_HARDENING):
        env[f"GIT_CONFIG_KEY_{n}"] = key
        env[f"GIT_CONFIG_VALUE_{n}"] = value
    return env


BWRAP_MISSING = (
    "The command was not run: SWEBASH_AI_EXEC_SANDBOX=bwrap but bubblewrap (`bwrap`) is not on PATH. "
    "Install it (Debian/Ubuntu: `apt-get install bubblewrap`; Fedora: `dnf install bubblewrap`; "
    "Arch: `pacman -S bubblewrap`) or set SWEBASH_AI_EXEC_SANDBOX=none to run commands unsandboxed."
)


def build_argv(
    command: str,
    *,
    cwd: Path,
    sandbox: Literal["none", "bwrap"] = "none",
    network: bool = False,
    writable_roots: Iterable[Path] = (),
) -> list[str]:
    """The argv that runs ``command``.

    Raises:
        ToolError: ``cwd`` is not a directory; bash, or bwrap when the sandbox is requested, is not on PATH.
    """
    if not os.path.isdir(cwd):
        raise ToolError(f"The working directory does not exist or is not a directory: {cwd}")
    bash = shutil.which("bash")
    if bash is None:
        raise ToolError("Cannot run commands: `bash` is not on PATH.")
    shell = [bash, "--noprofile", "--norc", "-c", command]
    if sandbox == "none":
        return shell
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise ToolError(BWRAP_MISSING, title="Sandbox unavailable")
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]  # noqa: S108 - a private tmpfs
    for root in dict.fromkeys(os.path.realpath(r) for r in writable_roots):  # after /tmp: binds win
        argv += ["--bind", root, root]
    argv.append("--unshare-all")
    if network:
        argv.append("--share-net")
    return [*argv, "--die-with-parent", "--new-session", "--chdir", str(cwd), *shell]


# --- the process tree -----------------------------------------------------------------------------------

_subreaper_lock = threading.Lock()
_subreaper_tried = False


def _become_subreaper() -> None:
    """Make this process a child subreaper (Linux, once, best effort): orphans re-parent to us."""
    global _subreaper_tried
    with _subreaper_lock:
        if _subreaper_tried or not sys.platform.startswith("linux"):
            return
        _subreaper_tried = True
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
                log.debug("prctl(PR_SET_CHILD_SUBREAPER) failed: errno %s", ctypes.get_errno())
        except (OSError, AttributeError) as exc:
            log.debug("cannot become a child subreaper: %s", exc)


def _running(p: Any) -> bool:
    """Alive and not a zombie (same process: psutil checks the creation time)."""
    try:
        return bool(p.is_running()) and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


class _Tree:
    """Every process a command started, as far as it can be known (see the module docstring).

    Only a direct child of this process is accepted as the root, and pid 0/1, this process, its
    ancestors and its process group are never signalled, whatever the scans find.
    """

    def __init__(self, pid: int, marker: str) -> None:
        self.pid = pid
        self.marker = marker
        self.known: dict[int, Any] = {}
        self.main: Any = None
        me = psutil.Process()
        self.spared = {0, 1, me.pid, *(a.pid for a in me.parents())}
        with contextlib.suppress(psutil.Error):
            main = psutil.Process(pid)
            if main.ppid() == me.pid and pid not in self.spared:
                self.main = main

    def snapshot(self) -> None:
        """Remember the main process's current descendants (called periodically while it runs)."""
        if self.main is None:
            return
        with contextlib.suppress(psutil.Error):
            for p in self.main.children(recursive=True):
                if p.pid not in self.spared:
                    self.known.setdefault(p.pid, p)

    def collect(self) -> dict[int, Any]:
        """Known processes, their current descendants and every process carrying our marker (one scan)."""
        found: dict[int, Any] = dict(self.known)
        if self.main is not None:
            found.setdefault(self.pid, self.main)
        children: dict[int, list[Any]] = {}
        for p in psutil.process_iter(["ppid", "environ"]):
            children.setdefault(p.info["ppid"], []).append(p)
            env = p.info["environ"]
            if p.pid not in self.spared and env and env.get(MARKER_VAR) == self.marker:
                found.setdefault(p.pid, p)
        todo = [pid for pid, p in found.items() if _running(p)]
        while todo:
            for c in children.get(todo.pop(), []):
                if c.pid not in found and c.pid not in self.spared:
                    found[c.pid] = c
                    todo.append(c.pid)
        self.known.update((pid, p) for pid, p in found.items() if pid != self.pid)
        return found

    def _signal(self, procs: Iterable[Any], sig: signal.Signals) -> None:
        group_alive = self.main is not None and self.main.is_running()
        for p in procs:
            try:
                p.send_signal(sig)
                group_alive = group_alive or os.getpgid(p.pid) == self.pid
            except (psutil.Error, OSError):
                pass
        # The group id cannot have been reused while a member or the leader exists.
        if group_alive and self.main is not None and self.pid != os.getpgrp():
            with contextlib.suppress(OSError):
                os.killpg(self.pid, sig)

    def kill(self, grace: float = KILL_GRACE) -> int:
        """TERM, grace, KILL until nothing is left; reap re-parented orphans. Returns how many were running."""
        alive = [p for p in self.collect().values() if _running(p)]
        count = len(alive)
        if alive:
            self._signal(alive, signal.SIGTERM)
            deadline = time.monotonic() + grace
            while alive and time.monotonic() < deadline:
                time.sleep(0.01)
                alive = [p for p in alive if _running(p)]
        for _ in range(100):  # a process may fork while we sweep; bounded anyway
            alive = [p for p in self.collect().values() if _running(p)]
            if not alive:
                break
            self._signal(alive, signal.SIGKILL)
            time.sleep(0.005)
        self._reap()
        return count

    def _reap(self, timeout: float = 1.0) -> None:
        """Reap zombies that re-parented to us; the main process is asyncio's to reap."""
        pending = [p for pid, p in self.known.items() if pid != self.pid]
        deadline = time.monotonic() + timeout
        while pending and time.monotonic() < deadline:
            still = []
            for p in pending:
                try:
                    if not p.is_running():
                        continue
                    if os.waitpid(p.pid, os.WNOHANG) == (0, 0):
                        still.append(p)
                except ChildProcessError:  # not (yet) ours: its parent reaps it, or it re-parents to us
                    if p.ppid() not in (0, 1):
                        still.append(p)
                except (psutil.Error, OSError):
                    continue
            pending = still
            if pending:
                time.sleep(0.005)


# --- output ---------------------------------------------------------------------------------------------


class _Capture:
    """Bounded bytes: the first half of the cap, and a ring holding the last half."""

    def __init__(self, cap: int) -> None:
        self.head_cap = cap // 2
        self.tail_cap = cap - self.head_cap
        self.head = bytearray()
        self.tail = bytearray()
        self.seen = 0

    def add(self, data: bytes) -> None:
        self.seen += len(data)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if len(data) >= self.tail_cap:
            self.tail = bytearray(data[len(data) - self.tail_cap :])
        elif data:
            self.tail += data
            if len(self.tail) > self.tail_cap:
                del self.tail[: len(self.tail) - self.tail_cap]

    def text(self, limit: int) -> tuple[str, int]:
        """The kept output cut to ``limit`` bytes (head and tail), decoded and cleaned; and bytes cut."""
        kept = len(self.head) + len(self.tail)
        if kept == self.seen:  # nothing dropped: head + tail is contiguous
            data = bytes(self.head + self.tail)
            if len(data) <= limit:
                return clean_output(data.decode("utf-8", "replace")), 0
            h = limit // 2
            head, tail = data[:h], data[len(data) - (limit - h) :]
        else:
            h = min(len(self.head), limit // 2)
            t = min(len(self.tail), limit - h)
            head, tail = bytes(self.head[:h]), bytes(self.tail[len(self.tail) - t :])
        cut = self.seen - len(head) - len(tail)
        head_text = codecs.getincrementaldecoder("utf-8")("replace").decode(head)  # holds back a split char
        tail_text = tail.lstrip(bytes(range(0x80, 0xC0))).decode("utf-8", "replace")
        return f"{clean_output(head_text)}\n[… {cut} bytes cut …]\n{clean_output(tail_text)}", cut


def _budget(a: int, b: int, cap: int) -> tuple[int, int]:
    """Split ``cap`` bytes between two streams of ``a`` and ``b`` bytes: a small one keeps everything."""
    if a + b <= cap:
        return a, b
    half = cap // 2
    if a <= half:
        return a, cap - a
    if b <= half:
        return cap - b, b
    return half, cap - half


class _Live:
    """Forwards decoded, cleaned output to a callback, coalesced to at most one call per interval."""

    def __init__(self, sink: Callable[[str], None], loop: asyncio.AbstractEventLoop) -> None:
        self.sink = sink
        self.loop = loop
        self.decoders = {n: codecs.getincrementaldecoder("utf-8")("replace") for n in ("out", "err")}
        self.pending: list[str] = []
        self.size = 0
        self.carry = ""  # an escape sequence split across reads
        self.last = 0.0
        self.timer: asyncio.TimerHandle | None = None

    def feed(self, stream: str, data: bytes) -> None:
        if len(data) > _LIVE_MAX:  # only the latest part of a flood is worth showing
            data = data[len(data) - _LIVE_MAX :].lstrip(bytes(range(0x80, 0xC0)))
            self.decoders[stream].reset()
        text = self.decoders[stream].decode(data)
        self.pending.append(text)
        self.size += len(text)
        if self.size > 2 * _LIVE_MAX:
            joined = "".join(self.pending)
            self.pending, self.size, self.carry = ["…" + joined[-_LIVE_MAX:]], _LIVE_MAX + 1, ""
        wait = self.last + _LIVE_INTERVAL - time.monotonic()
        if wait <= 0:
            self.flush()
        elif self.timer is None:
            self.timer = self.loop.call_later(wait, self.flush)

    def flush(self, final: bool = False) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        text = self.carry + "".join(self.pending)
        self.pending, self.size, self.carry = [], 0, ""
        if len(text) > _LIVE_MAX:
            text = "…" + text[len(text) - _LIVE_MAX :]
        esc = text.rfind("\x1b")
        if not final and esc >= 0 and len(text) - esc < 256 and not _COMPLETE_ESCAPE.match(text, esc):
            text, self.carry = text[:esc], text[esc:]
        text = clean_output(text)
        self.last = time.monotonic()
        if text:
            try:
                self.sink(text)
            except Exception:  # a broken display must not break the command
                log.exception("on_output callback failed")


# --- running --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProcessResult:
    """What a command did.

    Attributes:
        exit_code: The exit code; 128+N when killed by signal N; ``None`` if it could not be collected.
        signal: Name of the signal that ended it (``"SIGKILL"``), if any.
        stdout: Cleaned text, cut in the middle with a ``[… N bytes cut …]`` note beyond the cap.
        stderr: The same for stderr.
        timed_out: The timeout ended it.
        timeout: The timeout in seconds.
        truncated: Some output was cut.
        stdout_bytes: Bytes the command wrote to stdout (all of them, kept or not).
        stderr_bytes: The same for stderr.
        duration: Seconds from start to return.
        stopped: Processes still running after the command ended (background jobs) that were stopped.
    """

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

    @property
    def status(self) -> Literal["ok", "error", "timeout"]:
        if self.timed_out:
            return "timeout"
        return "ok" if self.exit_code == 0 else "error"

    def render(self) -> str:
        """The result as text for a model: a status line, then the ``stdout:`` and ``stderr:`` sections."""
        if self.timed_out:
            head = (f"timed out after {self.timeout:g} s; the command and every process it started were "
                    "stopped. Output until then:")
        else:
            head = f"exit code {self.exit_code}" + (f" (killed by {self.signal})" if self.signal else "")
        lines = [head]
        if self.stopped and not self.timed_out:
            lines.append(f"note: {self.stopped} background process(es) still running when the command "
                         "ended were stopped")
        for name, text in (("stdout", self.stdout), ("stderr", self.stderr)):
            if text:
                lines += [f"{name}:", text[:-1] if text.endswith("\n") else text]
        if not (self.stdout or self.stderr):
            lines.append("(no output)")
        return "\n".join(lines)


async def _pump(reader: asyncio.StreamReader | None, cap: _Capture, live: _Live | None, name: str) -> None:
    if reader is None:
        return
    while data := await reader.read(_READ_SIZE):
        cap.add(data)
        if live is not None:
            live.feed(name, data)


async def _track(tree: _Tree) -> None:
    await asyncio.sleep(_TRACK_FIRST)
    while True:
        await asyncio.to_thread(tree.snapshot)
        await asyncio.sleep(_TRACK_EVERY)


async def _stop(tree: _Tree) -> int:
    """Kill the tree in a worker thread; if we are cancelled meanwhile, the thread still finishes."""
    return await asyncio.shield(asyncio.get_running_loop().run_in_executor(None, tree.kill, KILL_GRACE))


async def run_process(
    command: str,
    *,
    cwd: Path | str,
    timeout: float,  # noqa: ASYNC109 - the deadline covers the kill, not just a wait
    max_output: int = 100_000,
    on_output: Callable[[str], None] | None = None,
    sandbox: Literal["none", "bwrap"] = "none",
    sandbox_network: bool = False,
    writable_roots: Sequence[Path | str] = (),
    environ: Mapping[str, str] | None = None,
) -> ProcessResult:
    """Run ``command`` with bash and return its (bounded, cleaned) output; see the module docstring.

    Args:
        command: The bash command line.
        cwd: Directory to run in (must exist).
        timeout: Seconds before the whole process tree is killed.
        max_output: Bytes of output kept in the result (stdout and stderr together; head and tail).
        on_output: Receives live output (cleaned text), at most ~20 calls a second.
        sandbox: ``"bwrap"`` runs the command under bubblewrap.
        sandbox_network: Let a sandboxed command use the network.
        writable_roots: Directories a sandboxed command may write (everything else is read-only).
        environ: The environment to scrub and pass on (default: ``os.environ``).

    Raises:
        ToolError: the command cannot be started (no such directory, bash or bwrap missing).
        asyncio.CancelledError: re-raised after the whole tree was killed.
    """
    workdir = Path(cwd)
    argv = build_argv(command, cwd=workdir, sandbox=sandbox, network=sandbox_network,
                      writable_roots=[Path(r) for r in writable_roots])
    _become_subreaper()
    marker = uuid.uuid4().hex
    env = child_environment(os.environ if environ is None else environ)
    env[MARKER_VAR] = marker
    loop = asyncio.get_running_loop()
    start = time.monotonic()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=workdir, env=env, start_new_session=True,
        )
    except OSError as exc:
        raise ToolError(f"Cannot start the command: {exc}") from exc
    tree = _Tree(proc.pid, marker)
    out, err = _Capture(max_output), _Capture(max_output)
    live = _Live(on_output, loop) if on_output is not None else None
    readers = [asyncio.create_task(_pump(proc.stdout, out, live, "out")),
               asyncio.create_task(_pump(proc.stderr, err, live, "err"))]
    helpers = [asyncio.create_task(_track(tree)), asyncio.create_task(proc.wait())]
    timed_out, stopped = False, 0
    try:
        done, _ = await asyncio.wait({helpers[1]}, timeout=timeout)
        helpers[0].cancel()
        if done:  # ended by itself: stop what it left running in the background (holding our pipes, maybe)
            await asyncio.wait(readers, timeout=0.05)
            stopped = await _stop(tree)
        else:
            timed_out = True
            await _stop(tree)
        await asyncio.wait({helpers[1]}, timeout=_DRAIN_TIMEOUT)
        await asyncio.wait(readers, timeout=_DRAIN_TIMEOUT)
    except asyncio.CancelledError:
        try:
            await _stop(tree)
        finally:
            for task in (*readers, *helpers):
                task.cancel()
        raise
    finally:
        helpers[0].cancel()
    for task in readers:  # a pipe held open by something we could not kill must not hang us
        task.cancel()
    if live is not None:
        live.flush(final=True)
    rc = proc.returncode
    sig_name: str | None = None
    if rc is not None and rc < 0:
        try:
            sig_name = signal.Signals(-rc).name
        except ValueError:
            sig_name = f"signal {-rc}"
        rc = 128 - rc
    out_limit, err_limit = _budget(out.seen, err.seen, max_output)
    out_text, out_cut = out.text(out_limit)
    err_text, err_cut = err.text(err_limit)
    return ProcessResult(
        exit_code=rc, signal=sig_name, stdout=out_text, stderr=err_text, timed_out=timed_out,
        timeout=timeout, truncated=bool(out_cut or err_cut), stdout_bytes=out.seen, stderr_bytes=err.seen,
        duration=time.monotonic() - start, stopped=stopped if not timed_out else 0,
    )


# --- the tool -------------------------------------------------------------------------------------------


def _resolve_cwd(ctx: ToolContext, cwd: str | None) -> Path:
    """The directory a call runs in: ``ctx.cwd`` or ``cwd`` relative to it (symlinks resolved)."""
    if cwd is None:
        return Path(ctx.cwd)
    if ctx.path_policy is not None:
        return Path(ctx.path_policy.resolve(cwd, str(ctx.cwd)))
    return Path(os.path.realpath(os.path.join(ctx.cwd, os.path.expanduser(cwd))))


def _cwd_verdict(ctx: ToolContext, cwd: str | None) -> Verdict:
    if cwd is None:
        return Verdict.allow(rule="exec.cwd")
    if ctx.path_policy is None:
        return Verdict.ask(f"runs in {cwd} (no path policy to check it)", rule="exec.cwd_unchecked")
    verdict: Verdict = ctx.path_policy.check(cwd, "list", str(ctx.cwd))
    return verdict


def _policy(ctx: ToolContext, args: Any) -> Verdict:
    where = _cwd_verdict(ctx, args.cwd)
    if ctx.command_policy is None:
        return Verdict.ask("no command policy is configured", rule="exec.no_policy").combine(where)
    try:
        cwd = str(_resolve_cwd(ctx, args.cwd))
    except ValueError:  # refused path syntax: the path verdict already denies
        return where
    verdict: Verdict = ctx.command_policy.assess(args.command, cwd)
    return verdict.combine(where)


def _describe(args: Any) -> str:
    text = " ".join(str(args.command).split())
    line = "$ " + (text if len(text) <= 120 else text[:119] + "…")
    return line + (f"  (in {args.cwd})" if args.cwd else "")


def _session_key(ctx: ToolContext, args: Any) -> str | None:
    if ctx.command_policy is None:
        return None
    key: str | None = ctx.command_policy.session_key(args.command)
    return key


def _writable_roots(ctx: ToolContext) -> list[Path]:
    roots = getattr(ctx.path_policy, "roots", None)
    if roots:
        return [Path(r) for r in roots]
    return [Path(r) for r in ctx.settings.workspace_roots] or [Path(ctx.cwd)]


@tool("exec", policy=_policy, describe=_describe, session_key=_session_key)
async def run_command(
    ctx: ToolContext,
    command: str,
    timeout: Annotated[int | None, Field(ge=1, le=300)] = None,  # noqa: ASYNC109 - a tool argument
    cwd: str | None = None,
) -> ToolResult:
    """Run a bash command and return its exit code, stdout and stderr.

    It runs without a terminal or input (nothing can prompt; pagers and colours are off), so use
    non-interactive flags (`git --no-pager`, `apt-get -y`). Long output is cut in the middle. At the timeout
    the command and everything it started are killed; background processes are stopped when it ends, so do
    not start servers or watchers expecting them to keep running.

    Args:
        command: The bash command line, e.g. `ls -la src` or `python -m pytest -q tests/test_x.py`.
        timeout: Seconds before the command is killed (default from the settings, at most 300).
        cwd: Directory to run in, relative to the current directory (default: the current directory).
    """
    if not command.strip():
        return ToolResult.error("The command is empty.")
    if len(command) > MAX_COMMAND_CHARS:
        return ToolResult.error(
            f"The command is {len(command)} characters long; the limit is {MAX_COMMAND_CHARS}. "
            "Write a script file and run it instead."
        )
    where = _cwd_verdict(ctx, cwd)
    if where.decision == "deny":
        return ToolResult.denied(f"cannot run in {cwd}: {'; '.join(where.reasons)}")
    try:
        workdir = _resolve_cwd(ctx, cwd)
    except ValueError as exc:
        return ToolResult.error(f"Bad working directory {cwd!r}: {exc}")
    settings = ctx.settings
    seconds = timeout or settings.exec_timeout
    try:
        res = await run_process(
            command, cwd=workdir, timeout=seconds, max_output=settings.exec_max_output,
            on_output=ctx.on_output, sandbox=settings.exec_sandbox,
            sandbox_network=settings.exec_sandbox_network, writable_roots=_writable_roots(ctx),
        )
    except ToolError as exc:
        return ToolResult.error(exc.message)
    return ToolResult(
        ok=res.status == "ok", content=res.render(), status=res.status, exit_code=res.exit_code,
        truncated=res.truncated,
        metadata={
            "cwd": str(workdir), "signal": res.signal, "timed_out": res.timed_out, "timeout": seconds,
            "stdout_bytes": res.stdout_bytes, "stderr_bytes": res.stderr_bytes,
            "stopped_background": res.stopped, "sandbox": settings.exec_sandbox,
        },
    )


TOOLS: list[Tool] = [run_command]
