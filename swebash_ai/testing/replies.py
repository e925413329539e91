"""What the fake LLM server answers: scripted :class:`Reply` objects, and each rendered in the wire format
of a dialect (OpenAI chat completions or Anthropic messages, streamed as server-sent events or whole;
Ollama's native chat, streamed as newline-delimited JSON or whole).

Split from :mod:`swebash_ai.testing.fake_server`, which serves them over HTTP and checks the requests.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

Dialect = Literal["openai", "anthropic", "ollama", "gemini"]
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

    kind: Literal["text", "tool_calls", "error", "broken", "truncated", "bad_event", "raw", "hang", "replay"]
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
    drop: int = 0
    body: bytes = b""
    content_type: str = ""
    stall: tuple[int, float] | None = None
    cut: int | None = None
    reasoning: str = ""
    """Reasoning the model streams before its answer (OpenAI-compatible servers: ``delta.reasoning_content``)."""
    cached_tokens: int = 0
    """Of the prompt tokens, how many the server says it read from its prompt cache (OpenAI
    ``prompt_tokens_details.cached_tokens``; Anthropic ``cache_read_input_tokens``, outside ``input_tokens``)."""

    @classmethod
    def text(cls, text: str, *, chunk_size: int = 4, delay: float = 0.0,
             usage: tuple[int, int] | None = None, cached_tokens: int = 0, reasoning: str = "") -> Reply:
        """Plain text, streamed in ``chunk_size``-character deltas (0: one delta); ``reasoning`` first (openai)."""
        return cls("text", content=text, chunk_size=chunk_size, delay=delay, usage=usage,
                   cached_tokens=cached_tokens, reasoning=reasoning)

    @classmethod
    def tool_calls(cls, calls: Sequence[ToolCallSpec], *, text: str = "", split: int = 0, chunk_size: int = 4,
                   interleave: bool = False, delay: float = 0.0,
                   usage: tuple[int, int] | None = None, stall: tuple[int, float] | None = None,
                   cut: int | None = None, cached_tokens: int = 0) -> Reply:
        """Tool calls ``(name, arguments[, id])``; a dict is JSON-dumped, a string is sent verbatim.

        ``split=N`` sends id, name and arguments in N-character fragments (anthropic: arguments only,
        its protocol sends id and name whole); ``interleave=True`` alternates fragments of different
        calls round-robin (the real API sends them one call after another, which is the default).
        ``stall=(k, seconds)``: once call ``k`` (0-based) is complete on the wire (right after the frame that
        opens call ``k + 1``, which is how a client learns it; for the last call, before the closing frames),
        the stream pauses ``seconds`` (or until ``FakeLLMServer.resume()``): a model still writing the rest of
        its answer. ``cut=k``: the connection
        then drops (after the stall, if any), so the client sees the stream fail with call ``k`` complete.
        """
        parsed: list[ToolCall] = []
        for spec in calls:
            name, args = spec[0], spec[1]
            call_id = spec[2] if len(spec) > 2 else None
            parsed.append(ToolCall(name, args if isinstance(args, str) else json.dumps(args), call_id))
        return cls("tool_calls", content=text, calls=tuple(parsed), split=split, chunk_size=chunk_size,
                   interleave=interleave, delay=delay, usage=usage, stall=stall, cut=cut,
                   cached_tokens=cached_tokens)

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
    def truncated(cls, text: str = "", calls: Sequence[ToolCallSpec] = (), *, drop: int = 0, split: int = 0,
                  chunk_size: int = 4) -> Reply:
        """A stream that ends cleanly (a proper end of the body) without its end marker: no finish reason
        nor ``[DONE]`` (openai), no ``message_delta``/``message_stop`` (anthropic), no ``done`` line (ollama).
        ``drop`` also leaves out that many frames before the marker: with ``split``, the last fragments of
        the tool calls' arguments (their JSON is then cut)."""
        base = cls.tool_calls(calls, text=text, split=split, chunk_size=chunk_size) if calls else \
            cls.text(text, chunk_size=chunk_size)
        return dataclasses.replace(base, kind="truncated", drop=drop)

    @classmethod
    def bad_event(cls, text: str, event: str = "<html>oops</html>", *, after_chunks: int = 2,
                  chunk_size: int = 4) -> Reply:
        """A stream of ``text`` with ``event`` (not JSON) sent as an event after ``after_chunks`` deltas."""
        return cls("bad_event", content=text, after_chunks=after_chunks, chunk_size=chunk_size, message=event)

    @classmethod
    def raw(cls, body: bytes | str, *, status: int = 200, content_type: str = "text/html; charset=utf-8") -> Reply:
        """Exactly this body, whatever was asked: a proxy's login page, a web server's 404, odd JSON."""
        data = body.encode() if isinstance(body, str) else body
        return cls("raw", status=status, body=data, content_type=content_type)

    @classmethod
    def replay(cls, body: bytes, *, content_type: str = "text/event-stream; charset=utf-8", write_size: int = 0,
               delay: float = 0.0) -> Reply:
        """A recorded stream, byte-exact, whatever was asked: a provider's real answer, as a 200 with a chunked
        body. ``write_size=0`` writes one event at a time (up to each blank line, or each line of
        newline-delimited JSON); ``N`` writes ``N`` bytes at a time (``1``: a byte at a time, so that a
        character of several bytes straddles writes); ``delay`` seconds pass between writes."""
        return cls("replay", body=body, content_type=content_type, chunk_size=write_size, delay=delay)

    def replay_writes(self) -> list[bytes]:
        """The pieces a :meth:`replay` is written in."""
        if self.chunk_size > 0:
            return [self.body[i : i + self.chunk_size] for i in range(0, len(self.body), self.chunk_size)]
        separator = b"\n" if "ndjson" in self.content_type else b"\n\n"
        parts = self.body.split(separator)
        out = [part + separator for part in parts[:-1]]
        return [*out, parts[-1]] if parts[-1] else out

    @classmethod
    def hang(cls, seconds: float = 30.0) -> Reply:
        """Accept the request and send nothing for ``seconds`` (or until the server stops), then hang up."""
        return cls("hang", delay=seconds)

    @classmethod
    def from_json(cls, obj: Any) -> Reply:
        """Build a reply from a script entry: ``{"text": …}``, ``{"tool_calls": [[name, args, id?], …]}``
        (optionally with ``"text"``), ``{"error": 429, "message": …, "retry_after": 0}`` or
        ``{"broken": "partial text", "after_chunks": 2}``, ``{"truncated": …}``, ``{"bad_event": …}``,
        ``{"raw": …}``, ``{"hang": seconds}``, ``{"replay": "file.sse", "write_size": 1}`` (see those class
        methods); optional ``chunk_size``, ``split``, ``interleave``, ``delay``, ``usage: [prompt,
        completion(, cached)]``, ``stall: [call, seconds]``, ``cut: call``."""
        if not isinstance(obj, dict):
            raise ValueError(f"a script entry must be a JSON object, got {obj!r}")
        delay = float(obj.get("delay", 0.0))
        chunk = int(obj.get("chunk_size", 4))
        usage_raw = obj.get("usage")
        usage = (int(usage_raw[0]), int(usage_raw[1])) if usage_raw is not None else None
        cached = int(usage_raw[2]) if usage_raw is not None and len(usage_raw) > 2 else 0
        stall_raw = obj.get("stall")
        stall = (int(stall_raw[0]), float(stall_raw[1])) if stall_raw is not None else None
        if "error" in obj:
            retry = obj.get("retry_after")
            return cls.error(int(obj["error"]), str(obj.get("message", "error")),
                             retry_after=None if retry is None else float(retry), delay=delay)
        if "truncated" in obj:  # {"truncated": "text", "tool_calls": [...], "drop": 0, "split": 0}
            calls = [cast(ToolCallSpec, tuple(c)) for c in obj.get("tool_calls", [])]
            return cls.truncated(str(obj["truncated"]), calls, drop=int(obj.get("drop", 0)),
                                 split=int(obj.get("split", 0)), chunk_size=chunk)
        if "bad_event" in obj:  # {"bad_event": "text", "event": "<html>", "after_chunks": 2}
            return cls.bad_event(str(obj["bad_event"]), str(obj.get("event", "<html>oops</html>")),
                                 after_chunks=int(obj.get("after_chunks", 2)), chunk_size=chunk)
        if "raw" in obj:  # {"raw": "<html>...", "status": 200, "content_type": "text/html"}
            return cls.raw(str(obj["raw"]), status=int(obj.get("status", 200)),
                           content_type=str(obj.get("content_type", "text/html; charset=utf-8")))
        if "hang" in obj:  # {"hang": seconds}
            return cls.hang(float(obj["hang"]))
        if "replay" in obj:  # {"replay": "recorded.sse", "write_size": 1, "content_type": "application/x-ndjson"}
            with open(str(obj["replay"]), "rb") as fh:
                body = fh.read()
            kind = "application/x-ndjson" if str(obj["replay"]).endswith(".ndjson") else "text/event-stream"
            return cls.replay(body, content_type=str(obj.get("content_type", kind)),
                              write_size=int(obj.get("write_size", 0)), delay=delay)
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
                                  delay=delay, usage=usage, stall=stall,
                                  cut=None if obj.get("cut") is None else int(obj["cut"]), cached_tokens=cached)
        if "text" in obj:
            return cls.text(str(obj["text"]), chunk_size=chunk, delay=delay, usage=usage, cached_tokens=cached)
        raise ValueError(f"unknown script entry (needs text, tool_calls, error, broken, truncated, bad_event, raw, "
                         f"hang or replay): {obj!r}")


