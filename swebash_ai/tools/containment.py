"""Containment: finding and stopping every process a command started, and saying truly what was stopped.

Contract:
    :class:`Containment` is what a stop found: the processes it stopped, those it could not stop
    (``survivors``, with pids and command lines), and which mechanism held. A result built from it never
    claims more than was done: ``survivors`` non-empty means "N processes could not be stopped".

Which mechanism holds where (docs/safety.md, "Processes"):
    * Linux: the per-run supervisor (``tools/supervisor.py``) is a child subreaper, so every descendant of
      the command stays its descendant whatever it does to its session, group or environment; it stops
      them all and reports. This module parses that report (:func:`parse_report`).
    * Everywhere else, and as the backstop when the supervisor itself was killed by the command:
      :class:`Tree`, which knows descendants three ways, each with holes alone: psutil snapshots while
      the command runs, a per-run marker variable every descendant inherits, and the process group;
      on Linux swebash-ai is itself a child subreaper, so orphans of a killed supervisor re-parent to it.
      A process that leaves the group, clears its environment and is orphaned between two snapshots
      escapes this fallback (macOS); results say which mechanism held.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "FALLBACK_NOTE", "KILL_GRACE", "MARKER_VAR", "Containment", "ProcessInfo", "Tree",
    "become_subreaper", "parse_report", "processes",
]

log = logging.getLogger(__name__)

KILL_GRACE = 0.5  # seconds between SIGTERM and SIGKILL
MARKER_VAR = "SWEBASH_EXEC_ID"  # a per-run id every descendant inherits (the fallback's second way)
_NAMED = 5  # processes named in a sentence; the count says the rest
FALLBACK_NOTE = (
    "processes were looked for by process group and marker variable only (no subreaper here): one that left "
    "both may still be running"
)


@dataclass(frozen=True)
class ProcessInfo:
    """A process as a result names it."""

    pid: int
    cmdline: str

    def __str__(self) -> str:
        return f"pid {self.pid} ({self.cmdline})"


@dataclass(frozen=True)
class Containment:
    """What stopping a run did. ``stopped`` lists (up to 50 of) the ``stopped_count`` processes other than the
    command itself that were running and were stopped; ``survivors`` are still running after every kill."""

    mechanism: Literal["subreaper", "fallback"]
    stopped: tuple[ProcessInfo, ...] = ()
    stopped_count: int = 0
    survivors: tuple[ProcessInfo, ...] = ()
    exit_status: int | None = None  # the command's wait status, when the supervisor saw it end
    notes: tuple[str, ...] = field(default=())

    @property
    def complete(self) -> bool:
        """Nothing is known to be left running."""
        return not self.survivors

    def stopped_names(self) -> str:
        """``"pid 12 (sleep 58), pid 13 (sleep 59)"``: the first few stopped processes."""
        return _names(self.stopped, self.stopped_count)

    def survivors_text(self) -> str:
        """``"2 processes could not be stopped: pid 12 (sleep 62), ..."`` ("" when there are none)."""
        if not self.survivors:
            return ""
        n = len(self.survivors)
        return f"{processes(n)} could not be stopped: {_names(self.survivors, n)}"


def processes(n: int, kind: str = "") -> str:
    """``"1 background process"``, ``"2 background processes"``: a count in words that agree with it."""
    return f"{n} {kind + ' ' if kind else ''}process{'' if n == 1 else 'es'}"


def _names(procs: tuple[ProcessInfo, ...], count: int) -> str:
    return ", ".join(str(p) for p in procs[:_NAMED]) + (", …" if count > _NAMED else "")


def parse_report(data: bytes, main_pid: int | None = None) -> tuple[Containment, bool]:
    """The supervisor's report (see ``tools/supervisor.py``) as a :class:`Containment`, and whether it was
    complete (a missing ``D`` line means the supervisor was killed before it could finish)."""
    stopped: list[ProcessInfo] = []
    survivors: list[ProcessInfo] = []
    count, status, done, subreaper = 0, None, False, True
    for line in data.decode("utf-8", "replace").splitlines():
        kind, _, rest = line.partition(" ")
        try:
            if kind in ("S", "L"):
                pid, _, cmdline = rest.partition(" ")
                (stopped if kind == "S" else survivors).append(ProcessInfo(int(pid), cmdline))
            elif kind == "N":
                count = int(rest)
            elif kind == "X":
                status = int(rest)
            elif kind == "F":
                subreaper = False
            elif kind == "D":
                done = True
        except ValueError:
            log.warning("unreadable supervisor report line: %r", line)
    stopped = [p for p in stopped if p.pid != main_pid]
    mechanism: Literal["subreaper", "fallback"] = "subreaper" if subreaper else "fallback"
    return Containment(mechanism, tuple(stopped), max(count, len(stopped)), tuple(survivors), status), done


_subreaper_lock = threading.Lock()
_subreaper: bool | None = None  # None: not tried yet


def become_subreaper() -> bool:
    """Make this process a child subreaper (Linux, once, best effort): orphans re-parent to us, not init."""
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
    import psutil  # not at import: 12 ms of CPU that a one-shot answer without a command never needs

    with contextlib.suppress(psutil.Error):
        return bool(p.is_running()) and p.status() != psutil.STATUS_ZOMBIE
    return False


def _info(p: Any) -> ProcessInfo:
    import psutil

    try:
        cmdline = " ".join(p.cmdline()) or p.name()
    except psutil.Error:
        cmdline = "?"
    return ProcessInfo(p.pid, cmdline[:200])


class Tree:
    """Every process a command started, as far as the fallback can know (see the module docstring).

    Only a direct child of this process is accepted as the root, and pid 0/1, this process, its ancestors
    and its process group are never signalled, whatever the scans find.
    """

    def __init__(self, pid: int, marker: str) -> None:
        import psutil

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
        import psutil

        with contextlib.suppress(psutil.Error, AttributeError):
            for p in self.main.children(recursive=True):
                if p.pid not in self.spared:
                    self.known.setdefault(p.pid, p)

    def collect(self) -> dict[int, Any]:
        """Known processes, their current descendants and the processes carrying our marker (one scan).

        As a subreaper, every orphan of the tree is our child, so only our children's markers are read.
        The scan is a snapshot: a process may end between it and the look at its status, and its children,
        which the snapshot shows under it, re-parent to us meanwhile. So the descent goes through every
        process of the tree that is still itself (running, a zombie, or ended since the snapshot), never
        only through those still running.
        """
        import psutil

        me, everyone = os.getpid(), not _subreaper
        # Identity checked before the snapshot: a known pid that ended earlier may be someone else's by now.
        found: dict[int, Any] = {pid: p for pid, p in self.known.items() if p.is_running()}
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
        todo = list(found)
        while todo:
            for c in children.get(todo.pop(), []):
                if c.pid not in found and c.pid not in self.spared:
                    found[c.pid] = c
                    todo.append(c.pid)
        self.known.update((pid, p) for pid, p in found.items() if pid != self.pid)
        return found

    def _signal(self, procs: Iterable[Any], sig: signal.Signals) -> None:
        import psutil

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

    def settled(self) -> list[Any]:
        """What is alive, where "nothing" is believed only from a scan taken after every process of the tree
        was seen ended: one that forks and exits between a snapshot and the look at its status leaves an
        orphan that snapshot missed (it re-parents to us with the marker: the next scan finds it)."""
        return self.alive() or self.alive()

    def kill(self, grace: float = KILL_GRACE) -> Containment:
        """TERM, grace, KILL until nothing is left; reap re-parented orphans; say what was stopped."""
        alive = self.settled()
        seen = {p.pid: _info(p) for p in alive}
        if alive:
            self._signal(alive, signal.SIGTERM)
            deadline = time.monotonic() + grace
            while alive and time.monotonic() < deadline:
                time.sleep(0.01)
                alive = [p for p in alive if _running(p)]
            for _ in range(100):  # a process may fork while we sweep; bounded anyway
                if not (alive := self.settled()):
                    break
                seen.update((p.pid, _info(p)) for p in alive if p.pid not in seen)
                self._signal(alive, signal.SIGKILL)
                time.sleep(0.005)
            alive = self.alive()
        self._reap()
        left = tuple(seen.get(p.pid) or _info(p) for p in alive)
        stopped = tuple(i for pid, i in seen.items() if pid != self.pid and pid not in {p.pid for p in left})
        return Containment("fallback", stopped, len(stopped), left, notes=(FALLBACK_NOTE,))

    def _reap(self, timeout: float = 1.0) -> None:
        """Reap zombies that re-parented to us (the main process is asyncio's to reap)."""
        import psutil

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
