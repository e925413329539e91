"""The scripted fake LLM server, driven by the real openai and litellm clients over loopback."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
import litellm  # the env var must be set first

from swebash_ai.testing.fake_server import (
    EXHAUSTED,
    FakeLLMServer,
    Reply,
    check_anthropic_messages,
    check_ollama_messages,
    check_openai_messages,
)

litellm.suppress_debug_info = True

TOOLS = [
    {"type": "function", "function": {
        "name": name, "description": name,
        "parameters": {"type": "object", "properties": {key: {"type": "string"}}, "required": [key]}}}
    for name, key in (("read_file", "path"), ("run_command", "command"))
]
USER = [{"role": "user", "content": "hi"}]


@pytest.fixture
def oai() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(dialect="openai") as server:
        yield server


@pytest.fixture
def ant() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(dialect="anthropic") as server:
        yield server


def client(server: FakeLLMServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)


async def collect(stream: Any) -> tuple[str, dict[int, dict[str, str]], list[str | None], list[Any]]:
    """Reassemble an OpenAI-shaped stream: text, tool calls by index, finish reasons, usages."""
    text, calls, finishes, usages = "", {}, [], []
    async for chunk in stream:
        if getattr(chunk, "usage", None):
            usages.append(chunk.usage)
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        finishes.append(choice.finish_reason)
        text += choice.delta.content or ""
        for tc in choice.delta.tool_calls or []:
            acc = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
            acc["id"] += tc.id or ""
            if tc.function is not None:
                acc["name"] += tc.function.name or ""
                acc["arguments"] += tc.function.arguments or ""
    return text, calls, finishes, usages


# -- openai dialect, real AsyncOpenAI client ---------------------------------------------------------


async def test_openai_text_streams_in_small_deltas(oai: FakeLLMServer) -> None:
    oai.enqueue(Reply.text("Hello world", chunk_size=3, usage=(11, 7)))
    stream = await client(oai).chat.completions.create(
        model="fake-model", messages=USER, stream=True, stream_options={"include_usage": True})
    text, calls, finishes, usages = await collect(stream)
    assert text == "Hello world"
    assert calls == {}
    assert finishes[-1] == "stop" and finishes.count(None) >= 4  # role + 4 text deltas
    assert usages[-1].prompt_tokens == 11 and usages[-1].completion_tokens == 7
    assert oai.requests[0]["path"] == "/v1/chat/completions"
    assert oai.requests[0]["body"]["messages"] == USER
    assert oai.requests[0]["headers"]["authorization"] == "Bearer x"
    assert oai.violations == []


@pytest.mark.parametrize("interleave", [False, True])
async def test_openai_split_tool_calls_reassemble_by_index(oai: FakeLLMServer, interleave: bool) -> None:
    oai.enqueue(Reply.tool_calls(
        [("read_file", {"path": "a.txt"}), ("run_command", '{"command": "ls"', "call_custom")],
        text="Let me look.", split=4, interleave=interleave))
    stream = await client(oai).chat.completions.create(model="fake-model", messages=USER, stream=True)
    text, calls, finishes, _ = await collect(stream)
    assert text == "Let me look."
    assert calls == {
        0: {"id": "call_0", "name": "read_file", "arguments": '{"path": "a.txt"}'},
        1: {"id": "call_custom", "name": "run_command", "arguments": '{"command": "ls"'},  # verbatim, invalid
    }
    assert finishes[-1] == "tool_calls"
    assert len(finishes) > 12  # really fragmented


async def test_openai_non_streaming_completion(oai: FakeLLMServer) -> None:
    oai.enqueue(Reply.tool_calls([("read_file", {"path": "b"})], text="ok"))
    result = await client(oai).chat.completions.create(model="fake-model", messages=USER)
    choice = result.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content == "ok"
    call = choice.message.tool_calls[0]  # type: ignore[index]
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == (  # type: ignore[union-attr]
        "call_0", "read_file", {"path": "b"})
    assert result.usage is not None and result.usage.total_tokens > 0


async def test_openai_models_endpoint(oai: FakeLLMServer) -> None:
    models = await client(oai).models.list()
    assert [m.id for m in models.data] == ["fake-model"]


async def test_openai_errors(oai: FakeLLMServer) -> None:
    oai.enqueue(Reply.error(429, "slow down", retry_after=0), Reply.error(500, "boom"))
    with pytest.raises(openai.RateLimitError) as rate:
        await client(oai).chat.completions.create(model="fake-model", messages=USER, stream=True)
    assert rate.value.response.headers["retry-after"] == "0"
    assert "slow down" in str(rate.value)
    with pytest.raises(openai.InternalServerError, match="boom"):
        await client(oai).chat.completions.create(model="fake-model", messages=USER, stream=True)
    with pytest.raises(openai.InternalServerError, match=EXHAUSTED):
        await client(oai).chat.completions.create(model="fake-model", messages=USER)


async def test_openai_broken_stream_raises_in_client(oai: FakeLLMServer) -> None:
    oai.enqueue(Reply.broken("partial text that never ends", after_chunks=2))
    got: list[str] = []
    stream = await client(oai).chat.completions.create(model="fake-model", messages=USER, stream=True)
    with pytest.raises((httpx.HTTPError, openai.APIError)):
        async for chunk in stream:
            got.append(chunk.choices[0].delta.content or "")
    assert "".join(got) == "partial "


async def test_responder_answers_when_queue_is_empty(oai: FakeLLMServer) -> None:
    oai.responder = lambda body: Reply.text(f"turn {len(body['messages'])}", delay=0.01)
    oai.enqueue(Reply.text("scripted"))
    texts = []
    for _ in range(3):
        stream = await client(oai).chat.completions.create(model="fake-model", messages=USER, stream=True)
        texts.append((await collect(stream))[0])
    assert texts == ["scripted", "turn 1", "turn 1"]
    assert oai.remaining == 0


async def test_openai_unanswered_tool_call_is_a_violation(oai: FakeLLMServer) -> None:
    oai.responder = lambda body: Reply.text("ok")
    call = {"id": "call_9", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
    good = [*USER, {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_9", "content": "data"}]
    await client(oai).chat.completions.create(model="fake-model", messages=good)  # type: ignore[arg-type]
    assert oai.violations == []
    bad = [*USER, {"role": "assistant", "content": None, "tool_calls": [call]},
           {"role": "user", "content": "and?"}]
    result = await client(oai).chat.completions.create(model="fake-model", messages=bad)  # type: ignore[arg-type]
    assert result.choices[0].message.content == "ok"  # still answered normally
    assert len(oai.violations) == 1 and "call_9" in oai.violations[0]


def test_message_checkers() -> None:
    call = {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    assert check_openai_messages([{"role": "assistant", "tool_calls": [call]}]) != []
    assert check_openai_messages([{"role": "tool", "tool_call_id": "zz", "content": ""}]) != []
    use = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}
    ok = [{"role": "user", "content": "q"}, {"role": "assistant", "content": [use]},
          {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}]}]
    assert check_anthropic_messages(ok) == []
    assert len(check_anthropic_messages([*ok[:2], {"role": "user", "content": "no result"}])) == 1
    assert len(check_anthropic_messages([*ok, {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t9", "content": "r"}]}])) == 1


def test_ollama_message_checker() -> None:
    call = {"function": {"name": "f", "arguments": {}}}
    ok = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [call]},
          {"role": "tool", "content": "r"}]
    assert check_ollama_messages(ok) == []
    assert len(check_ollama_messages([{"role": "user", "content": "q"}, {"role": "tool", "content": "r"}])) == 1
    assert len(check_ollama_messages([{"role": "robot", "content": "q"}])) == 1


def test_ollama_native_chat_over_raw_http() -> None:
    """Ollama's own wire format: NDJSON lines when streaming (its default), one JSON otherwise, errors as
    {"error": ...}, and /api/show, /api/tags for the model."""
    with FakeLLMServer(dialect="ollama") as server:
        server.enqueue(Reply.tool_calls([("read_file", {"path": "a"})], text="Hi", chunk_size=1),
                       Reply.text("whole"), Reply.error(404, "model 'x' not found"))
        base = server.base_url
        with httpx.stream("POST", base + "/api/chat", json={"model": "m", "messages": USER}) as resp:
            assert resp.headers["content-type"] == "application/x-ndjson"
            lines = [json.loads(line) for line in resp.iter_lines() if line]
        assert [line["message"]["content"] for line in lines[:2]] == ["H", "i"]
        assert lines[2]["message"]["tool_calls"] == [{"function": {"name": "read_file", "arguments": {"path": "a"}}}]
        assert lines[-1]["done"] is True and lines[-1]["eval_count"] > 0 and not any(x["done"] for x in lines[:-1])
        whole = httpx.post(base + "/api/chat", json={"model": "m", "messages": USER, "stream": False}).json()
        assert whole["message"]["content"] == "whole" and whole["done"] is True
        error = httpx.post(base + "/api/chat", json={"model": "m", "messages": USER, "stream": False})
        assert error.status_code == 404 and error.json() == {"error": "model 'x' not found"}
        assert "tools" in httpx.post(base + "/api/show", json={"name": "m"}).json()["template"]
        assert httpx.get(base + "/api/tags").json()["models"][0]["name"] == "fake-model"
        assert server.violations == []
        httpx.post(base + "/v1/chat/completions", json={"model": "m", "messages": USER})
        assert server.violations  # the OpenAI route is not Ollama's native API


def test_reply_from_json() -> None:
    assert Reply.from_json({"text": "hi"}) == Reply.text("hi")
    tools = Reply.from_json({"tool_calls": [["run_command", {"command": "ls"}, "c1"]], "split": 2})
    assert tools.calls[0].arguments == '{"command": "ls"}' and tools.calls[0].id == "c1" and tools.split == 2
    error = Reply.from_json({"error": 429, "message": "m", "retry_after": 1})
    assert (error.kind, error.status, error.retry_after) == ("error", 429, 1.0)
    assert Reply.from_json({"broken": "x", "after_chunks": 1}).kind == "broken"
    with pytest.raises(ValueError):
        Reply.from_json({"nope": 1})


def test_a_replay_is_byte_exact_in_the_writes_asked(tmp_path: Path) -> None:
    """A recorded body comes back as it was, whatever the request; a byte at a time, each byte is a chunk of
    its own on the wire (so a character of several bytes straddles reads), and events stay whole otherwise."""
    body = "data: {\"t\": \"é🚀\"}\n\ndata: [DONE]\n\n".encode()
    assert Reply.replay(body).replay_writes() == [b'data: {"t": "\xc3\xa9\xf0\x9f\x9a\x80"}\n\n', b"data: [DONE]\n\n"]
    assert Reply.replay(b'{"a":1}\n{"b":2}', content_type="application/x-ndjson").replay_writes() == [
        b'{"a":1}\n', b'{"b":2}']
    with FakeLLMServer("openai") as server:
        server.enqueue(Reply.replay(body, write_size=1))
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            request = json.dumps({"model": "m", "messages": USER, "stream": True}).encode()
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(request), request))
            raw = b""
            while chunk := sock.recv(65536):
                raw += chunk
        head, _, chunked = raw.partition(b"\r\n\r\n")
        assert b"200 OK" in head and b"text/event-stream" in head
        sizes, data, rest = [], b"", chunked
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line, 16)
            sizes.append(size)
            data, rest = data + rest[:size], rest[size + 2 :]
        assert data == body and sizes == [1] * len(body) + [0]
    script = tmp_path / "rec.sse"
    script.write_bytes(body)
    loaded = Reply.from_json({"replay": str(script), "write_size": 1})
    assert (loaded.kind, loaded.body, loaded.chunk_size) == ("replay", body, 1)


# -- litellm, real clients, both dialects --------------------------------------------------------------


async def litellm_stream(server: FakeLLMServer, model: str, **kw: Any) -> Any:
    return await litellm.acompletion(model=model, api_base=server.base_url, api_key="x", messages=USER,
                                     tools=TOOLS, stream=True, num_retries=0, **kw)


@pytest.mark.parametrize("dialect,model", [("anthropic", "anthropic/claude-sonnet-4-5"),
                                           ("openai", "openai/fake-model"),
                                           ("ollama", "ollama_chat/fake-model")])
async def test_litellm_streams_text_and_tool_calls(dialect: str, model: str) -> None:
    with FakeLLMServer(dialect=dialect) as server:  # type: ignore[arg-type]
        server.enqueue(Reply.tool_calls(
            [("read_file", {"path": "a.txt"}), ("run_command", {"command": "ls -la"})],
            text="Reading.", split=3, chunk_size=2))
        text, calls, finishes, _ = await collect(await litellm_stream(server, model))
        assert text == "Reading."
        named = [(c["name"], json.loads(c["arguments"])) for _, c in sorted(calls.items())]
        assert named == [("read_file", {"path": "a.txt"}), ("run_command", {"command": "ls -la"})]
        if dialect != "ollama":  # Ollama sends no ids: litellm makes them up
            assert [c["id"] for _, c in sorted(calls.items())] == ["call_0", "call_1"]
        assert "tool_calls" in finishes
        path = server.requests[0]["path"]
        assert path == {"anthropic": "/v1/messages", "openai": "/v1/chat/completions", "ollama": "/api/chat"}[dialect]
        assert server.violations == []

        # the next turn answers both calls: litellm's translation must keep the pairing intact
        server.enqueue(Reply.text("done"))
        turn2 = [*USER, {"role": "assistant", "content": "Reading.", "tool_calls": [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for _, c in sorted(calls.items())]}] + [
            {"role": "tool", "tool_call_id": c["id"], "content": "ok"} for _, c in sorted(calls.items())]
        result = await litellm.acompletion(model=model, api_base=server.base_url, api_key="x",
                                           messages=turn2, tools=TOOLS, num_retries=0)
        assert result.choices[0].message.content == "done"
        assert server.violations == []


async def test_litellm_anthropic_errors(ant: FakeLLMServer) -> None:
    ant.enqueue(Reply.error(429, "slow down", retry_after=0))
    ant.enqueue(Reply.broken("partial text here", after_chunks=2))
    with pytest.raises(litellm.RateLimitError, match="slow down"):
        await collect(await litellm_stream(ant, "anthropic/claude-sonnet-4-5"))
    with pytest.raises(Exception, match=r"(?i)payload is not completed|incomplete|connection"):
        await collect(await litellm_stream(ant, "anthropic/claude-sonnet-4-5"))
    assert ant.requests[0]["headers"]["x-api-key"] == "x"


# -- CLI ---------------------------------------------------------------------------------------------------


def test_cli_serves_script_then_echo(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "hi"}, {"error": 429, "message": "later"}]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "swebash_ai.testing.fake_server", "--dialect", "openai",
         "--script", str(script), "--echo"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        body = {"model": "m", "messages": [{"role": "user", "content": "ping"}]}
        with httpx.Client(base_url=base_url, timeout=5) as http:
            replies = [http.post("/chat/completions", json=body) for _ in range(3)]
        assert replies[0].json()["choices"][0]["message"]["content"] == "hi"
        assert replies[1].status_code == 429
        assert replies[2].json()["choices"][0]["message"]["content"] == "echo: ping"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


async def test_litellm_anthropic_doubled_v1_is_flagged(ant: FakeLLMServer) -> None:
    """litellm appends /v1/messages to api_base, so a base ending in /v1 posts to /v1/v1/messages."""
    ant.enqueue(Reply.text("still answered"))
    result = await litellm.acompletion(model="anthropic/claude-sonnet-4-5", api_base=ant.base_url + "/v1",
                                       api_key="x", messages=USER, num_retries=0)
    assert result.choices[0].message.content == "still answered"
    assert ant.requests[0]["path"] == "/v1/v1/messages"
    assert len(ant.violations) == 1 and "unusual path" in ant.violations[0]


_END_MARKERS = {"openai": (b"[DONE]", b'"finish_reason": "stop"', b'"finish_reason": "tool_calls"'),
                "anthropic": (b"message_stop", b"message_delta"), "ollama": (b'"done": true',)}
_CHAT = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages", "ollama": "/api/chat"}


@pytest.mark.parametrize("dialect", ["openai", "anthropic", "ollama"])
def test_misbehaving_replies(dialect: Any) -> None:
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with FakeLLMServer(dialect) as server:
        root = server.base_url.removesuffix("/v1")
        server.enqueue(
            Reply.truncated("cut short", [("read_file", {"path": "a/long/path.txt"})], split=3, drop=2),
            Reply.bad_event("some text", "<b>not json</b>", after_chunks=1),
            Reply.raw("<html>login</html>", status=200),
            Reply.hang(0.3),
        )
        with httpx.Client(base_url=root, timeout=5) as client:
            cut = client.post(_CHAT[dialect], json=body)
            assert cut.status_code == 200 and cut.content  # a clean end of the body...
            assert not any(marker in cut.content for marker in _END_MARKERS[dialect])  # ...without the marker
            bad = client.post(_CHAT[dialect], json=body)
            assert b"<b>not json</b>" in bad.content and any(m in bad.content for m in _END_MARKERS[dialect])
            page = client.post(_CHAT[dialect], json=body)
            assert page.text == "<html>login</html>" and page.headers["content-type"].startswith("text/html")
            with pytest.raises(httpx.ReadTimeout):
                client.post(_CHAT[dialect], json=body, timeout=0.1)
