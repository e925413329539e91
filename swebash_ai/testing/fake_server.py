"""A scripted fake LLM server on loopback, for tests and benchmarks (stdlib only).

It speaks real HTTP/1.1 + server-sent events in two dialects, so the real ``openai.AsyncOpenAI`` client
and litellm's real HTTP clients can be pointed at it and nothing ever leaves 127.0.0.1:

* ``dialect="openai"``: ``POST …/chat/completions`` (``stream=true``: ``chat.completion.chunk`` events
  ending with ``data: [DONE]``; otherwise one ``chat.completion`` JSON) and ``GET …/models``.
  ``base_url`` is ``http://127.0.0.1:PORT/v1``.
* ``dialect="anthropic"``: ``POST …/messages`` (``stream=true``: message_start, ping,
  content_block_start/delta/stop per block, message_delta, message_stop; otherwise one message JSON).
  ``base_url`` is ``http://127.0.0.1:PORT``; both ``/v1/messages`` and ``/messages`` are served.

Every POST is answered by the next queued :class:`Reply` (``enqueue``); when the queue is empty the
optional ``responder(request_body) -> Reply`` is asked; without one the answer is a 500 whose message
is ``"fake server: script exhausted"``. Replies are text (streamed in ``chunk_size`` pieces), tool calls
(ids, names and arguments optionally fragmented in ``split``-character pieces, keyed by index), HTTP
errors in the dialect's error JSON (with ``Retry-After`` when asked), or a "broken" stream whose socket
is shut down after a few chunks, so clients see an incomplete chunked body, never a clean end.

Every request is recorded in ``requests`` (``{"path", "headers" (lower-case keys), "body"}``).
Conversation protocol mistakes in the request (an assistant tool call without its tool result, a tool
result for an unknown id, …) are appended to ``violations`` as readable strings; the request is still
answered normally.

CLI: ``python -m swebash_ai.testing.fake_server --dialect openai --script script.json [--port 0]
[--echo]`` prints the base URL as its first stdout line and serves until SIGTERM/SIGINT. The script is
a JSON list of objects understood by :meth:`Reply.from_json`; ``--echo`` answers every request beyond
the script with ``"echo: <last user message>"``.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType, TracebackType
from typing import Any, Literal, Self, cast

Dialect = Literal["openai", "anthropic"]
JSON = dict[str, Any]
ToolCallSpec = tuple[str, dict[str, Any] | str] | tuple[str, dict[str, Any] | str, str]
Responder = Callable[[JSON], "Reply"]

MODEL_ID = "fake-model"
EXHAUSTED = "fake server: script exhausted"

_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 500: "api_error",
                529: "overloaded_error"}


@dataclass(frozen=True)
class ToolCall:
    """One scripted tool call: ``arguments`` is sent verbatim (it may be invalid JSON on purpose)."""

    name: str
    arguments: str
    id: str | None = None


@dataclass(frozen=True)
class Reply:
    """One scripted answer. Build it with the class methods, not the constructor."""

    kind: Literal["text", "tool_calls", "error", "broken"]
    content: str = ""
    calls: tuple[ToolCall, ...] = ()
    chunk_size: int = 4
    split: int = 0
    interleave: bool = False
    status: int = 200
    message: str = ""
    retry_after: float | None = None
    after_chunks: int = 0
    delay: float = 0.0
    usage: tuple[int, int] | None = None

    @classmethod
    def text(cls, text: str, *, chunk_size: int = 4, delay: float = 0.0,
             usage: tuple[int, int] | None = None) -> Reply:
        """Plain text, streamed in ``chunk_size``-character deltas (0: one delta)."""
        return cls("text", content=text, chunk_size=chunk_size, delay=delay, usage=usage)

    @classmethod
    def tool_calls(cls, calls: Sequence[ToolCallSpec], *, text: str = "", split: int = 0, chunk_size: int = 4,
                   interleave: bool = False, delay: float = 0.0,
                   usage: tuple[int, int] | None = None) -> Reply:
        """Tool calls ``(name, arguments[, id])``; a dict is JSON-dumped, a string is sent verbatim.

        ``split=N`` sends id, name and arguments in N-character fragments (anthropic: arguments only,
        its protocol sends id and name whole); ``interleave=True`` alternates fragments of different
        calls round-robin (the real API sends them one call after another, which is the default).
        """
        parsed: list[ToolCall] = []
        for spec in calls:
            name, args = spec[0], spec[1]
            call_id = spec[2] if len(spec) > 2 else None
            parsed.append(ToolCall(name, args if isinstance(args, str) else json.dumps(args), call_id))
        return cls("tool_calls", content=text, calls=tuple(parsed), split=split, chunk_size=chunk_size,
                   interleave=interleave, delay=delay, usage=usage)

    @classmethod
    def error(cls, status: int, message: str, *, retry_after: float | None = None,
              delay: float = 0.0) -> Reply:
        """An HTTP error in the dialect's error JSON (``Retry-After`` header when ``retry_after`` is set)."""
        return cls("error", status=status, message=message, retry_after=retry_after, delay=delay)

    @classmethod
    def broken(cls, text: str, *, after_chunks: int = 2, chunk_size: int = 4, delay: float = 0.0) -> Reply:
        """A stream that sends ``after_chunks`` text deltas of ``text`` and then drops the connection."""
        return cls("broken", content=text, after_chunks=after_chunks, chunk_size=chunk_size, delay=delay)

    @classmethod
    def from_json(cls, obj: Any) -> Reply:
        """Build a reply from a script entry: ``{"text": …}``, ``{"tool_calls": [[name, args, id?], …]}``
        (optionally with ``"text"``), ``{"error": 429, "message": …, "retry_after": 0}`` or
        ``{"broken": "partial text", "after_chunks": 2}``; optional ``chunk_size``, ``split``,
        ``interleave``, ``delay``, ``usage: [prompt, completion]``."""
        if not isinstance(obj, dict):
            raise ValueError(f"a script entry must be a JSON object, got {obj!r}")
        delay = float(obj.get("delay", 0.0))
        chunk = int(obj.get("chunk_size", 4))
        usage_raw = obj.get("usage")
        usage = (int(usage_raw[0]), int(usage_raw[1])) if usage_raw is not None else None
        if "error" in obj:
            retry = obj.get("retry_after")
            return cls.error(int(obj["error"]), str(obj.get("message", "error")),
                             retry_after=None if retry is None else float(retry), delay=delay)
        if "broken" in obj:
            return cls.broken(str(obj["broken"]), after_chunks=int(obj.get("after_chunks", 2)),
                              chunk_size=chunk, delay=delay)
        if "tool_calls" in obj:
            specs: list[ToolCallSpec] = []
            for entry in obj["tool_calls"]:
                if isinstance(entry, dict):
                    extra = [entry["id"]] if "id" in entry else []
                    entry = [entry["name"], entry.get("arguments", {}), *extra]
                if not isinstance(entry, list) or len(entry) not in (2, 3):
                    raise ValueError(f"a tool call must be [name, arguments(, id)]: {entry!r}")
                specs.append(cast(ToolCallSpec, tuple(entry)))
            return cls.tool_calls(specs, text=str(obj.get("text", "")), split=int(obj.get("split", 0)),
                                  chunk_size=chunk, interleave=bool(obj.get("interleave", False)),
                                  delay=delay, usage=usage)
        if "text" in obj:
            return cls.text(str(obj["text"]), chunk_size=chunk, delay=delay, usage=usage)
        raise ValueError(f"unknown script entry (needs text, tool_calls, error or broken): {obj!r}")


