"""One language server process and the LSP conversation with it: ``pygls`` 2's client on ``lsprotocol``.

Contract:
    :class:`LspClient` takes a started process (a :class:`Handle`: the service's launcher starts it contained,
    in the sandbox where one works) and speaks LSP to it over its stdin and stdout: ``initialize``, full-text
    ``didOpen`` / ``didChange`` with the document's version (:meth:`LspClient.sync`), and
    ``publishDiagnostics`` kept per document. :meth:`LspClient.wait` waits for the diagnostics **of one
    version** and never takes an earlier version's:

    * a server that tags its publications with a version (most do, after the LSP 3.15 capability the client
      announces): the first publication of that version, then a quiet of ``settle`` seconds in which a
      further one (a second pass: semantic after syntax) replaces it;
    * a server that omits the version: a publication that arrived after the change was sent, then the same
      quiet. Such a server may still publish the previous version's diagnostics just after the change
      arrives; the quiet only covers a second publication that follows within ``settle`` (docs/tools.md).

    A wait ends with an :class:`Outcome` whose ``status`` says how: ``ok``, ``timeout`` (nothing of that
    version within the limit), ``crashed`` (the process ended; its last stderr line is kept). Nothing here
    reads as a clean file that was not reported clean.

    :meth:`LspClient.close` asks the server to shut down (``shutdown``, ``exit``, a grace) and then stops its
    process and everything it started (the handle's ``stop``: the containment of every command).

pygls and lsprotocol are imported only here and only when a server starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

log = logging.getLogger(__name__)

__all__ = ["Diag", "Handle", "Launch", "LspClient", "Outcome", "Published"]

_STDERR_KEEP = 4096
_SHUTDOWN_GRACE = 1.0


class Handle(Protocol):
    """A started server process (``tools.process.Contained`` is one)."""

    pid: int
    stdin: asyncio.StreamWriter | None
    stdout: asyncio.StreamReader
    stderr: asyncio.StreamReader

    async def exited(self) -> None: ...

    async def stop(self) -> Any: ...

    def close(self) -> None: ...


Launch = Callable[[Sequence[str], Path], Awaitable[Handle]]
"""``launch(argv, root)``: start a server process in ``root`` (contained, confined, scrubbed environment)."""


@dataclass(frozen=True)
class Diag:
    """One diagnostic, as plain data (positions 1-based, as a person reads them)."""

    path: str
    line: int
    col: int
    severity: int
    """1 error, 2 warning, 3 information, 4 hint (the LSP's numbers; a missing severity counts as an error)."""
    code: str
    source: str
    message: str

    def key(self) -> tuple[str, int, str, str]:
        """What makes two diagnostics "the same problem" across edits (the column may shift)."""
        return self.path, self.severity, self.code, self.message


@dataclass(frozen=True)
class Published:
    """The last diagnostics a server published for one document."""

    version: int | None
    diags: tuple[Diag, ...]
    at: float
    seq: int


@dataclass(frozen=True)
class Outcome:
    """How a wait for one version's diagnostics ended."""

    status: Literal["ok", "timeout", "crashed"]
    diags: tuple[Diag, ...] = ()
    others: Mapping[str, tuple[Diag, ...]] = field(default_factory=dict)
    """Other documents the server published for during the wait: their diagnostics now."""
    before: Mapping[str, tuple[Diag, ...]] = field(default_factory=dict)
    """The same documents' diagnostics before the change (to tell the new errors from the old); a document
    missing here had none published before."""
    warm: bool = True
    """The server had published something before the change: a document it reports for the first time now
    is news of this change, not the server's first look at the project."""
    seconds: float = 0.0
    detail: str = ""


def _path_of(uri: str) -> str:
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def _diag(path: str, d: Any) -> Diag:
    """A published diagnostic (plain JSON) as a :class:`Diag`; ``KeyError``/``TypeError`` when malformed."""
    start = d["range"]["start"]
    severity = d.get("severity")
    code = d.get("code")
    return Diag(path, int(start["line"]) + 1, int(start["character"]) + 1,
                severity if isinstance(severity, int) and 1 <= severity <= 4 else 1,
                "" if code is None else str(code), str(d.get("source") or ""), str(d.get("message", "")))


class LspClient:
    """The conversation with one server (see the module docstring): built on a started process, then
    :meth:`initialize`; messages from the server stay plain JSON (see :func:`_raw_protocol`)."""

    def __init__(self, name: str, handle: Handle, root: Path, init_options: Mapping[str, Any] | None = None) -> None:
        from pygls.lsp._base_client import BaseLanguageClient

        self.name, self.handle, self.root = name, handle, root
        self.init_options = dict(init_options or {})
        self.started = time.monotonic()
        self.last_used = self.started
        self.busy_seconds = 0.0
        """Seconds spent waiting for this server's diagnostics (``stats``)."""
        self.published: dict[str, Published] = {}
        self.versions: dict[str, int] = {}
        self.crashed = ""
        """Why the process ended by itself ("" while it runs, or after :meth:`close`)."""
        self.closing = False
        self.waiting = 0
        """Checks waiting for this server now (the idle reaper leaves it alone meanwhile)."""
        self._seq = 0
        self._changed = asyncio.Event()
        self._stderr = bytearray()
        self._client = BaseLanguageClient("swebash-ai", _version(), protocol_cls=_raw_protocol(),
                                          converter_factory=_raw_converter)
        self._register()
        assert handle.stdin is not None
        self._client.protocol.set_writer(handle.stdin)
        self._tasks: list[asyncio.Task[None]] = [
            asyncio.create_task(self._read()), asyncio.create_task(self._keep_stderr())]

    def _register(self) -> None:
        from lsprotocol import types as t

        feature: Any = self._client.feature  # pygls's decorator is untyped

        def publish(params: Any) -> None:
            try:
                path = _path_of(str(params["uri"]))
                diags = tuple(_diag(path, d) for d in params.get("diagnostics") or ())
                version = params.get("version")
            except (KeyError, TypeError, ValueError, AttributeError):
                log.debug("%s published diagnostics in an unknown shape", self.name)
                return
            self._seq += 1
            self.published[path] = Published(version if isinstance(version, int) else None, diags,
                                              time.monotonic(), self._seq)
            self._changed.set()

        def configuration(params: Any) -> list[Any]:  # "no settings of ours": each server's defaults
            return [None for _ in (params or {}).get("items") or ()]

        def nothing(_params: Any) -> None:
            return None

        feature(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(publish)
        feature(t.WORKSPACE_CONFIGURATION)(configuration)
        for method in (t.CLIENT_REGISTER_CAPABILITY, t.CLIENT_UNREGISTER_CAPABILITY, t.WINDOW_WORK_DONE_PROGRESS_CREATE,
                       t.WINDOW_LOG_MESSAGE, t.WINDOW_SHOW_MESSAGE, t.PROGRESS, t.TELEMETRY_EVENT):
            feature(method)(nothing)

    async def _read(self) -> None:
        from pygls.io_ import run_async

        try:
            await run_async(stop_event=self._client._stop_event, reader=self.handle.stdout,
                            protocol=self._client.protocol, logger=log)
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            log.debug("reading from %s failed: %s", self.name, exc)
        if not self.closing:
            tail = self._stderr.decode("utf-8", "replace").strip().splitlines()
            self.crashed = "the server exited" + (f" ({tail[-1][:200]})" if tail else "")
        for future in list(self._client.protocol._request_futures.values()):
            if not future.done():
                future.set_exception(ConnectionError(self.crashed or "the server was stopped"))
        self._changed.set()

    async def _keep_stderr(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := await self.handle.stderr.read(65_536):
                self._stderr += chunk
                del self._stderr[:-_STDERR_KEEP]

    @property
    def running(self) -> bool:
        return not self.crashed and not self.closing

    async def initialize(self, limit: float) -> None:
        """``initialize`` and ``initialized``.

        Raises:
            ConnectionError: the server ended or did not answer within ``limit`` seconds.
        """
        from lsprotocol import types as t

        caps = t.ClientCapabilities(
            text_document=t.TextDocumentClientCapabilities(
                synchronization=t.TextDocumentSyncClientCapabilities(),
                publish_diagnostics=t.PublishDiagnosticsClientCapabilities(version_support=True),
            ),
            workspace=t.WorkspaceClientCapabilities(configuration=True),
        )
        params = t.InitializeParams(
            capabilities=caps, process_id=None, root_uri=self.root.as_uri(),
            workspace_folders=[t.WorkspaceFolder(uri=self.root.as_uri(), name=self.root.name or "root")],
            client_info=t.ClientInfo(name="swebash-ai", version=_version()),
            initialization_options=self.init_options or None,
        )
        try:
            await asyncio.wait_for(self._client.initialize_async(params), limit)
        except TimeoutError as exc:
            raise ConnectionError(f"it did not answer `initialize` within {limit:g} s") from exc
        except ConnectionError:
            raise
        except Exception as exc:  # an error answer, a closed pipe
            raise ConnectionError(self.crashed or f"`initialize` failed: {exc}") from exc
        self._client.initialized(t.InitializedParams())

    def sync(self, path: Path, text: str, language: str) -> tuple[int, int]:
        """Send ``path``'s whole text as its next version; returns ``(version, seq)`` for :meth:`wait`."""
        from lsprotocol import types as t

        key = str(path)
        uri = path.as_uri()
        version = self.versions.get(key, 0) + 1
        self.versions[key] = version
        seq = self._seq
        self.last_used = time.monotonic()
        if version == 1:
            self._client.text_document_did_open(t.DidOpenTextDocumentParams(
                t.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)))
        else:
            change = t.TextDocumentContentChangeWholeDocument(text=text)
            self._client.text_document_did_change(t.DidChangeTextDocumentParams(
                t.VersionedTextDocumentIdentifier(uri=uri, version=version), [change]))
        return version, seq

    def _fresh(self, key: str, version: int, seq: int) -> Published | None:
        got = self.published.get(key)
        if got is None or got.seq <= seq:
            return None
        if got.version is not None and got.version != version:
            return None  # an earlier (or, after another change, a later) version's: never taken for this one
        return got

    async def wait(self, path: Path, version: int, seq: int, limit: float, settle: float) -> Outcome:
        """The diagnostics of ``version`` of ``path`` (see the module docstring), within ``limit`` seconds."""
        key = str(path)
        start = time.monotonic()
        deadline = start + limit
        before = {k: p.diags for k, p in self.published.items() if k != key and p.seq <= seq}
        self.waiting += 1
        try:
            while True:
                now = time.monotonic()
                got = self._fresh(key, version, seq)
                if got is not None and (now - got.at >= settle or now >= deadline):
                    return self._outcome("ok", got.diags, seq, key, before, start)
                if self.crashed or self.closing:
                    why = self.crashed or "it was stopped (the session is ending)"
                    return self._outcome("crashed", (), seq, key, before, start, why)
                if now >= deadline:
                    return self._outcome("timeout", (), seq, key, before, start)
                until = deadline if got is None else min(deadline, got.at + settle)
                self._changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), max(0.0, until - now))
        finally:
            self.waiting -= 1
            self.busy_seconds += time.monotonic() - start
            self.last_used = time.monotonic()

    def _outcome(self, status: Literal["ok", "timeout", "crashed"], diags: tuple[Diag, ...], seq: int, key: str,
                 before: Mapping[str, tuple[Diag, ...]], start: float, detail: str = "") -> Outcome:
        others = {k: p.diags for k, p in self.published.items() if k != key and p.seq > seq}
        return Outcome(status, diags, others, {k: before[k] for k in others if k in before}, warm=seq > 0,
                       seconds=time.monotonic() - start, detail=detail)

    async def close(self) -> Any:
        """Shut the server down politely, then stop its process tree; returns the handle's stop report."""
        if not self.closing:
            self.closing = True
            if not self.crashed:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self._client.shutdown_async(None), _SHUTDOWN_GRACE)
                    self._client.exit(None)
                    await asyncio.wait_for(self.handle.exited(), _SHUTDOWN_GRACE)
        self._client._stop_event.set()
        report = await self.handle.stop()
        self.handle.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        return report


def _raw_protocol() -> Any:
    """pygls's LSP protocol, but messages from the server are not converted to lsprotocol's classes: its converter
    refuses capabilities and diagnostics it does not know exactly (ty's notebook selector), and a message it
    refuses is dropped, which would read as a server that never answered."""
    from pygls.protocol import LanguageServerProtocol

    class RawProtocol(LanguageServerProtocol):
        def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
            return None

        def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
            return None

    return RawProtocol


def _raw_converter() -> Any:
    """pygls's converter, but the params and results of messages stay the JSON they were (dicts, lists)."""
    from pygls import protocol

    make: Any = protocol.default_converter  # untyped
    converter = make()
    for cls in (protocol.JsonRPCNotification, protocol.JsonRPCRequestMessage, protocol.JsonRPCResponseMessage):
        converter.register_structure_hook(cls, lambda obj, kind: kind(**obj))
    return converter


def _version() -> str:
    from swebash_ai import __version__

    return __version__
