"""The stdio transport of MCP servers, with a bound on what one message may cost.

Contract: :func:`bounded_stdio_client` is the SDK's ``stdio_client`` (same environment, same shutdown order:
close stdin, a grace, then a kill) with two differences. The server is started by
:func:`~swebash_ai.tools.process.start_contained`, under the per-run supervisor every command runs under
(docs/safety.md "Processes"): a daemon it double-forks or starts with ``setsid`` stays in its tree and is stopped when
the session closes, when the server exits, and when swebash-ai dies (even by SIGKILL: the supervisor sees its
control pipe close). The SDK kills the server's process group only. And another reader of the server's stdout:

* linear in the size of a message (the SDK's reader joins each 64 KiB chunk onto the pending line, which is
  quadratic: a 50 MB answer took over a minute and timed out);
* at most :data:`MAX_MESSAGE_BYTES` of one message are held. A longer message is read through and dropped,
  keeping only its first :data:`HEAD_BYTES`; if it answers a request (its ``id`` is found at its start or
  end), that request gets a JSON-RPC error with code :data:`OVERSIZE` whose ``data`` holds the message's size
  and the start of its first text content, from which :mod:`~swebash_ai.tools.mcp_client` makes a result cut
  with a note. A message whose ``id`` cannot be found is dropped (its call ends at its ``timeout``).

Only this module and ``mcp_client`` import the SDK, and only when a server is configured.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import os
import re
import shutil
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio
import anyio.lowlevel
from mcp.client import stdio as sdk
from mcp.shared.message import SessionMessage
from mcp.types import ErrorData, JSONRPCError, jsonrpc_message_adapter

from swebash_ai.tools.containment import MARKER_VAR
from swebash_ai.tools.process import Contained, start_contained

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""The most of one message from a server that is held and parsed; tool results are cut far below this
(``exec_max_output``), so a larger message only costs memory."""
HEAD_BYTES = 1024 * 1024
"""What is kept of a message over :data:`MAX_MESSAGE_BYTES`: enough for the start of its text."""
OVERSIZE = -32090
"""JSON-RPC error code (implementation-defined range) of a request whose answer was over the limit."""
STDERR_KEEP = 1024 * 1024
"""The most of a server's stderr kept (in a temporary file) before it starts over."""
_READ_SIZE = 65_536

_ID_AT_START = re.compile(rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"[^"\\]{0,200}")')
_ID_AT_END = re.compile(rb'"id"\s*:\s*(-?\d+|"[^"\\]{0,200}")\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$')
_TEXT = re.compile(r'"text"\s*:\s*"')
_JSON_STRING_BODY = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*')


def oversize_reply(head: bytes, tail: bytes, size: int) -> SessionMessage | None:
    """The error that answers the request of a dropped message, or ``None`` when it names no request."""
    found = _ID_AT_START.match(head) or _ID_AT_END.search(tail)
    if found is None:
        return None
    request_id = json.loads(found.group(1))
    data = {"bytes": size, "text": text_prefix(head.decode("utf-8", errors="ignore"))}
    error = ErrorData(code=OVERSIZE, message=f"the answer was {size} bytes, over the {MAX_MESSAGE_BYTES} bytes "
                      "read of one message", data=data)
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def text_prefix(head: str) -> str:
    """The decoded start of the first ``"text"`` string in the start of a JSON message ("" if none)."""
    found = _TEXT.search(head)
    if found is None:
        return ""
    body = _JSON_STRING_BODY.match(head, found.end())
    raw = body.group(0) if body else ""
    for cut in range(7):  # the head may end inside an escape (\u12): drop its pieces
        try:
            text = json.loads('"' + raw[: len(raw) - cut] + '"')
        except ValueError:
            continue
        return text if isinstance(text, str) else ""
    return ""


class LineReader:
    """Splits the server's stdout into messages, linearly, holding at most ``limit`` bytes of one."""

    def __init__(self, limit: int = MAX_MESSAGE_BYTES, head: int = HEAD_BYTES) -> None:
        self.limit, self.head_size = limit, head
        self._buf = bytearray()
        self._head: bytes | None = None  # set while a message over the limit is read through
        self._tail = b""
        self._size = 0

    def feed(self, chunk: bytes) -> list[SessionMessage | Exception]:
        out: list[SessionMessage | Exception] = []
        start = 0
        while start <= len(chunk):
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            self._take(piece)
            if end < 0:
                break
            message = self._finish()
            if message is not None:
                out.append(message)
            start = end + 1
        return out

    def _take(self, piece: bytes) -> None:
        if self._head is None:
            self._buf += piece
            if len(self._buf) <= self.limit:
                return
            self._head, self._size = bytes(self._buf[: self.head_size]), len(self._buf)
            self._tail = bytes(self._buf[-256:])
            self._buf = bytearray()  # released: the rest of this message is only counted
            return
        self._size += len(piece)
        self._tail = (self._tail + piece)[-256:]

    def _finish(self) -> SessionMessage | Exception | None:
        if self._head is not None:
            head, tail, size = self._head, self._tail, self._size
            self._head, self._tail, self._size = None, b"", 0
            reply = oversize_reply(head, tail, size)
            if reply is None:
                log.warning("dropped a message of %d bytes from an MCP server: it names no request", size)
            return reply
        line, self._buf = self._buf, bytearray()
        if not line.strip():
            return None
        try:  # parsed from the bytes themselves: no decoded copy of the line is made
            return SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
        except ValueError as exc:
            log.warning("an MCP server sent a message that is not JSON-RPC: %s", exc)
            return exc


