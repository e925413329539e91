"""The fast reading of plain text chunks in ``openai_format_chunks`` gives exactly what the general reading gives.

The fast path takes only plain ``dict`` chunks. The same chunks seen through a read-only mapping view
(``MappingProxyType``: a Mapping, not a dict) and as attribute objects (litellm's shape) always go the general
way, so comparing the three compares the fast path with the general code, for any mix of shapes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from types import MappingProxyType, SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swebash_ai.errors import ProviderError
from swebash_ai.providers.base import TextChunk, UsageChunk, _text_only, openai_format_chunks


def _cost(usage: UsageChunk) -> float:
    return usage.prompt_tokens * 0.001 + usage.completion_tokens * 0.002


async def _source(chunks: list[Any]) -> AsyncIterator[Any]:
    for chunk in chunks:
        yield chunk


def read(chunks: list[Any]) -> tuple[list[Any], list[str], str | None]:
    """(typed chunks, names told as calls start, the error that ended the stream) for a list of chunks."""
    started: list[str] = []

    async def run() -> tuple[list[Any], str | None]:
        out: list[Any] = []
        try:
            async for typed in openai_format_chunks(_source(chunks), _cost, on_call_start=started.append):
                out.append(typed)
        except ProviderError as exc:
            return out, f"{type(exc).__name__}: {exc}"
        return out, None

    out, error = asyncio.run(run())
    return out, started, error


def as_view(chunk: Any) -> Any:
    """The chunk as a Mapping that is not a dict: the general reading."""
    return MappingProxyType(chunk) if isinstance(chunk, dict) else chunk


def as_object(value: Any) -> Any:
    """Dicts as attribute objects, all the way down (litellm's chunk objects): the general reading."""
    if isinstance(value, dict):
        return SimpleNamespace(**{key: as_object(item) for key, item in value.items()})
    if isinstance(value, list):
        return [as_object(item) for item in value]
    return value


def assert_same_three_ways(chunks: list[Any]) -> tuple[list[Any], list[str], str | None]:
    fast = read(chunks)
    assert fast == read([as_view(c) for c in chunks])
    assert fast == read([as_object(c) for c in chunks])
    return fast


# --- chunks of every shape ------------------------------------------------------------------------------
texts = st.text(max_size=12)


@st.composite
def text_chunk(draw: st.DrawFn) -> dict[str, Any]:
    """The common shape, with the extra fields real servers add (role, index, logprobs, ``usage: null``)."""
    delta: dict[str, Any] = {"content": draw(texts)}
    if draw(st.booleans()):
        delta["role"] = "assistant"
    choice: dict[str, Any] = {"index": 0, "delta": delta}
    if draw(st.booleans()):
        choice.update(finish_reason=None, logprobs=None)
    chunk: dict[str, Any] = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [choice]}
    if draw(st.booleans()):
        chunk["usage"] = None
    return chunk


def tool_delta(index: int, name: str | None, arguments: str | None) -> dict[str, Any]:
    # Every delta of a call carries its id (as some servers do): generated ids would differ between readings.
    fn: dict[str, Any] = {}
    if name is not None:
        fn["name"] = name
    if arguments is not None:
        fn["arguments"] = arguments
    return {"index": index, "id": f"call_{index}", "type": "function", "function": fn}


TWISTS = ("content", "reasoning_content", "reasoning", "tool_calls", "finish_reason", "choices", "usage", "delta")


