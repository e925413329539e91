"""The session's language servers: started when a file of their language is touched, shared, and stopped.

Contract:
    :class:`LspService` belongs to one session (``ctx.services["lsp"]``), like its background processes and MCP
    servers. :meth:`LspService.check` sends a file's new text to the server of its language and root and waits
    for the diagnostics of that version (:class:`~swebash_ai.lsp.client.LspClient`); it returns a
    :class:`FileCheck` whose ``status`` always says what happened (``ok``, ``timeout``, ``crashed``,
    ``missing``: no server of the language is installed, ``failed``: it could not start or failed too often,
    ``none``: no server checks such files). It never raises for a server's fault.

Lifecycle:
    * one server per (server, root), started once: concurrent callers await the same start;
    * a server is started only for a file of its language, and only when its program is found
      (``servers.choose``); the process is started by the injected ``launch`` (the tools layer's: contained,
      in the sandbox where one works, with the scrubbed environment of every command);
    * a server that fails to start or crashes :data:`MAX_FAILURES` times is not started again this session
      (its checks say so): never a restart loop;
    * :meth:`LspService.aclose` (session end: exit, Ctrl-C, a crashed loop) stops every server and the whole
      process tree each started; a server unused for ``idle`` seconds is stopped by the idle reaper.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from swebash_ai.lsp.client import Diag, Launch, LspClient, Outcome
from swebash_ai.lsp.servers import ServerSpec, choose, language_of

log = logging.getLogger(__name__)

__all__ = ["MAX_FAILURES", "FileCheck", "LspService", "ServerRow"]

MAX_FAILURES = 3
"""Starts or crashes of one server after which it is not started again in this session."""

Status = Literal["ok", "timeout", "crashed", "missing", "failed", "none", "pending"]


@dataclass(frozen=True)
class FileCheck:
    """The diagnostics of one file after a change, and how they were obtained."""

    path: Path
    status: Status
    server: str = ""
    diags: tuple[Diag, ...] = ()
    new_elsewhere: tuple[Diag, ...] = ()
    """Errors in other files that were not there before this change (the change broke them)."""
    seconds: float = 0.0
    detail: str = ""
    limit: float = 0.0


@dataclass(frozen=True)
class ServerRow:
    """A running language server as ``/ps`` and ``doctor`` list it."""

    name: str
    root: str
    pid: int
    seconds: float
    busy: float
    documents: int
    where: str


@dataclass
class _Failures:
    count: int = 0
    last: str = ""


@dataclass
class _Started:
    client: LspClient
    spec: ServerSpec
    where: str = ""


@dataclass
class LspService:
    """The session's language servers (see the module docstring)."""

    servers: Sequence[ServerSpec]
    workspace: Path
    launch: Launch
    wait: float = 5.0
    settle: float = 0.15
    idle: float = 600.0
    start_timeout: float = 15.0
    path_env: str | None = None
    tables: Any = None
    """The ``[lsp.NAME]`` tables ``servers`` was made from (the caller's, to see when they change)."""
    where: str = ""
    """How the servers run (``sandbox (bwrap)``, ``not sandboxed: ...``), for ``/ps`` and ``doctor``."""
    _running: dict[tuple[str, Path], _Started] = field(default_factory=dict)
    _starting: dict[tuple[str, Path], asyncio.Task[_Started]] = field(default_factory=dict)
    _failures: dict[tuple[str, Path], _Failures] = field(default_factory=dict)
    _reaper: asyncio.Task[None] | None = None
    _closed: bool = False
    busy_seconds: float = 0.0
    """Seconds of checks spent waiting for servers, ended servers included (``stats``)."""
    started_count: int = 0
    pending: dict[Path, str] = field(default_factory=dict)
    """Files changed since the last :meth:`take_pending` (for reporting at the end of a turn)."""

    def language(self, path: Path) -> str | None:
        return language_of(path, [s for s in self.servers if s.enabled])

    async def check(self, path: Path, text: str | None = None, *, wait: bool = True) -> FileCheck:
        """Send ``path``'s text (read from disk when ``None``) and wait for its diagnostics (``wait=False``: send
        only, and remember the file for :meth:`take_pending`)."""
        # Looking for the root and the program stats a few files: off the event loop.
        path = await asyncio.to_thread(path.resolve)
        spec, root, program, looked = await asyncio.to_thread(choose, path, self.servers, self.workspace,
                                                              self.path_env)
        if spec is None or program is None:
            if not looked:
                return FileCheck(path, "none")
            return FileCheck(path, "missing", detail=f"no language server for {path.suffix} files was found "
                             f"(looked for {', '.join(looked)})")
        key = (spec.name, root)
        failures = self._failures.get(key)
        if failures is not None and failures.count >= MAX_FAILURES:
            return FileCheck(path, "failed", spec.name, detail=f"{spec.name} failed {failures.count} times and is "
                             f"not started again in this session (last: {failures.last})")
        try:
            started = await self._get(key, spec, program)
        except ConnectionError as exc:
            return FileCheck(path, "failed", spec.name, detail=f"{spec.name} could not start: {exc}")
        if text is None:
            try:
                text = await asyncio.to_thread(path.read_text, "utf-8", "replace")
            except OSError as exc:
                return FileCheck(path, "failed", spec.name, detail=f"cannot read {path.name}: {exc.strerror}")
        client = started.client
        version, seq = client.sync(path, text, spec.languages[0])
        if not wait:
            self.pending[path] = spec.name
            return FileCheck(path, "pending", spec.name)
        before = client.busy_seconds
        outcome = await client.wait(path, version, seq, self.wait, self.settle)
        self.busy_seconds += client.busy_seconds - before
        if outcome.status == "crashed":
            self._failed(key, outcome.detail)
            await self._drop(key)
        return _file_check(path, spec.name, outcome, self.wait)

    def take_pending(self) -> list[Path]:
        """The files changed without a wait since the last call (and forget them)."""
        paths, self.pending = list(self.pending), {}
        return paths

    async def _get(self, key: tuple[str, Path], spec: ServerSpec, program: str) -> _Started:
        started = self._running.get(key)
        if started is not None and started.client.running:
            return started
        if started is not None:  # it crashed since its last check
            self._failed(key, started.client.crashed)
            await self._drop(key)
            failures = self._failures[key]
            if failures.count >= MAX_FAILURES:
                raise ConnectionError(f"it failed {failures.count} times (last: {failures.last})")
        if self._closed:
            raise ConnectionError("the session is ending")
        task = self._starting.get(key)
        if task is None:
            task = asyncio.create_task(self._start(key, spec, program))
            self._starting[key] = task
        return await asyncio.shield(task)

    async def _start(self, key: tuple[str, Path], spec: ServerSpec, program: str) -> _Started:
        root = key[1]
        client: LspClient | None = None
        try:
            handle = await self.launch([program, *spec.command[1:]], root)
            client = LspClient(spec.name, handle, root, spec.settings)
            await client.initialize(self.start_timeout)
            if self._closed:  # the end stopped waiting for this start: nothing else would stop this server
                raise ConnectionError("the session is ending")
        except (ConnectionError, OSError, Exception) as exc:
            reason = str(exc) or type(exc).__name__
            self._failed(key, reason)
            if client is not None:
                await client.close()
            raise ConnectionError(reason) from exc
        finally:
            self._starting.pop(key, None)
        started = _Started(client, spec, self.where)
        self._running[key] = started
        self.started_count += 1
        if self._reaper is None and self.idle > 0:
            self._reaper = asyncio.create_task(self._reap())
        log.info("language server %s started for %s (pid %s)", spec.name, root, client.handle.pid)
        return started

    def _failed(self, key: tuple[str, Path], why: str) -> None:
        failures = self._failures.setdefault(key, _Failures())
        failures.count += 1
        failures.last = why

    async def _drop(self, key: tuple[str, Path]) -> None:
        started = self._running.pop(key, None)
        if started is not None:
            await started.client.close()

    async def _reap(self) -> None:
        step = max(0.05, min(self.idle / 2, 30.0))
        while not self._closed:
            await asyncio.sleep(step)
            now = time.monotonic()
            for key, started in list(self._running.items()):
                if not started.client.waiting and now - started.client.last_used >= self.idle:
                    log.info("language server %s idle for %.0f s: stopped", started.spec.name, self.idle)
                    await self._drop(key)

    def rows(self) -> list[ServerRow]:
        """The running servers (plain data)."""
        now = time.monotonic()
        return [ServerRow(s.spec.name, str(root), s.client.handle.pid, now - s.client.started, s.client.busy_seconds,
                          len(s.client.versions), s.where)
                for (_name, root), s in list(self._running.items()) if s.client.running]

    def pids(self) -> list[int]:
        return [s.client.handle.pid for s in self._running.values()]

    def known(self) -> dict[str, tuple[Diag, ...]]:
        """Every document's last published diagnostics, over the running servers."""
        out: dict[str, tuple[Diag, ...]] = {}
        for started in self._running.values():
            for path, published in started.client.published.items():
                out[path] = published.diags
        return out

    async def aclose(self) -> list[str]:
        """Stop every server and its process tree (safe to call more than once); one line per survivor."""
        self._closed = True
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
        for task in list(self._starting.values()):
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(task), self.start_timeout)
        lines = []
        for key in list(self._running):
            started = self._running.pop(key)
            report = await started.client.close()
            if report is not None and not getattr(report, "complete", True):
                lines.append(f"language server {started.spec.name}: {report.survivors_text()}")
        return lines


def _file_check(path: Path, server: str, outcome: Outcome, limit: float) -> FileCheck:
    new: list[Diag] = []
    for other, diags in outcome.others.items():
        if other not in outcome.before and not outcome.warm:
            continue  # a server's first look at the project: what it finds elsewhere was there before the edit
        old = {d.key() for d in outcome.before.get(other, ())}
        new += [d for d in diags if d.severity == 1 and d.key() not in old]
    return FileCheck(path, outcome.status, server, outcome.diags, tuple(new), outcome.seconds, outcome.detail, limit)