Confine = Callable[[list[str], Path], list[str]]
"""An argv and its working directory -> the argv that runs it in the OS sandbox (raises ToolError where none
works: the server does not start)."""


async def start_server(server: sdk.StdioServerParameters, confine: Confine | None = None) -> Contained:
    """Start a stdio server under the same containment as every command (``tools/process.py``), and in the OS
    sandbox when ``confine`` is given.

    The environment is the SDK's (a few safe variables, then the server's ``env``) plus the containment
    marker; the program is looked up in that ``PATH`` (the supervisor ``exec``s a path, not a name).

    Raises:
        FileNotFoundError: no such program.
        ToolError: it could not be started.
    """
    env = sdk.get_default_environment() | (server.env or {})
    env[MARKER_VAR] = uuid.uuid4().hex
    cwd = Path(server.cwd) if server.cwd is not None else Path.cwd()
    program = server.command
    if os.sep not in program:
        found = shutil.which(program, path=env.get("PATH", os.defpath))
        if found is None:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", program)
        program = found
    # Checked here, not left to the supervisor's exec: its failure would read "Connection closed".
    where = cwd / program
    if not where.exists():
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", program)
    if where.is_dir() or not os.access(where, os.X_OK):
        raise PermissionError(errno.EACCES, "Permission denied", program)
    argv = [program, *server.args]
    if confine is not None:
        argv = confine(argv, cwd)
    return await start_contained(argv, cwd=cwd, env=env, stdin=True)


async def _keep_stderr(reader: asyncio.StreamReader, errlog: TextIO) -> None:
    """Copy the server's stderr into ``errlog`` (its last line explains a failed start), keeping the file
    under :data:`STDERR_KEEP` bytes: a chatty server must not fill the disk over a long session."""
    while chunk := await reader.read(_READ_SIZE):
        with contextlib.suppress(OSError, ValueError):
            if errlog.tell() > STDERR_KEEP:
                errlog.seek(0)
                errlog.truncate()
            errlog.write(chunk.decode("utf-8", "replace"))


@asynccontextmanager
async def bounded_stdio_client(server: sdk.StdioServerParameters, errlog: TextIO,
                               confine: Confine | None = None) -> AsyncIterator[Any]:
    """The SDK's ``stdio_client`` with :class:`LineReader` reading stdout and the server started contained.

    The body follows the SDK's (mcp 2.3) shape: a stdout reader, a stdin writer, and a shutdown that cannot be
    cancelled and whose every wait is bounded. Two differences: the reader (see the module docstring), and the
    process: it runs under the per-run supervisor (:func:`start_server`), so the shutdown (close stdin, a
    grace of ``PROCESS_TERMINATION_TIMEOUT`` to exit, then the supervisor's sweep) ends every process the
    server started, and a killed swebash-ai ends them too.
    """
    job = await start_server(server, confine)
    assert job.stdin is not None
    stdin = job.stdin
    # No awaits until the task group is entered: a cancellation in the gap would leak the process.
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    shutting_down = False
    writer_done = anyio.Event()

    async def stdout_reader() -> None:
        reader = LineReader()
        try:
            async with read_writer:
                try:
                    while chunk := await job.stdout.read(_READ_SIZE):
                        for message in reader.feed(chunk):
                            try:
                                await read_writer.send(message)
                            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                                return
                finally:
                    # Drain: a server blocked writing its stdout cannot read its stdin and exit; the shutdown
                    # ends the pipe (the sweep, then close()), so this ends too.
                    with anyio.CancelScope(shield=True), contextlib.suppress(OSError):
                        while await job.stdout.read(_READ_SIZE):
                            pass
        except anyio.ClosedResourceError:
            pass  # our own shutdown closed the stream under the read
        except (anyio.BrokenResourceError, ConnectionError):
            if not shutting_down:
                log.warning("reading from an MCP server's stdout failed mid-session", exc_info=True)

    async def stdin_writer() -> None:
        try:
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    stdin.write((data + "\n").encode(server.encoding, server.encoding_error_handler))
                    await stdin.drain()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()  # the session sees the connection end, not a request hanging
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(sdk._WRITER_FLUSH_TIMEOUT):
            await writer_done.wait()
        stdin.close()  # the MCP way to ask a stdio server to exit
        with anyio.move_on_after(sdk.PROCESS_TERMINATION_TIMEOUT):
            await job.exited()
        report = await job.stop()  # whatever is left: the server, and everything it started
        job.close()
        if report.stopped_count:
            log.info("MCP server %s: stopped %d process(es) it left: %s", server.command, report.stopped_count,
                     report.stopped_names())
        if not report.complete:
            log.warning("MCP server %s: %s", server.command, report.survivors_text())
        await sdk._aclose_all(read_stream, write_stream, read_writer, write_reader)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(stdout_reader)
        tg.start_soon(stdin_writer)
        tg.start_soon(_keep_stderr, job.stderr, errlog)
        try:
            yield read_stream, write_stream
        finally:
            shutting_down = True
            with anyio.CancelScope(shield=True):  # every wait inside is bounded; the process must not leak
                await shutdown()
            tg.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()