# ---------------------------------------------------------------------------------------------------
# Request checks


def check_openai_messages(messages: Any) -> list[str]:
    """Tool-call bookkeeping errors in an OpenAI ``messages`` list (empty when it is well formed)."""
    if not isinstance(messages, list):
        return ["messages is not a list"]
    out: list[str] = []
    pending: dict[str, int] = {}
    answered: set[str] = set()
    for j, msg in enumerate(messages):
        if not isinstance(msg, dict):
            out.append(f"messages[{j}] is not an object")
            continue
        role = msg.get("role")
        if role == "tool":
            tid = msg.get("tool_call_id")
            if isinstance(tid, str) and tid in pending:
                del pending[tid]
                answered.add(tid)
            elif tid in answered:
                out.append(f"messages[{j}]: tool message answers tool_call_id {tid!r} a second time")
            else:
                out.append(f"messages[{j}]: tool message references unknown tool_call_id {tid!r}")
            continue
        if pending:
            ids = ", ".join(sorted(pending))
            out.append(f"messages[{j}] (role {role!r}) arrives while tool_call ids [{ids}] of "
                       f"messages[{min(pending.values())}] are unanswered")
            pending.clear()
        if role == "assistant":
            for call in msg.get("tool_calls") or []:
                cid = call.get("id") if isinstance(call, dict) else None
                if not isinstance(cid, str) or not cid:
                    out.append(f"messages[{j}]: assistant tool call without an id")
                else:
                    pending[cid] = j
    if pending:
        out.append(f"tool_call ids [{', '.join(sorted(pending))}] of messages[{min(pending.values())}] "
                   "are never answered by a tool message")
    return out


