"""The ACP byte stream: newline-delimited JSON-RPC on the process's own stdin and stdout.

The protocol owns the two descriptors it was started with. They are moved to private descriptors before
anything else runs, then descriptor 1 points at stderr and descriptor 0 at ``/dev/null``: a stray ``print``, a
library's warning or a child process that inherits them can never write into the protocol stream or read the
editor's messages.

A line that is not JSON gets a JSON-RPC parse error (-32700, id null) and one that is not a request,
notification or response an invalid-request error (-32600); either way the next line is read, as the
specification asks. The SDK's own framing would skip such lines silently, leaving the client waiting.

A line longer than the message limit is never held whole: it is read in chunks of :data:`READ_CHUNK`, and
once past the limit the rest is dropped up to its newline; the client gets an invalid-request error (with the
request's id when the line starts with it) and the next line is read, so the stream stays in step. Memory stays
below the limit plus two chunks (the stream reader stops reading the pipe past two chunks), whatever stdin is: a
pipe, a socket or a terminal through asyncio's own transport, a regular file (which asyncio cannot watch)
through a thread with the same back pressure. A regular file as stdout is written directly.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import os
import re
import sys
import threading
from typing import Any

log = logging.getLogger(__name__)

LINE_LIMIT = 50 * 1024 * 1024
"""Bytes in one message by default (``acp_message_limit_mb``): a prompt may embed whole files."""
READ_CHUNK = 1024 * 1024
"""Bytes read from the pipe at a time (the stream reader's own limit)."""
_LEADING_ID = re.compile(rb'\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')
"""The id of a request whose ``id`` is its first member (after ``jsonrpc``): how clients write them."""


def error_message(code: int, message: str, details: str, request_id: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message,
                                                           "data": {"details": details}}}


def check_message(message: Any) -> dict[str, Any] | None:
    """The JSON-RPC error to answer ``message`` with when it is no request, notification or response."""
    if not isinstance(message, dict):
        return error_message(-32600, "Invalid request", "a message is a JSON object (batches are not used)")
    request_id = message.get("id")
    if not isinstance(request_id, (str, int, type(None))) or isinstance(request_id, bool):
        return error_message(-32600, "Invalid request", "id must be a string, a number or null")
    if "method" in message:
        if not isinstance(message["method"], str):
            return error_message(-32600, "Invalid request", "method must be a string", request_id)
        return None
    if "id" in message and ("result" in message or "error" in message):
        return None
    return error_message(-32600, "Invalid request", "neither a request, a notification nor a response",
                         request_id)


class LineTransport:
    """Messages as lines (the SDK's ``Transport`` protocol: ``send``, ``receive``, ``close``)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, limit: int = LINE_LIMIT) -> None:
        self._reader = reader
        self._writer = writer
        self.limit = limit
        self._lock = asyncio.Lock()
        self._closed = False

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message; once the client is gone (closed here, or the pipe broke) it is dropped: what is
        still finishing (a cancelled turn's last updates and its response) has nobody to tell."""
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        async with self._lock:
            if self._closed:
                return
            try:
                self._writer.write(data)
                await self._writer.drain()
            except (ConnectionError, OSError, RuntimeError) as exc:
                log.info("swebash-ai acp: the client stopped reading (%s)", exc)
                self._closed = True

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._read_line()
            if isinstance(line, _TooLong):
                await self._answer(error_message(
                    -32600, "Invalid request", f"the message is longer than the limit of {self.limit} bytes "
                    "(acp_message_limit_mb): it was not read", line.request_id))
                continue
            if not line:
                return None
            line = line.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except ValueError as exc:
                await self._answer(error_message(-32700, "Parse error", f"not JSON: {exc}"))
                continue
            problem = check_message(message)
            if problem is not None:
                await self._answer(problem)
                continue
            return message  # type: ignore[no-any-return]

    async def _answer(self, error: dict[str, Any]) -> None:
        log.warning("swebash-ai acp: answered a bad message: %s", error["error"]["data"]["details"])
        await self.send(error)

    async def _read_line(self) -> bytes | _TooLong:
        """The next line (``b""`` at the end of the stream), or :class:`_TooLong` for one over the limit, whose
        bytes were dropped up to and with its newline."""
        chunks: list[bytes] = []
        size = 0
        too_long: _TooLong | None = None
        while True:
            try:
                chunk, ended = await self._reader.readuntil(b"\n"), True
            except asyncio.LimitOverrunError as exc:
                chunk, ended = await self._reader.readexactly(exc.consumed), False
            except asyncio.IncompleteReadError as exc:
                chunk, ended = exc.partial, True
            if too_long is None:
                size += len(chunk)
                chunks.append(chunk)
                if size > self.limit:
                    too_long = _TooLong(_leading_id(chunks[0]))
                    chunks = []
            if ended:
                return too_long if too_long is not None else b"".join(chunks)

    async def close(self) -> None:
        async with self._lock:
            if self._closed:
                return
            self._closed = True
            with contextlib.suppress(OSError, RuntimeError):
                self._writer.close()