@st.composite
def odd_chunk(draw: st.DrawFn) -> dict[str, Any]:
    """A text chunk with one to three twists that the fast path must leave to the general reading: other
    content (None, empty, a list of parts), reasoning, tool calls (with the content), a finish reason, no or
    several choices, usage, a delta that is not there."""
    chunk = draw(text_chunk())
    choice = chunk["choices"][0]
    delta = choice["delta"]
    for twist in draw(st.lists(st.sampled_from(TWISTS), min_size=1, max_size=3, unique=True)):
        if twist == "content":
            delta["content"] = draw(st.one_of(st.none(), st.just(""), st.lists(st.one_of(
                st.builds(lambda t: {"type": "text", "text": t}, texts),
                st.builds(lambda t: {"type": "thinking", "thinking": [{"type": "text", "text": t}]}, texts),
                st.builds(lambda t: {"type": "reference", "id": t}, texts),
                texts,
            ), max_size=3)))
        elif twist in ("reasoning_content", "reasoning"):
            delta[twist] = draw(st.one_of(st.none(), texts))
        elif twist == "tool_calls":
            delta["tool_calls"] = draw(st.lists(st.builds(
                tool_delta, st.integers(0, 2), st.sampled_from([None, "read_file", "read", "_file"]),
                st.sampled_from([None, "", "{", '"path": "a"', "}", "{}", '{"n": 1}'])), max_size=2))
        elif twist == "finish_reason":
            choice["finish_reason"] = draw(st.sampled_from([None, "", "stop", "tool_calls", "length"]))
        elif twist == "choices":
            chunk["choices"] = draw(st.sampled_from([None, [], [choice, dict(choice, index=1)]]))
        elif twist == "usage":
            chunk["usage"] = draw(st.sampled_from([
                {}, {"prompt_tokens": 10, "completion_tokens": 3},
                {"prompt_tokens": 7, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 5}},
            ]))
        else:
            choice["delta"] = None
    return chunk


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(text_chunk(), text_chunk(), odd_chunk()), max_size=12))
def test_any_mix_of_chunks_reads_the_same_through_the_fast_path_and_the_general_one(chunks: list[Any]) -> None:
    assert_same_three_ways(chunks)


@settings(max_examples=200, deadline=None)
@given(st.lists(text_chunk(), max_size=12))
def test_the_common_shape_takes_the_fast_path_and_loses_no_text(chunks: list[dict[str, Any]]) -> None:
    assert all(_text_only(c) == c["choices"][0]["delta"]["content"] for c in chunks)
    finish = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    out, _, error = assert_same_three_ways([*chunks, finish])
    assert error is None
    assert [c for c in out if isinstance(c, TextChunk)] == [
        TextChunk(t) for c in chunks if (t := c["choices"][0]["delta"]["content"])]


def text(content: Any, **delta: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": content, **delta}}]}


@pytest.mark.parametrize("chunk", [
    pytest.param(text(None), id="content None"),
    pytest.param({"choices": []}, id="no choices"),
    pytest.param({"choices": None}, id="choices None"),
    pytest.param({"choices": [text("a")["choices"][0], dict(text("b")["choices"][0], index=1)]}, id="two choices"),
    pytest.param(text("a", tool_calls=[tool_delta(0, "read_file", "{}")]), id="tool call with content"),
    pytest.param(text("a", reasoning_content="think"), id="reasoning with content"),
    pytest.param(text("a", reasoning="think"), id="reasoning (other key) with content"),
    pytest.param({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 1}}, id="usage only"),
    pytest.param({**text("a"), "usage": {"prompt_tokens": 5, "completion_tokens": 1}}, id="usage with text"),
    pytest.param({"choices": [{"index": 0, "delta": {"content": "a"}, "finish_reason": "stop"}]}, id="finish"),
    pytest.param(text([{"type": "text", "text": "a"}]), id="content list"),
    pytest.param({"choices": [{"index": 0, "delta": None}]}, id="delta None"),
])
def test_odd_shapes_go_the_general_way_and_read_the_same(chunk: dict[str, Any]) -> None:
    assert _text_only(chunk) is None
    before = text("x")
    finish = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    out, _, error = assert_same_three_ways([before, chunk, finish])
    assert error is None and out[0] == TextChunk("x")


def test_a_stream_without_its_end_marker_fails_the_same_way() -> None:
    out, _, error = assert_same_three_ways([text("a"), text("b", tool_calls=[tool_delta(0, "read_file", '{"p')])])
    assert out == [TextChunk("a"), TextChunk("b")]
    assert error is not None and "IncompleteAnswerError" in error and "1 tool call with cut arguments" in error