# ---------------------------------------------------------------------------------------------------
# Rendering replies


def pieces(text: str, size: int) -> list[str]:
    if not text:
        return []
    if size <= 0:
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


def round_robin(groups: list[list[JSON]]) -> Iterator[JSON]:
    for row in itertools.zip_longest(*groups):
        yield from (item for item in row if item is not None)


@dataclass
class Turn:
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


def openai_usage(turn: Turn) -> JSON:
    usage: JSON = {"prompt_tokens": turn.prompt_tokens, "completion_tokens": turn.completion_tokens,
                   "total_tokens": turn.prompt_tokens + turn.completion_tokens}
    if turn.reply.cached_tokens:  # OpenAI: cached tokens are part of prompt_tokens
        usage["prompt_tokens_details"] = {"cached_tokens": turn.reply.cached_tokens, "audio_tokens": 0}
    return usage


def anthropic_usage(turn: Turn, output_tokens: int) -> JSON:
    """Anthropic counts cache reads and writes outside ``input_tokens``: the three add up to the prompt."""
    cached = min(turn.reply.cached_tokens, turn.prompt_tokens)
    return {"input_tokens": turn.prompt_tokens - cached, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": cached, "output_tokens": output_tokens}


def _complete_at(k: int, opens: Sequence[int], closing: int) -> int:
    """The frame after which call ``k`` is complete for a client: the one opening the next call."""
    return opens[k + 1] if k + 1 < len(opens) else closing - 1


def stall_at(reply: Reply, opens: Sequence[int], closing: int) -> dict[int, float]:
    """``{frame: seconds}`` to pause after, for ``reply.stall``: ``opens[k]`` is the frame that opens call
    ``k``, ``closing`` the first frame after the calls."""
    if reply.stall is None:
        return {}
    k, seconds = reply.stall
    return {_complete_at(k, opens, closing): seconds}


def cut_at(reply: Reply, opens: Sequence[int], closing: int) -> int | None:
    """How many frames to send before dropping the connection, for ``reply.cut``."""
    return None if reply.cut is None else _complete_at(reply.cut, opens, closing) + 1


def openai_stream(turn: Turn, include_usage: bool, opens: list[int] | None = None) -> tuple[list[bytes], int]:
    """SSE frames for an OpenAI stream, and how many frames precede the first text delta.

    ``opens`` (when given) receives the frame number where each call opens, and then that of the closing
    frame (for :func:`stall_at`)."""
    reply = turn.reply
    base: JSON = {"id": f"chatcmpl-fake{turn.serial}", "object": "chat.completion.chunk",
                  "created": int(time.time()), "model": turn.model, "system_fingerprint": None}

    def chunk(delta: JSON, finish: str | None = None) -> JSON:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"reasoning_content": piece}) for piece in pieces(reply.reasoning, reply.chunk_size)]
    before_text = len(events)
    events += [chunk({"content": piece}) for piece in pieces(reply.content, reply.chunk_size)]
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
                     for piece in pieces(cid, n)]
            group[0]["type"] = "function"
            group += [{"index": index, "function": {"name": piece}} for piece in pieces(call.name, n)]
            group += [{"index": index, "function": {"arguments": p}} for p in pieces(call.arguments, n)]
        groups.append(group)
    deltas = list(round_robin(groups) if reply.interleave else itertools.chain.from_iterable(groups))
    if opens is not None:
        seen: set[int] = set()
        for n, delta in enumerate(deltas):
            if delta["index"] not in seen:
                seen.add(delta["index"])
                opens.append(len(events) + n)
        opens.append(len(events) + len(deltas))
    events += [chunk({"tool_calls": [delta]}) for delta in deltas]
    final = chunk({}, turn.finish_reason)
    if not include_usage:
        final["usage"] = openai_usage(turn)
    events.append(final)
    if include_usage:
        events.append({**base, "choices": [], "usage": openai_usage(turn)})
    frames = [f"data: {json.dumps(e)}\n\n".encode() for e in events]
    frames.append(b"data: [DONE]\n\n")
    return frames, before_text