def _leading_id(head: bytes) -> Any:
    match = _LEADING_ID.match(head)
    try:
        return json.loads(match.group(1)) if match else None
    except ValueError:
        return None


class _TooLong:
    """A line over the limit; the id of the request it began, when it said one."""

    def __init__(self, request_id: Any) -> None:
        self.request_id = request_id


class _WriteProtocol(asyncio.streams.FlowControlMixin):
    """What ``StreamWriter.drain`` needs from a pipe's protocol."""


def take_stdio() -> tuple[int, int]:
    """Move the protocol's descriptors aside (see the module docstring); returns (input fd, output fd)."""
    sys.stdout.flush()
    in_fd, out_fd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return in_fd, out_fd


async def open_streams(in_fd: int, out_fd: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_CHUNK)
    source = os.fdopen(in_fd, "rb", buffering=0)
    if _unwatchable_device(in_fd):  # asyncio would take it, fail to watch it and never see its end
        _feed_in_thread(loop, reader, source)
    else:
        try:
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), source)
        except ValueError:  # a regular file or a terminal: read it in a thread
            _feed_in_thread(loop, reader, source)
    sink = os.fdopen(out_fd, "wb", buffering=0)
    try:
        transport, protocol = await loop.connect_write_pipe(_WriteProtocol, sink)
    except ValueError:  # a regular file: written at once (a write to a file does not wait for a reader)
        return reader, _FileWriter(sink)  # type: ignore[return-value]
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


def _unwatchable_device(fd: int) -> bool:
    """A character device that is no terminal (``/dev/null`` as stdin): epoll refuses it."""
    import stat

    with contextlib.suppress(OSError):
        return stat.S_ISCHR(os.fstat(fd).st_mode) and not os.isatty(fd)
    return False


class _FileWriter:
    """What :class:`LineTransport` needs of a stream writer, over a regular file."""

    def __init__(self, sink: Any) -> None:
        self.sink = sink

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:  # an unbuffered write may take part of it
            view = view[self.sink.write(view) or 0:]

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        self.sink.close()


def _feed_in_thread(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, source: Any) -> None:
    """Feed ``reader`` from ``source`` (a regular file, which asyncio cannot watch) in a thread, with the back
    pressure a pipe has: the thread hands one chunk at a time to the loop and waits while the reader holds more
    than two (:class:`_ThreadFeed`), so a file of any size is never read ahead into memory."""
    feed = _ThreadFeed()
    reader.set_transport(feed)

    async def give(data: bytes) -> None:
        reader.feed_data(data)

    def pump() -> None:
        try:
            while feed.wanted.wait() and not feed.closed and (data := source.read(READ_CHUNK)):
                asyncio.run_coroutine_threadsafe(give(data), loop).result()
        except (RuntimeError, OSError, concurrent.futures.CancelledError) as exc:  # the loop is gone
            log.info("swebash-ai acp: stopped reading stdin (%s)", exc)
        finally:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, name="acp-stdin", daemon=True).start()


class _ThreadFeed(asyncio.ReadTransport):
    """What the stream reader pauses and resumes when its buffer passes two chunks (as a pipe's transport)."""

    def __init__(self) -> None:
        super().__init__()
        self.wanted = threading.Event()
        self.wanted.set()
        self.closed = False

    def pause_reading(self) -> None:
        self.wanted.clear()

    def resume_reading(self) -> None:
        self.wanted.set()

    def is_reading(self) -> bool:
        return self.wanted.is_set()

    def close(self) -> None:
        self.closed = True
        self.wanted.set()

    def is_closing(self) -> bool:
        return self.closed
