"""A scripted fake LLM server on loopback, for tests and benchmarks (stdlib only).

It speaks real HTTP/1.1 (+ server-sent events) in three dialects, so the real ``openai.AsyncOpenAI`` client
and litellm's real HTTP clients can be pointed at it and nothing ever leaves 127.0.0.1:

* ``dialect="openai"``: ``POST …/chat/completions`` (``stream=true``: ``chat.completion.chunk`` events
  ending with ``data: [DONE]``; otherwise one ``chat.completion`` JSON) and ``GET …/models`` (``models``).
  ``base_url`` is ``http://127.0.0.1:PORT/v1``.
* ``dialect="anthropic"``: ``POST …/messages`` (``stream=true``: message_start, ping,
  content_block_start/delta/stop per block, message_delta, message_stop; otherwise one message JSON).
  ``base_url`` is ``http://127.0.0.1:PORT``; both ``/v1/messages`` and ``/messages`` are served.
* ``dialect="ollama"``: Ollama's native ``POST /api/chat`` (streamed as newline-delimited JSON unless
  ``"stream": false``, as Ollama does), ``POST /api/show`` (a model whose template supports tools) and
  ``GET /api/tags``. ``base_url`` is ``http://127.0.0.1:PORT``.
* ``dialect="gemini"``: Google AI Studio's ``POST …/models/MODEL:streamGenerateContent`` (and
  ``:generateContent``), for recorded streams (``Reply.replay``) and errors only. ``base_url`` is
  ``http://127.0.0.1:PORT/v1beta``.

Every POST is answered by the next queued :class:`Reply` (``enqueue``); when the queue is empty the
optional ``responder(request_body) -> Reply`` is asked; without one the answer is a 500 whose message
is ``"fake server: script exhausted"``. Replies are text (streamed in ``chunk_size`` pieces), tool calls
(ids, names and arguments optionally fragmented in ``split``-character pieces, keyed by index), HTTP
errors in the dialect's error JSON (with ``Retry-After`` when asked), or a "broken" stream whose socket
is shut down after a few chunks, so clients see an incomplete chunked body, never a clean end.
Misbehaviours for fault tests: a stream that ends cleanly without its end marker (``Reply.truncated``,
optionally cutting tool-call arguments), an event that is not JSON (``Reply.bad_event``), a body that is
not the API at all (``Reply.raw``: an HTML page, plain text, odd JSON, any status) and a request that is
never answered (``Reply.hang``). A recorded stream is replayed byte-exact (``Reply.replay``), one event
or any number of bytes (one: a byte at a time) per write.

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
import re
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType, TracebackType
from typing import Any, Self, cast

from swebash_ai.testing.replies import (  # noqa: F401 - re-exported for scripts and tests
    EXHAUSTED,
    JSON,
    MODEL_ID,
    Dialect,
    Reply,
    Responder,
    ToolCall,
    ToolCallSpec,
    Turn,
    anthropic_message,
    anthropic_stream,
    cut_at,
    error_body,
    ollama_message,
    ollama_stream,
    openai_completion,
    openai_stream,
    pieces,
    stall_at,
)

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


def check_ollama_messages(messages: Any) -> list[str]:
    """Shape errors in an Ollama ``messages`` list: tool calls there carry no ids to match up, so a tool
    result must follow an assistant message that made calls."""
    if not isinstance(messages, list):
        return ["messages is not a list"]
    out: list[str] = []
    calls_open = False
    for j, msg in enumerate(messages):
        if not isinstance(msg, dict) or msg.get("role") not in ("system", "user", "assistant", "tool"):
            out.append(f"messages[{j}] is not a message with a known role")
            continue
        if msg["role"] == "assistant":
            calls_open = bool(msg.get("tool_calls"))
        elif msg["role"] == "tool" and not calls_open:
            out.append(f"messages[{j}] is a tool result with no tool call before it")
        elif msg["role"] == "user":
            calls_open = False
    return out


def check_gemini_contents(contents: Any) -> list[str]:
    """Gemini's ``contents``: a list of turns, each with a role of ``user`` or ``model`` and a list of parts."""
    if not isinstance(contents, list):
        return ["contents is not a list"]
    return [f"contents[{j}] is not a turn with a role and parts" for j, turn in enumerate(contents)
            if not (isinstance(turn, dict) and turn.get("role") in ("user", "model", "function", "tool")
                    and isinstance(turn.get("parts"), list))]


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
    disable_nagle_algorithm = True  # small writes (a replay byte by byte) leave one by one, not coalesced

    @property
    def owner(self) -> FakeLLMServer:
        return cast(_HTTPServer, self.server).owner

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request stderr log."""

    def do_GET(self) -> None:
        owner = self.owner
        owner._record(self.path, {k.lower(): v for k, v in self.headers.items()}, None)
        if self.path.split("?")[0].rstrip("/").endswith("/models") and owner.models is None:
            self._send_json(404, error_body(owner.dialect, 404, "fake server: no model list here"))
            return
        if self.path.split("?")[0].rstrip("/").endswith("/models"):
            assert owner.models is not None
            data: list[JSON] = [{"id": name, "object": "model", "created": 0, "owned_by": "fake"}
                                if owner.dialect == "openai" else
                                {"type": "model", "id": name, "display_name": name,
                                 "created_at": "2025-01-01T00:00:00Z"} for name in owner.models]
            first, last = (owner.models[0], owner.models[-1]) if owner.models else (None, None)
            self._send_json(200, {"object": "list", "data": data, "has_more": False,
                                  "first_id": first, "last_id": last})
            return
        if self.path.split("?")[0] == "/api/tags":  # Ollama's own model list (it also serves /v1)
            self._send_json(200, {"models": [{"name": MODEL_ID, "model": MODEL_ID}]})
            return
        owner._violate(f"unexpected request GET {self.path}")
        self._send_json(404, error_body(owner.dialect, 404, f"fake server: no route GET {self.path}"))

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
            self._send_json(400, error_body(owner.dialect, 400, "fake server: body is not a JSON object"))
            return
        route = self.path.split("?")[0].rstrip("/")
        if owner.dialect == "ollama" and route == "/api/show":
            self._send_json(200, {"template": "{{ if .Tools }}tools{{ end }}", "capabilities": ["completion", "tools"],
                                  "model_info": {"llama.context_length": 32768}})
            return
        if owner.dialect == "gemini":
            self._gemini(route, body, number)
            return
        suffix = {"openai": "/chat/completions", "anthropic": "/messages", "ollama": "/api/chat"}[owner.dialect]
        if not route.endswith(suffix):
            owner._violate(f"unexpected request POST {self.path} for the {owner.dialect} dialect")
            self._send_json(404, error_body(owner.dialect, 404, f"fake server: no route POST {self.path}"))
            return
        # Answered, but e.g. /v1/v1/messages is a config bug (Ollama's native API has no /v1 prefix).
        azure = owner.dialect == "openai" and re.fullmatch(r"/openai/deployments/[^/]+/chat/completions", route)
        if (route not in (suffix, "/v1" + suffix) and not azure) or (owner.dialect == "ollama" and route != suffix):
            owner._violate(f"unusual path POST {self.path} (a real server would answer 404)")
        check = {"openai": check_openai_messages, "anthropic": check_anthropic_messages,
                 "ollama": check_ollama_messages}[owner.dialect]
        for problem in check(body.get("messages")):
            owner._violate(f"request {number} ({self.path}): {problem}")
        reply = owner._next_reply(body)
        if reply.kind == "hang":
            owner._stopping.wait(reply.delay)
            self.close_connection = True
            return
        if reply.kind == "raw":
            self._start(reply.status, reply.content_type, {"Content-Length": str(len(reply.body))})
            self._write(reply.body)
            return
        if reply.kind == "replay":
            self._send_stream([w for w in reply.replay_writes() if w], None, reply.delay, reply.content_type)
            return
        if reply.kind == "error":
            time.sleep(reply.delay)
            headers = {} if reply.retry_after is None else {"Retry-After": f"{reply.retry_after:g}"}
            self._send_json(reply.status, error_body(owner.dialect, reply.status, reply.message), headers)
            return
        turn = owner._turn(reply, body)
        abort_after = None
        if body.get("stream", owner.dialect == "ollama"):  # Ollama streams unless told not to
            opens: list[int] = []  # where each call opens, then where the closing frames start (not Ollama)
            if owner.dialect == "ollama":
                frames, prefix = ollama_stream(turn)
                marker, bad = 1, reply.message.encode() + b"\n"  # the "done" line
            elif owner.dialect == "openai":
                options = body.get("stream_options")
                include = isinstance(options, dict) and bool(options.get("include_usage"))
                frames, prefix = openai_stream(turn, include, opens)
                # the finish chunk, the usage chunk, [DONE]
                marker, bad = 3 if include else 2, b"data: " + reply.message.encode() + b"\n\n"
            else:
                frames, prefix = anthropic_stream(turn, opens)
                marker, bad = 2, b"data: " + reply.message.encode() + b"\n\n"  # message_delta, message_stop
            shown = prefix + min(reply.after_chunks, len(pieces(reply.content, reply.chunk_size)))
            if reply.kind == "broken":  # never reach the closing events, whatever after_chunks says
                abort_after = shown
            elif reply.kind == "truncated":
                frames = frames[: max(0, len(frames) - marker - reply.drop)]
            elif reply.kind == "bad_event":
                frames.insert(shown, bad)
            elif opens and reply.calls:
                abort_after = cut_at(reply, opens[:-1], opens[-1])
            stalls = stall_at(reply, opens[:-1], opens[-1]) if opens and reply.calls else {}
            kind = "application/x-ndjson" if owner.dialect == "ollama" else "text/event-stream; charset=utf-8"
            self._send_stream(frames, abort_after, reply.delay, kind, stalls=stalls)
            return
        payload = {"openai": openai_completion, "anthropic": anthropic_message,
                   "ollama": ollama_message}[owner.dialect](turn)
        if reply.kind == "broken":  # promise the whole body, deliver half of it, hang up
            data = json.dumps(payload).encode()
            self._start(200, "application/json", {"Content-Length": str(len(data))})
            self._write(data[: len(data) // 2])
            self._abort()
            return
        self._send_json(200, payload)

    def _gemini(self, route: str, body: JSON, number: int) -> None:
        """Google AI Studio's generate routes: recorded streams and errors only (no scripted text)."""
        owner = self.owner
        if not (route.startswith("/v1beta/models/") and route.endswith((":streamGenerateContent", ":generateContent"))):
            owner._violate(f"unexpected request POST {self.path} for the gemini dialect")
            self._send_json(404, error_body("gemini", 404, f"fake server: no route POST {self.path}"))
            return
        for problem in check_gemini_contents(body.get("contents")):
            owner._violate(f"request {number} ({self.path}): {problem}")
        reply = owner._next_reply(body)
        if reply.kind == "replay":
            self._send_stream([w for w in reply.replay_writes() if w], None, reply.delay, reply.content_type)
        elif reply.kind == "error":
            self._send_json(reply.status, error_body("gemini", reply.status, reply.message))
        else:
            owner._violate(f"the gemini dialect serves replays and errors, not {reply.kind}")
            self._send_json(500, error_body("gemini", 500, "fake server: gemini serves replays only"))

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

    def _send_stream(self, frames: list[bytes], abort_after: int | None, delay: float,
                     content_type: str = "text/event-stream; charset=utf-8",
                     stalls: dict[int, float] | None = None) -> None:
        self._start(200, content_type,
                    {"Cache-Control": "no-cache", "Transfer-Encoding": "chunked"})
        for i, frame in enumerate(frames):
            if abort_after is not None and i >= abort_after:
                self._abort()
                return
            if i and delay > 0:
                time.sleep(delay)
            if not self._write(b"%x\r\n%s\r\n" % (len(frame), frame)):
                return
            if stalls and i in stalls:
                self.owner._stall(stalls[i])
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
        if dialect not in ("openai", "anthropic", "ollama", "gemini"):
            raise ValueError(f"unknown dialect {dialect!r}")
        self.dialect: Dialect = dialect
        self.host = host
        self.port = port
        self.responder: Responder | None = None
        self.models: list[str] | None = [MODEL_ID]
        """What ``GET …/models`` lists; ``None``: that route answers 404, as on servers without a model list."""
        self.requests: list[JSON] = []
        self.violations: list[str] = []
        self.stalls: list[bool] = []
        """One entry per stall (``Reply.tool_calls(stall=...)``) that ended: ``True`` when :meth:`resume` ended
        it, ``False`` when its time ran out."""
        self._resume = threading.Event()
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._serials = itertools.count(1)
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()  # ends hanging replies

    def start(self) -> Self:
        if self._httpd is None:
            self._stopping.clear()
            self._httpd = _HTTPServer((self.host, self.port), self)
            self.port = int(self._httpd.server_address[1])
            self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                            name=f"fake-llm-{self.dialect}-{self.port}", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        self._stopping.set()
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
        return {"openai": f"{root}/v1", "gemini": f"{root}/v1beta"}.get(self.dialect, root)

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

    def resume(self) -> None:
        """End the current (or the next) stall now: a test proves that something happened while the server
        was still holding the rest of a response back (see :attr:`stalls`)."""
        self._resume.set()

    def _stall(self, seconds: float) -> None:
        resumed = self._resume.wait(seconds)
        self._resume.clear()
        with self._lock:
            self.stalls.append(resumed)

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

    def _turn(self, reply: Reply, body: JSON) -> Turn:
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
        return Turn(reply, model if isinstance(model, str) else MODEL_ID, ids, prompt, completion, serial)


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
    parser.add_argument("--dialect", choices=["openai", "anthropic", "ollama", "gemini"], default="openai")
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