def check_anthropic_messages(messages: Any) -> list[str]:
    """Each assistant ``tool_use`` id must get a ``tool_result`` in the very next (user) message."""
    if not isinstance(messages, list):
        return ["messages is not a list"]
    out: list[str] = []
    expected: set[str] = set()
    source = -1
    for j, msg in enumerate(messages):
        if not isinstance(msg, dict):
            out.append(f"messages[{j}] is not an object")
            continue
        content = msg.get("content")
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        if msg.get("role") == "user":
            results = {str(b.get("tool_use_id")) for b in blocks if b.get("type") == "tool_result"}
            for rid in sorted(results - expected):
                out.append(f"messages[{j}]: tool_result for unknown tool_use_id {rid!r}")
            if expected - results:
                out.append(f"messages[{j}]: tool_use ids [{', '.join(sorted(expected - results))}] of "
                           f"messages[{source}] have no tool_result")
            expected = set()
        else:
            if expected:
                out.append(f"messages[{j}] (role {msg.get('role')!r}) follows tool_use ids "
                           f"[{', '.join(sorted(expected))}] of messages[{source}] without their results")
            expected = {str(b.get("id")) for b in blocks if b.get("type") == "tool_use"}
            source = j
    if expected:
        out.append(f"tool_use ids [{', '.join(sorted(expected))}] of messages[{source}] are never answered")
    return out


# ---------------------------------------------------------------------------------------------------
# Rendering replies


def _pieces(text: str, size: int) -> list[str]:
    if not text:
        return []
    if size <= 0:
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


def _round_robin(groups: list[list[JSON]]) -> Iterator[JSON]:
    for row in itertools.zip_longest(*groups):
        yield from (item for item in row if item is not None)


@dataclass
class _Turn:
    """A reply resolved against one request: ids assigned, usage decided."""

    reply: Reply
    model: str
    ids: list[str]
    prompt_tokens: int
    completion_tokens: int
    serial: int

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.reply.calls else "stop"


def _openai_usage(turn: _Turn) -> JSON:
    return {"prompt_tokens": turn.prompt_tokens, "completion_tokens": turn.completion_tokens,
            "total_tokens": turn.prompt_tokens + turn.completion_tokens}


def _openai_stream(turn: _Turn, include_usage: bool) -> tuple[list[bytes], int]:
    """SSE frames for an OpenAI stream, and how many frames precede the first text delta."""
    reply = turn.reply
    base: JSON = {"id": f"chatcmpl-fake{turn.serial}", "object": "chat.completion.chunk",
                  "created": int(time.time()), "model": turn.model, "system_fingerprint": None}

    def chunk(delta: JSON, finish: str | None = None) -> JSON:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": piece}) for piece in _pieces(reply.content, reply.chunk_size)]
    groups: list[list[JSON]] = []
    for index, (call, cid) in enumerate(zip(reply.calls, turn.ids, strict=True)):
        n = reply.split
        if n <= 0:
            group: list[JSON] = [{"index": index, "id": cid, "type": "function",
                                  "function": {"name": call.name, "arguments": ""}}]
            if call.arguments:
                group.append({"index": index, "function": {"arguments": call.arguments}})
        else:
            # Every delta keeps a "function" object: litellm drops tool-call deltas without one.
            group = [{"index": index, "id": piece, "function": {"arguments": ""}}
                     for piece in _pieces(cid, n)]
            group[0]["type"] = "function"
            group += [{"index": index, "function": {"name": piece}} for piece in _pieces(call.name, n)]
            group += [{"index": index, "function": {"arguments": p}} for p in _pieces(call.arguments, n)]
        groups.append(group)
    deltas = _round_robin(groups) if reply.interleave else itertools.chain.from_iterable(groups)
    events += [chunk({"tool_calls": [delta]}) for delta in deltas]
    final = chunk({}, turn.finish_reason)
    if not include_usage:
        final["usage"] = _openai_usage(turn)
    events.append(final)
    if include_usage:
        events.append({**base, "choices": [], "usage": _openai_usage(turn)})
    frames = [f"data: {json.dumps(e)}\n\n".encode() for e in events]
    frames.append(b"data: [DONE]\n\n")
    return frames, 1


