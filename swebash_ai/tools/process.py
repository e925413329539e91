"""Running a shell command as a process tree: :func:`run_process`, the one place that starts processes.

Contract:
    The only place in the package that starts processes (the exec tool, ``tools/exec.py``, calls
    :func:`run_process`; the undo snapshots, ``tools/snapshots.py``, call :func:`run_program` for git):
    ``bash --noprofile --norc -c``, stdin from ``/dev/null``, its own session (no controlling tty:
    ``sudo``/``ssh`` cannot prompt), a scrubbed
    environment (no secret-looking variables, no ``BASH_ENV``/``ENV``/exported functions, pagers and
    colours off, hardened git config), optionally under bubblewrap (never a silent fallback). When
    :func:`run_process` returns or raises, nothing the command started is running: after a timeout, a
    cancellation (Ctrl-C cancels the tool's task: kill, then re-raise) or a normal exit (left-over
    background processes are stopped and counted). Output is read concurrently, streamed to ``on_output``
    at most ~20 times a second, kept bounded (head and a tail ring), stripped of escape sequences and
    decoded as UTF-8 with replacement.

Why this kill strategy:
    Killing the child leaves grandchildren running; killing its process group misses a grandchild that
    called ``setsid``. So: SIGTERM to the group and every known descendant, a short grace, SIGKILL, sweeps
    until nothing is left. Descendants are known three ways, each with holes alone: psutil snapshots while
    it runs; a per-run marker variable every descendant inherits; and the agent as child subreaper
    (``PR_SET_CHILD_SUBREAPER``), so orphans re-parent to us, not to init: they stay findable and their
    zombies are ours to reap. Killing runs in a worker thread, so a second cancellation cannot stop it.
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
from typing import Any, Literal

import psutil

from swebash_ai.errors import ToolError
from swebash_ai.safety.redact import looks_secret_env

__all__ = [
    "BWRAP_MISSING",
    "GIT_HARDENING",
    "KILL_GRACE",
    "MARKER_VAR",
    "ProcessResult",
    "build_argv",
    "child_environment",
    "clean_output",
    "run_process",
    "run_program",
]

log = logging.getLogger(__name__)

KILL_GRACE = 0.5  # seconds between SIGTERM and SIGKILL
MARKER_VAR = "SWEBASH_EXEC_ID"  # a per-run id every descendant inherits (see the module docstring)

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
    # git diff refreshes stale stat data in .git/index even with GIT_OPTIONAL_LOCKS=0 (found by the sandbox
    # harness, git 2.39): a reader must not write.
    ("diff.autoRefreshIndex", "false"),
    ("protocol.ext.allow", "never"),
    # A bare repository inside the workspace (vendor/lib.git of a cloned project) brings its own config, which
    # git would read on `cd vendor/lib.git && git log`; only an explicit --git-dir may use one.
    ("safe.bareRepository", "explicit"),
)
# Variables that change what a command the policy judged will do: shell start-up hooks and options, git's
# external programs, a ripgrep config file (it can add --pre), CDPATH (``cd src`` could leave the workspace),
# GLOBIGNORE and IFS (they change how words and globs split).
_ENV_DROP = {
    "BASH_ENV", "ENV", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "GIT_CONFIG_PARAMETERS", "GIT_EXTERNAL_DIFF",
    "RIPGREP_CONFIG_PATH", "CDPATH", "GLOBIGNORE", "IFS", "AWKPATH", "LESSOPEN", "LESSCLOSE",
}  # fmt: skip
# GIT_EDITOR=true: `git commit` without -m fails at once instead of waiting for an editor that cannot start.
# GIT_OPTIONAL_LOCKS=0: `git status` (a reader that runs unasked) would otherwise refresh and rewrite the
# index; found by the sandbox harness (tests/safety/test_sandbox_harness.py).
_ENV_SET: dict[str, str] = {
    "GIT_OPTIONAL_LOCKS": "0",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "MANPAGER": "cat",
    "SYSTEMD_PAGER": "",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",
    "SSH_ASKPASS_REQUIRE": "never",
    "TERM": "dumb",
    "NO_COLOR": "1",
    "PYTHONUNBUFFERED": "1",
}

# CSI, OSC (BEL or ST terminated), DCS/SOS/PM/APC, other ESC sequences, then stray C0/C1 controls
# (a lone ESC included). Tab, newline and carriage return are handled apart.
_ESCAPES = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b\[[0-?]*[ -/]*[@-~]|\x1b[ -/]*[0-~]"
    r"|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
)
_COMPLETE_ESCAPE = re.compile(
    r"\x1b(?:\][^\x07\x1b]*(?:\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|\[[0-?]*[ -/]*[@-~]|[ -/]*[0-~])"
)
_CUT_CHAR = re.compile(rb"\A[\x80-\xbf]{1,3}")
_OVERWRITTEN = re.compile(r"[^\n]*\r(?=[^\n\r])")  # "10%\r20%" -> "20%" (what a terminal would show)


def clean_output(text: str) -> str:
    """Remove escape sequences and control characters; keep what a terminal would finally show per line."""
    text = _ESCAPES.sub("", text).replace("\r\n", "\n")
    return _OVERWRITTEN.sub("", text).replace("\r", "")


def child_environment(base: Mapping[str, str], keep: Iterable[str] = ()) -> dict[str, str]:
    """The environment a command gets: ``base`` minus secrets and shell start-up hooks, plus safe defaults.
    ``keep`` names secret-looking variables to pass on all the same (see ``APPROVED_ENV`` in the exec tool)."""
    dropped = ("BASH_FUNC_", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "GIT_CONFIG_COUNT")
    kept = frozenset(keep)
    env = {
        k: v
        for k, v in base.items()
        if k not in _ENV_DROP and not k.startswith(dropped) and (k in kept or not looks_secret_env(k))
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
    private_tmp = ["--tmpfs", "/tmp"]  # noqa: S108 - a fresh tmpfs, not a shared temporary file
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *private_tmp]
    for root in dict.fromkeys(os.path.realpath(r) for r in writable_roots):  # after /tmp: binds win
        argv += ["--bind", root, root]
    argv += ["--unshare-all", *(["--share-net"] if network else [])]
    return [*argv, "--die-with-parent", "--new-session", "--chdir", str(cwd), *shell]


_subreaper_lock = threading.Lock()
_subreaper: bool | None = None  # None: not tried yet


def _become_subreaper() -> bool:
    """Make this process a child subreaper (Linux, once, best effort): orphans re-parent to us."""
    global _subreaper
    with _subreaper_lock:
        if _subreaper is None:
            _subreaper = False
            if sys.platform.startswith("linux"):
                try:  # prctl(PR_SET_CHILD_SUBREAPER, 1)
                    _subreaper = ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0
                except (OSError, AttributeError) as exc:
                    log.debug("cannot become a child subreaper: %s", exc)
        return _subreaper


def _running(p: Any) -> bool:
    """Alive and not a zombie (and the same process: psutil checks the creation time)."""
    with contextlib.suppress(psutil.Error):
        return bool(p.is_running()) and p.status() != psutil.STATUS_ZOMBIE
    return False


class _Tree:
    """Every process a command started, as far as it can be known (see the module docstring).

    Only a direct child of this process is accepted as the root, and pid 0/1, this process, its ancestors
    and its process group are never signalled, whatever the scans find.
    """

    def __init__(self, pid: int, marker: str) -> None:
        self.pid, self.marker = pid, marker
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
        with contextlib.suppress(psutil.Error, AttributeError):
            for p in self.main.children(recursive=True):
                if p.pid not in self.spared:
                    self.known.setdefault(p.pid, p)

    def collect(self) -> dict[int, Any]:
        """Known processes, their current descendants and the processes carrying our marker (one scan).

        As a subreaper, every orphan of the tree is our child, so only our children's markers are read.
        """
        me, everyone = os.getpid(), not _subreaper
        found: dict[int, Any] = dict(self.known)
        if self.main is not None:
            found.setdefault(self.pid, self.main)
        children: dict[int, list[Any]] = {}
        for p in psutil.process_iter(["ppid"]):
            ppid = p.info["ppid"]
            children.setdefault(ppid, []).append(p)
            if p.pid not in found and p.pid not in self.spared and (everyone or ppid == me):
                with contextlib.suppress(psutil.Error):
                    if p.environ().get(MARKER_VAR) == self.marker:
                        found[p.pid] = p
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

    def alive(self) -> list[Any]:
        return [p for p in self.collect().values() if _running(p)]

    def kill(self, grace: float = KILL_GRACE) -> int:
        """TERM, grace, KILL until nothing is left; reap re-parented orphans. Returns how many ran."""
        alive = self.alive()
        count = len(alive)
        if alive:
            self._signal(alive, signal.SIGTERM)
            deadline = time.monotonic() + grace
            while alive and time.monotonic() < deadline:
                time.sleep(0.01)
                alive = [p for p in alive if _running(p)]
            for _ in range(100):  # a process may fork while we sweep; bounded anyway
                if not (alive := self.alive()):
                    break
                self._signal(alive, signal.SIGKILL)
                time.sleep(0.005)
        self._reap()
        return count

    def _reap(self, timeout: float = 1.0) -> None:
        """Reap zombies that re-parented to us (the main process is asyncio's to reap)."""
        deadline = time.monotonic() + timeout
        pending = [p for pid, p in self.known.items() if pid != self.pid]
        while pending and time.monotonic() < deadline:
            still = []
            for p in pending:
                try:
                    if p.is_running() and os.waitpid(p.pid, os.WNOHANG) == (0, 0):
                        still.append(p)
                except ChildProcessError:  # not (yet) ours: its parent reaps it, or it re-parents to us
                    with contextlib.suppress(psutil.Error):
                        if p.ppid() not in (0, 1):
                            still.append(p)
                except (psutil.Error, OSError):
                    pass
            if pending := still:
                time.sleep(0.005)


def _utf8_start(data: bytes) -> bytes:
    """``data`` without the continuation bytes (at most 3) of a character cut off at its start."""
    return _CUT_CHAR.sub(b"", data, count=1)


class _Capture:
    """Bounded bytes: the first half of the cap, and a ring holding the last half."""

    def __init__(self, cap: int) -> None:
        self.head_cap, self.tail_cap = cap // 2, cap - cap // 2
        self.head, self.tail, self.seen = bytearray(), bytearray(), 0

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
        tail_text = _utf8_start(tail).decode("utf-8", "replace")
        return f"{clean_output(head_text)}\n[… {cut} bytes cut …]\n{clean_output(tail_text)}", cut


def _budget(a: int, b: int, cap: int) -> tuple[int, int]:
    """Split ``cap`` bytes between two streams of ``a`` and ``b`` bytes: a small one keeps everything."""
    if a + b <= cap:
        return a, b
    a_share = a if a <= cap // 2 else max(cap // 2, cap - b)
    return a_share, cap - a_share


class _Live:
    """Forwards decoded, cleaned output to a callback, coalesced to at most one call per interval."""

    def __init__(self, sink: Callable[[str], None], loop: asyncio.AbstractEventLoop) -> None:
        self.sink, self.loop = sink, loop
        self.decoders = {n: codecs.getincrementaldecoder("utf-8")("replace") for n in ("out", "err")}
        self.pending: list[str] = []
        self.size, self.last, self.carry = 0, 0.0, ""  # carry: an escape sequence split across reads
        self.timer: asyncio.TimerHandle | None = None

    def feed(self, stream: str, data: bytes) -> None:
        if len(data) > _LIVE_MAX:  # only the latest part of a flood is worth showing
            data = _utf8_start(data[len(data) - _LIVE_MAX :])
            self.decoders[stream].reset()
        self.pending.append(text := self.decoders[stream].decode(data))
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
        self.last = time.monotonic()
        if text := clean_output(text):
            try:
                self.sink(text)
            except Exception:  # a broken display must not break the command
                log.exception("on_output callback failed")


@dataclass(frozen=True)
class ProcessResult:
    """What a command did. ``exit_code`` is 128+N when signal N (``signal``) ended it, ``None`` if unknown;
    ``stdout``/``stderr`` are cleaned text cut in the middle (``[… N bytes cut …]``) beyond the cap, while
    ``*_bytes`` count all that was written; ``stopped`` counts background processes stopped at the end."""

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
        return "timeout" if self.timed_out else "ok" if self.exit_code == 0 else "error"

    def render(self) -> str:
        """The result as text for a model: a status line, then the ``stdout:`` and ``stderr:`` sections."""
        head = f"exit code {self.exit_code}" + (f" (killed by {self.signal})" if self.signal else "")
        if self.timed_out:
            head = f"timed out after {self.timeout:g} s; the command and all it started were killed. Output:"
        lines = [head]
        if self.stopped and not self.timed_out:
            lines.append(f"note: {self.stopped} background process(es) still running at the end were stopped")
        for name, text in (("stdout", self.stdout), ("stderr", self.stderr)):
            if text:
                lines += [f"{name}:", text[:-1] if text.endswith("\n") else text]
        if not (self.stdout or self.stderr):
            lines.append("(no output)")
        return "\n".join(lines)


async def _pump(reader: asyncio.StreamReader, cap: _Capture, live: _Live | None, name: str) -> None:
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
    keep_env: Iterable[str] = (),
) -> ProcessResult:
    """Run ``command`` with bash and return its (bounded, cleaned) output; see the module docstring.

    Args:
        command: The bash command line.
        cwd: Directory to run in (must exist).
        timeout: Seconds before the whole process tree is killed.
        max_output: Bytes of output kept in the result (stdout and stderr together; head and tail).
        on_output: Receives live output (cleaned text), at most ~20 calls a second.
        sandbox: ``"bwrap"`` runs it under bubblewrap (network only with ``sandbox_network``), where only
            ``writable_roots`` are writable.
        environ: The environment to scrub and pass on (default: ``os.environ``).
        keep_env: Secret-looking variables of ``environ`` to pass on all the same.

    Raises:
        ToolError: it cannot be started (no such directory, bash or bwrap missing).
        asyncio.CancelledError: re-raised once the whole tree is killed.
    """
    workdir = Path(cwd)
    argv = build_argv(
        command, cwd=workdir, sandbox=sandbox, network=sandbox_network, writable_roots=[Path(r) for r in writable_roots]
    )
    _become_subreaper()
    env = child_environment(os.environ if environ is None else environ, keep_env)
    env[MARKER_VAR] = marker = uuid.uuid4().hex
    start = time.monotonic()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=workdir,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        raise ToolError(f"Cannot start the command: {exc}") from exc
    assert proc.stdout is not None and proc.stderr is not None
    tree = _Tree(proc.pid, marker)
    out, err = _Capture(max_output), _Capture(max_output)
    live = _Live(on_output, asyncio.get_running_loop()) if on_output is not None else None
    readers = [
        asyncio.create_task(_pump(proc.stdout, out, live, "out")),
        asyncio.create_task(_pump(proc.stderr, err, live, "err")),
    ]
    helpers = [asyncio.create_task(_track(tree)), asyncio.create_task(proc.wait())]
    try:
        done, _ = await asyncio.wait({helpers[1]}, timeout=timeout)
        helpers[0].cancel()
        if done:  # ended by itself: stop what it left running in the background (holding our pipes, maybe)
            await asyncio.wait(readers, timeout=0.05)
        timed_out, stopped = not done, await _stop(tree)
        await asyncio.wait({helpers[1]}, timeout=_DRAIN_TIMEOUT)
        await asyncio.wait(readers, timeout=_DRAIN_TIMEOUT)
    except asyncio.CancelledError:
        try:
            await _stop(tree)
        finally:
            if live is not None:
                live.flush(final=True)  # and no timer left behind
        raise
    finally:  # a pipe held open by something we could not kill must not hang us
        for task in (*readers, *helpers):
            task.cancel()
    if live is not None:
        live.flush(final=True)
    rc, sig_name = proc.returncode, None
    if rc is not None and rc < 0:
        sig_name = signal.Signals(-rc).name if -rc in signal.valid_signals() else f"signal {-rc}"
        rc = 128 - rc
    out_limit, err_limit = _budget(out.seen, err.seen, max_output)
    out_text, out_cut = out.text(out_limit)
    err_text, err_cut = err.text(err_limit)
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
        stopped=stopped if not timed_out else 0,
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
    import subprocess

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