def openai_completion(turn: Turn) -> JSON:
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
            "usage": openai_usage(turn)}


def anthropic_input(arguments: str) -> Any:
    try:
        return json.loads(arguments) if arguments else {}
    except ValueError:
        return arguments  # invalid on purpose: hand it over raw


def anthropic_stream(turn: Turn, opens: list[int] | None = None) -> tuple[list[bytes], int]:
    """SSE frames for an Anthropic Messages stream, and how many frames precede the first text delta
    (``opens``: as for :func:`openai_stream`)."""
    reply = turn.reply
    events: list[JSON] = [
        {"type": "message_start", "message": {
            "id": f"msg_fake{turn.serial}", "type": "message", "role": "assistant", "model": turn.model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": anthropic_usage(turn, 1)}},
    ]
    index = 0
    if reply.content or not reply.calls:
        events.append({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "text", "text": ""}})
        events.append({"type": "ping"})
        events += [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}
                   for piece in pieces(reply.content, reply.chunk_size)]
        events.append({"type": "content_block_stop", "index": 0})
        index = 1
    for call, cid in zip(reply.calls, turn.ids, strict=True):
        if opens is not None:
            opens.append(len(events))
        events.append({"type": "content_block_start", "index": index,
                       "content_block": {"type": "tool_use", "id": cid, "name": call.name, "input": {}}})
        events += [{"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": piece}}
                   for piece in pieces(call.arguments, reply.split)]
        events.append({"type": "content_block_stop", "index": index})
        index += 1
    if opens is not None:
        opens.append(len(events))
    events.append({"type": "message_delta",
                   "delta": {"stop_reason": "tool_use" if reply.calls else "end_turn", "stop_sequence": None},
                   "usage": {"output_tokens": turn.completion_tokens}})
    events.append({"type": "message_stop"})
    frames = [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]
    return frames, 3