def _openai_completion(turn: _Turn) -> JSON:
    reply = turn.reply
    message: JSON = {"role": "assistant", "content": reply.content or None, "refusal": None}
    if reply.calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c, cid in zip(reply.calls, turn.ids, strict=True)
        ]
    return {"id": f"chatcmpl-fake{turn.serial}", "object": "chat.completion", "created": int(time.time()),
            "model": turn.model, "system_fingerprint": None,
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": turn.finish_reason}],
            "usage": _openai_usage(turn)}


def _anthropic_input(arguments: str) -> Any:
    try:
        return json.loads(arguments) if arguments else {}
    except ValueError:
        return arguments  # invalid on purpose: hand it over raw


def _anthropic_stream(turn: _Turn) -> tuple[list[bytes], int]:
    """SSE frames for an Anthropic Messages stream, and how many frames precede the first text delta."""
    reply = turn.reply
    events: list[JSON] = [
        {"type": "message_start", "message": {
            "id": f"msg_fake{turn.serial}", "type": "message", "role": "assistant", "model": turn.model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": turn.prompt_tokens, "output_tokens": 1}}},
    ]
    index = 0
    if reply.content or not reply.calls:
        events.append({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "text", "text": ""}})
        events.append({"type": "ping"})
        events += [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}
                   for piece in _pieces(reply.content, reply.chunk_size)]
        events.append({"type": "content_block_stop", "index": 0})
        index = 1
    for call, cid in zip(reply.calls, turn.ids, strict=True):
        events.append({"type": "content_block_start", "index": index,
                       "content_block": {"type": "tool_use", "id": cid, "name": call.name, "input": {}}})
        events += [{"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": piece}}
                   for piece in _pieces(call.arguments, reply.split)]
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    events.append({"type": "message_delta",
                   "delta": {"stop_reason": "tool_use" if reply.calls else "end_turn", "stop_sequence": None},
                   "usage": {"output_tokens": turn.completion_tokens}})
    events.append({"type": "message_stop"})
    frames = [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]
    return frames, 3


