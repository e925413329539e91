"""The same provider tests against every implementation, over real HTTP + SSE on loopback.

The fast lane (httpx + httpx-sse) talks to the OpenAI-format server; litellm talks to it too (``openai/``
model, through the official openai client: the reference the fast lane must match), to the Anthropic
Messages API server (``anthropic/`` model) and to Ollama's native chat (``ollama_chat/``), where its value
is translating formats.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from swebash_ai import errors
from swebash_ai.providers.base import Chunk, FinishChunk, RetryingProvider, TextChunk, ToolCall, UsageChunk
from swebash_ai.providers.http_provider import HttpProvider
from swebash_ai.providers.litellm_provider import LiteLLMProvider
from swebash_ai.testing.fake_server import FakeLLMServer, Reply

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "run_command",
            "description": "Run a command.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
        },
    },
]

Factory = Callable[[FakeLLMServer, int], RetryingProvider]


def _http(server: FakeLLMServer, retries: int) -> RetryingProvider:
    return HttpProvider(
        "openai/fake-model", api_base=server.base_url, api_key="sk-x", retries=retries, base_delay=0.01, timeout=10
    )


def _litellm_openai(server: FakeLLMServer, retries: int) -> RetryingProvider:
    return LiteLLMProvider(
        "openai/fake-model", api_base=server.base_url, api_key="sk-x", retries=retries, base_delay=0.01, timeout=10
    )


def _litellm_anthropic(server: FakeLLMServer, retries: int) -> RetryingProvider:
    return LiteLLMProvider(
        "anthropic/claude-sonnet-4-5",
        api_base=server.base_url,
        api_key="sk-ant-x",
        retries=retries,
        base_delay=0.01,
        timeout=10,
    )


def _litellm_ollama(server: FakeLLMServer, retries: int) -> RetryingProvider:
    return LiteLLMProvider(
        "ollama_chat/fake-model", api_base=server.base_url, api_key=None, retries=retries, base_delay=0.01, timeout=10
    )


IMPLEMENTATIONS = [
    pytest.param(("openai", _http), id="httpx-sse"),
    pytest.param(("openai", _litellm_openai), id="litellm-openai"),
    pytest.param(("anthropic", _litellm_anthropic), id="litellm-anthropic"),
    pytest.param(("ollama", _litellm_ollama), id="litellm-ollama"),
]


@pytest.fixture(params=IMPLEMENTATIONS)
def impl(request: pytest.FixtureRequest) -> Any:
    dialect, factory = request.param
    with FakeLLMServer(dialect) as server:
        yield server, factory
    assert not server.violations, server.violations


async def collect(
    provider: RetryingProvider, messages: list[dict[str, Any]] | None = None, tools: list[dict[str, Any]] | None = None
) -> list[Chunk]:
    msgs = messages or [{"role": "user", "content": "hi"}]
    return [c async for c in provider.stream(msgs, tools)]


def text_of(chunks: list[Chunk]) -> str:
    return "".join(c.text for c in chunks if isinstance(c, TextChunk))


def calls_of(chunks: list[Chunk]) -> list[ToolCall]:
    return [c for c in chunks if isinstance(c, ToolCall)]


async def test_text_only_streams_in_pieces(impl: Any) -> None:
    server, factory = impl
    server.enqueue(Reply.text("Hello from the loopback server", chunk_size=3, usage=(12, 7)))
    chunks = await collect(factory(server, 0))
    assert text_of(chunks) == "Hello from the loopback server"
    assert sum(isinstance(c, TextChunk) for c in chunks) > 3  # really streamed
    assert not calls_of(chunks)
    assert isinstance(chunks[-1], FinishChunk)
    usage = [c for c in chunks if isinstance(c, UsageChunk)]
    assert usage and usage[0].prompt_tokens == 12 and usage[0].completion_tokens == 7


async def test_one_tool_call_split_across_many_deltas(impl: Any) -> None:
    server, factory = impl
    args = {"path": "src/some/long/path/name.py"}
    server.enqueue(Reply.tool_calls([("read_file", args, "call_abcdef123")], split=2))
    chunks = await collect(factory(server, 0), tools=TOOLS)
    calls = calls_of(chunks)
    assert len(calls) == 1
    assert calls[0].name == "read_file"
    assert json.loads(calls[0].arguments) == args
    assert calls[0].id  # anthropic ids are translated, but an id is always there


async def test_parallel_calls_keep_their_order_and_arguments(impl: Any) -> None:
    server, factory = impl
    server.enqueue(
        Reply.tool_calls(
            [("read_file", {"path": "a.txt"}), ("run_command", {"command": "ls -la"}), ("read_file", {"path": "b"})],
            split=3,
        )
    )
    calls = calls_of(await collect(factory(server, 0), tools=TOOLS))
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("read_file", {"path": "a.txt"}),
        ("run_command", {"command": "ls -la"}),
        ("read_file", {"path": "b"}),
    ]
    assert len({c.id for c in calls}) == 3


async def test_the_first_call_arrives_while_the_rest_is_held_back(impl: Any) -> None:
    server, factory = impl
    if server.dialect == "ollama":
        pytest.skip("Ollama sends every call of a response in one line: there is no later part to hold back")
    # Once call 0 is complete on the wire the server holds the rest back (up to 30 s) until we resume it on
    # receiving call 0: a provider that yielded calls only at the end could never have resumed it.
    server.enqueue(Reply.tool_calls([("run_command", {"command": "sleep 1"}), ("read_file", {"path": "a"}),
                                     ("read_file", {"path": "b"})], split=3, stall=(0, 30.0)))
    chunks: list[Chunk] = []
    async for chunk in factory(server, 0).stream([{"role": "user", "content": "hi"}], TOOLS):
        if isinstance(chunk, ToolCall) and not calls_of(chunks):
            server.resume()
        chunks.append(chunk)
    assert server.stalls == [True]
    assert [json.loads(c.arguments) for c in calls_of(chunks)] == [{"command": "sleep 1"}, {"path": "a"},
                                                                   {"path": "b"}]
    assert isinstance(chunks[-1], FinishChunk)


async def test_tool_results_are_sent_back_in_the_provider_format(impl: Any) -> None:
    server, factory = impl
    server.enqueue(Reply.text("The file says hi."))
    messages = [
        {"role": "user", "content": "read a.txt"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "name": "read_file", "content": "hi"},
    ]
    chunks = await collect(factory(server, 0), messages, TOOLS)
    assert text_of(chunks) == "The file says hi."
    body = json.dumps(server.requests[-1]["body"])
    assert "call_1" in body and "a.txt" in body  # the call and its result reached the server


async def test_rate_limit_then_success_is_retried(impl: Any) -> None:
    server, factory = impl
    server.enqueue(Reply.error(429, "slow down", retry_after=0), Reply.text("ok now"))
    chunks = await collect(factory(server, 2))
    assert text_of(chunks) == "ok now"
    assert len(server.requests) == 2


async def test_server_error_until_retries_run_out(impl: Any) -> None:
    server, factory = impl
    server.enqueue(*[Reply.error(500, "boom")] * 3)
    with pytest.raises(errors.ProviderUnavailableError) as info:
        await collect(factory(server, 2))
    assert len(server.requests) == 3  # one try + two retries, then a typed error
    assert "3 attempts" in info.value.message


async def test_bad_key_is_a_typed_error_and_not_retried(impl: Any) -> None:
    server, factory = impl
    server.enqueue(Reply.error(401, "invalid api key"))
    with pytest.raises(errors.AuthenticationError) as info:
        await collect(factory(server, 3))
    assert len(server.requests) == 1
    assert "API key" in info.value.message and info.value.hint


async def test_stream_that_breaks_midway(impl: Any) -> None:
    server, factory = impl
    server.enqueue(Reply.broken("partial answer that never ends", after_chunks=3))
    provider = factory(server, 3)
    seen: list[Chunk] = []
    with pytest.raises(errors.ProviderError):
        async for chunk in provider.stream([{"role": "user", "content": "hi"}], None):
            seen.append(chunk)
    assert len(server.requests) == 1  # never retried once text was shown


@pytest.mark.parametrize("cls", [HttpProvider, LiteLLMProvider], ids=["httpx-sse", "litellm"])
async def test_connection_refused_is_unavailable(cls: type[HttpProvider] | type[LiteLLMProvider]) -> None:
    provider = cls("openai/x", api_base="http://127.0.0.1:9/v1", api_key="k", retries=1, base_delay=0)
    start = time.monotonic()
    with pytest.raises(errors.ProviderUnavailableError) as info:
        await collect(provider)
    assert time.monotonic() - start < 10
    assert "reach" in info.value.message or "Connection" in info.value.message