def anthropic_message(turn: Turn) -> JSON:
    reply = turn.reply
    with_text = bool(reply.content) or not reply.calls
    content: list[JSON] = [{"type": "text", "text": reply.content}] if with_text else []
    content += [{"type": "tool_use", "id": cid, "name": c.name, "input": anthropic_input(c.arguments)}
                for c, cid in zip(reply.calls, turn.ids, strict=True)]
    return {"id": f"msg_fake{turn.serial}", "type": "message", "role": "assistant", "model": turn.model,
            "content": content, "stop_reason": "tool_use" if reply.calls else "end_turn",
            "stop_sequence": None,
            "usage": anthropic_usage(turn, turn.completion_tokens)}


def _ollama_base(turn: Turn) -> JSON:
    return {"model": turn.model, "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def _ollama_calls(turn: Turn) -> list[JSON]:
    # Ollama sends each call whole, arguments as an object, and no id (clients make one up).
    return [{"function": {"name": c.name, "arguments": anthropic_input(c.arguments)}} for c in turn.reply.calls]


def _ollama_done(turn: Turn) -> JSON:
    return {"done": True, "done_reason": "stop", "total_duration": 1000, "prompt_eval_count": turn.prompt_tokens,
            "eval_count": turn.completion_tokens}


def ollama_stream(turn: Turn) -> tuple[list[bytes], int]:
    """NDJSON lines of an Ollama ``/api/chat`` stream, and how many lines precede the first text delta."""
    reply, base = turn.reply, _ollama_base(turn)
    lines: list[JSON] = [{**base, "message": {"role": "assistant", "content": piece}, "done": False}
                         for piece in pieces(reply.content, reply.chunk_size)]
    if reply.calls:
        lines.append({**base, "message": {"role": "assistant", "content": "", "tool_calls": _ollama_calls(turn)},
                      "done": False})
    lines.append({**base, "message": {"role": "assistant", "content": ""}, **_ollama_done(turn)})
    return [json.dumps(line).encode() + b"\n" for line in lines], 0


def ollama_message(turn: Turn) -> JSON:
    message: JSON = {"role": "assistant", "content": turn.reply.content}
    if turn.reply.calls:
        message["tool_calls"] = _ollama_calls(turn)
    return {**_ollama_base(turn), "message": message, **_ollama_done(turn)}


def error_body(dialect: Dialect, status: int, message: str) -> JSON:
    if dialect == "ollama":
        return {"error": message}
    if dialect == "gemini":
        state = "INVALID_ARGUMENT" if status < 500 else "INTERNAL"
        return {"error": {"code": status, "message": message, "status": state}}
    kind = _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    if dialect == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    code = "rate_limit_exceeded" if status == 429 else None
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