def _anthropic_message(turn: _Turn) -> JSON:
    reply = turn.reply
    with_text = bool(reply.content) or not reply.calls
    content: list[JSON] = [{"type": "text", "text": reply.content}] if with_text else []
    content += [{"type": "tool_use", "id": cid, "name": c.name, "input": _anthropic_input(c.arguments)}
                for c, cid in zip(reply.calls, turn.ids, strict=True)]
    return {"id": f"msg_fake{turn.serial}", "type": "message", "role": "assistant", "model": turn.model,
            "content": content, "stop_reason": "tool_use" if reply.calls else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": turn.prompt_tokens, "output_tokens": turn.completion_tokens}}


def _error_body(dialect: Dialect, status: int, message: str) -> JSON:
    kind = _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    if dialect == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    code = "rate_limit_exceeded" if status == 429 else None
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


# ---------------------------------------------------------------------------------------------------
# HTTP plumbing


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024  # the default backlog of 5 resets bursts of concurrent clients

    def __init__(self, address: tuple[str, int], owner: FakeLLMServer) -> None:
        self.owner = owner
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], OSError):  # a client hanging up is not worth a traceback
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeLLMServer/1.0"

    @property
    def owner(self) -> FakeLLMServer:
        return cast(_HTTPServer, self.server).owner

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request stderr log."""

    def do_GET(self) -> None:
        owner = self.owner
        owner._record(self.path, {k.lower(): v for k, v in self.headers.items()}, None)
        if self.path.split("?")[0].rstrip("/").endswith("/models"):
            model: JSON = ({"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "fake"}
                           if owner.dialect == "openai" else
                           {"type": "model", "id": MODEL_ID, "display_name": "Fake model",
                            "created_at": "2025-01-01T00:00:00Z"})
            self._send_json(200, {"object": "list", "data": [model], "has_more": False,
                                  "first_id": MODEL_ID, "last_id": MODEL_ID})
            return
        if self.path.split("?")[0] == "/api/tags":  # Ollama's own model list (it also serves /v1)
            self._send_json(200, {"models": [{"name": MODEL_ID, "model": MODEL_ID}]})
            return
        owner._violate(f"unexpected request GET {self.path}")
        self._send_json(404, _error_body(owner.dialect, 404, f"fake server: no route GET {self.path}"))

    def do_POST(self) -> None:
        owner = self.owner
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))  # clients send JSON with a length
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        number = owner._record(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        if not isinstance(body, dict):
            owner._violate(f"POST {self.path}: body is not a JSON object")
            self._send_json(400, _error_body(owner.dialect, 400, "fake server: body is not a JSON object"))
            return
        route = self.path.split("?")[0].rstrip("/")
        suffix = "/chat/completions" if owner.dialect == "openai" else "/messages"
        if not route.endswith(suffix):
            owner._violate(f"unexpected request POST {self.path} for the {owner.dialect} dialect")
            self._send_json(404, _error_body(owner.dialect, 404, f"fake server: no route POST {self.path}"))
            return
        if route not in (suffix, "/v1" + suffix):  # answered, but e.g. /v1/v1/messages is a config bug
            owner._violate(f"unusual path POST {self.path} (a real server would answer 404)")
        check = check_openai_messages if owner.dialect == "openai" else check_anthropic_messages
        for problem in check(body.get("messages")):
            owner._violate(f"request {number} ({self.path}): {problem}")
        reply = owner._next_reply(body)
        if reply.kind == "error":
            time.sleep(reply.delay)
            headers = {} if reply.retry_after is None else {"Retry-After": f"{reply.retry_after:g}"}
            self._send_json(reply.status, _error_body(owner.dialect, reply.status, reply.message), headers)
            return
        turn = owner._turn(reply, body)
        abort_after = None
        if body.get("stream"):
            if owner.dialect == "openai":
                options = body.get("stream_options")
                include = isinstance(options, dict) and bool(options.get("include_usage"))
                frames, prefix = _openai_stream(turn, include)
            else:
                frames, prefix = _anthropic_stream(turn)
            if reply.kind == "broken":  # never reach the closing events, whatever after_chunks says
                abort_after = prefix + min(reply.after_chunks, len(_pieces(reply.content, reply.chunk_size)))
            self._send_stream(frames, abort_after, reply.delay)
            return
        payload = _openai_completion(turn) if owner.dialect == "openai" else _anthropic_message(turn)
        if reply.kind == "broken":  # promise the whole body, deliver half of it, hang up
            data = json.dumps(payload).encode()
            self._start(200, "application/json", {"Content-Length": str(len(data))})
            self._write(data[: len(data) // 2])
            self._abort()
            return
        self._send_json(200, payload)

    # -- helpers -----------------------------------------------------------------------------------

    def _start(self, status: int, content_type: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Connection", "close")
        self.end_headers()

    def _write(self, data: bytes) -> bool:
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:  # the client went away: nothing left to do
            self.close_connection = True
            return False
        return True

    def _send_json(self, status: int, obj: JSON, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self._start(status, "application/json", {"Content-Length": str(len(data)), **(headers or {})})
        self._write(data)

    def _send_stream(self, frames: list[bytes], abort_after: int | None, delay: float) -> None:
        self._start(200, "text/event-stream; charset=utf-8",
                    {"Cache-Control": "no-cache", "Transfer-Encoding": "chunked"})
        for i, frame in enumerate(frames):
            if abort_after is not None and i >= abort_after:
                self._abort()
                return
            if i and delay > 0:
                time.sleep(delay)
            if not self._write(b"%x\r\n%s\r\n" % (len(frame), frame)):
                return
        if abort_after is not None:
            self._abort()
            return
        self._write(b"0\r\n\r\n")

    def _abort(self) -> None:
        """Drop the connection mid-body: the client sees an incomplete response, not a clean end."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


class FakeLLMServer:
    """The scripted server. ``start()`` (or ``with``) binds 127.0.0.1 on an ephemeral port."""

    def __init__(self, dialect: Dialect = "openai", *, host: str = "127.0.0.1", port: int = 0) -> None:
        if dialect not in ("openai", "anthropic"):
            raise ValueError(f"unknown dialect {dialect!r}")
        self.dialect: Dialect = dialect
        self.host = host
        self.port = port
        self.responder: Responder | None = None
        self.requests: list[JSON] = []
        self.violations: list[str] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._serials = itertools.count(1)
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        if self._httpd is None:
            self._httpd = _HTTPServer((self.host, self.port), self)
            self.port = int(self._httpd.server_address[1])
            self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                            name=f"fake-llm-{self.dialect}-{self.port}", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("FakeLLMServer is not started")
        root = f"http://{self.host}:{self.port}"
        return f"{root}/v1" if self.dialect == "openai" else root

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    @property
    def remaining(self) -> int:
        """How many scripted replies are still queued."""
        with self._lock:
            return len(self._queue)

    # -- used by the handler -----------------------------------------------------------------------

    def _record(self, path: str, headers: dict[str, str], body: Any) -> int:
        with self._lock:
            self.requests.append({"path": path, "headers": headers, "body": body})
            return len(self.requests) - 1

    def _violate(self, message: str) -> None:
        with self._lock:
            self.violations.append(message)

    def _next_reply(self, body: JSON) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            responder = self.responder
        if responder is None:
            return Reply.error(500, EXHAUSTED)
        try:
            return responder(body)
        except Exception as exc:
            self._violate(f"responder raised {exc!r}")
            return Reply.error(500, f"fake server: responder raised {exc!r}")

    def _turn(self, reply: Reply, body: JSON) -> _Turn:
        with self._lock:
            ids = [c.id if c.id is not None else f"call_{next(self._ids)}" for c in reply.calls]
            serial = next(self._serials)
        if reply.usage is not None:
            prompt, completion = reply.usage
        else:
            prompt = max(1, len(json.dumps(body.get("messages"))) // 4)
            produced = len(reply.content) + sum(len(c.name) + len(c.arguments) for c in reply.calls)
            completion = max(1, produced // 4)
        model = body.get("model")
        return _Turn(reply, model if isinstance(model, str) else MODEL_ID, ids, prompt, completion, serial)


# ---------------------------------------------------------------------------------------------------
# CLI


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content
                       if isinstance(p, dict) and p.get("type") == "text")
    return ""


def echo_responder(body: JSON) -> Reply:
    """Answer with ``"echo: "`` + the text of the last user message."""
    messages = body.get("messages")
    users: Iterable[Any] = (m for m in messages if isinstance(m, dict) and m.get("role") == "user") \
        if isinstance(messages, list) else ()
    last = ""
    for msg in users:
        last = _text_of(msg.get("content"))
    return Reply.text(f"echo: {last}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m swebash_ai.testing.fake_server", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dialect", choices=["openai", "anthropic"], default="openai")
    parser.add_argument("--script", help="JSON file: a list of replies (see Reply.from_json)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--echo", action="store_true", help="after the script, echo the last user message")
    args = parser.parse_args(argv)
    server = FakeLLMServer(cast(Dialect, args.dialect), host=args.host, port=args.port)
    if args.script:
        with open(args.script, encoding="utf-8") as fh:
            script = json.load(fh)
        if not isinstance(script, list):
            parser.error("the script must be a JSON list")
        server.enqueue(*(Reply.from_json(entry) for entry in script))
    if args.echo:
        server.responder = echo_responder
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    server.start()
    print(server.base_url, flush=True)
    while not stop.wait(0.2):
        pass
    server.stop()
    for problem in server.violations:
        print(f"violation: {problem}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
