"""A long turn stays inside the context window: its oldest tool results are cut before each request."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.agent import Agent, Conversation, LoopLimits, TurnFailed, TurnFinished
from swebash_ai.agent.context_fit import fit
from swebash_ai.agent.conversation import estimate_tokens
from swebash_ai.config.settings import load_settings
from swebash_ai.providers.base import ToolCall
from swebash_ai.providers.http_provider import HttpProvider
from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from swebash_ai.tools.registry import ToolContext, ToolRegistry, ToolResult, tool

WINDOW = 20_000
"""The scripted model's context, in tokens (estimated as the app does: four characters a token)."""


@tool("fs")
async def look(ctx: ToolContext, path: str) -> ToolResult:
    """Read a file of the working directory.

    Args:
        path: The file.
    """
    return ToolResult.success((ctx.cwd / path).read_text())


def refusing_oversized(make: Any) -> Any:
    """A server that answers 400 context_length_exceeded, as OpenAI does, to a request over the window."""
    count = itertools.count(1)

    def respond(body: dict[str, Any]) -> Reply:
        size = len(json.dumps(body["messages"], ensure_ascii=False)) // 4
        if size > WINDOW:
            error = {"error": {"message": f"This model's maximum context length is {WINDOW} tokens. However, your "
                               f"messages resulted in {size} tokens.", "type": "invalid_request_error",
                               "param": "messages", "code": "context_length_exceeded"}}
            return Reply.raw(json.dumps(error), status=400, content_type="application/json")
        return make(next(count))  # type: ignore[no-any-return]

    return respond


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer("openai") as fake:
        yield fake
    assert not fake.violations, fake.violations


def agent_for(server: FakeLLMServer, cwd: Path, context_tokens: int) -> Agent:
    provider = HttpProvider("openai/fake-model", api_base=server.base_url, api_key="sk-x", retries=0, timeout=30)
    return Agent(provider, ToolRegistry([look]), ToolContext(load_settings().settings, cwd),
                 limits=LoopLimits(context_tokens=context_tokens))


def long_reads(tmp_path: Path, reads: int) -> Any:
    log = tmp_path / "build.log"

    def make(i: int) -> Reply:
        log.write_text(f"pass {i}\n" + f"{i} compiling module\n" * 2000)  # 40 KB that changes every pass
        return Reply.tool_calls([("look", {"path": "build.log"})]) if i <= reads else Reply.text("the build is done")

    return make


async def test_a_turn_longer_than_the_window_is_not_refused(server: FakeLLMServer, tmp_path: Path) -> None:
    server.responder = refusing_oversized(long_reads(tmp_path, 30))  # 30 x 40 KB: 15 times the window
    conv = Conversation()
    events = [e async for e in agent_for(server, tmp_path, WINDOW - 2_000).run_turn(conv, "watch the build")]
    final = events[-1]
    assert isinstance(final, TurnFinished) and (final.reason, final.text) == ("answered", "the build is done")
    last = server.requests[-1]["body"]["messages"]
    results = [m["content"] for m in last if m["role"] == "tool"]
    assert len(results) == 30  # every call still has its result: the request is valid
    assert "was removed from the conversation to keep it inside the model's context window" in results[0]
    assert results[-1].startswith("pass 30\n")  # the newest result is whole
    assert sum(len(m["content"]) for m in conv.messages if m["role"] == "tool") > 30 * 39_000  # kept in full


async def test_without_the_cut_such_a_server_refuses(server: FakeLLMServer, tmp_path: Path) -> None:
    # The same scripted server, with the budget set beyond what it accepts: the refusal reaches the user.
    server.responder = refusing_oversized(long_reads(tmp_path, 30))
    events = [e async for e in agent_for(server, tmp_path, 10 * WINDOW).run_turn(Conversation(), "watch the build")]
    assert isinstance(events[-1], TurnFailed)


def _turn(results: list[str]) -> list[dict[str, Any]]:
    conv = Conversation()
    conv.add_user("go")
    for i, text in enumerate(results):
        conv.add_assistant("", [ToolCall(f"c{i}", "look", '{"path": "x"}')])
        conv.add_tool_result(f"c{i}", "look", text)
    return conv.messages


def test_the_cut_is_monotone_as_the_turn_grows() -> None:
    results = [f"result {i} " + "x" * 8000 for i in range(12)]
    cut_before: set[int] = set()
    for n in range(1, len(results) + 1):
        messages = _turn(results[:n])
        sent = fit(messages, [estimate_tokens(m) for m in messages], 10_000)
        cut = {i for i, m in enumerate(sent) if m["role"] == "tool" and m["content"].startswith("[swebash-ai")}
        assert cut_before <= cut  # once cut, cut in every later request
        assert sum(estimate_tokens(m) for m in sent) <= 10_000
        assert [m.get("tool_call_id") for m in sent] == [m.get("tool_call_id") for m in messages]
        cut_before = cut


def test_a_latest_result_too_big_alone_keeps_its_head_and_tail() -> None:
    messages = _turn(["HEAD" + "y" * 200_000 + "TAIL"])
    sent = fit(messages, [estimate_tokens(m) for m in messages], 10_000)
    content = sent[-1]["content"]
    assert content.startswith("HEAD") and content.endswith("TAIL") and "cut from the middle" in content
    assert sum(estimate_tokens(m) for m in sent) <= 10_000
    assert messages[-1]["content"].endswith("TAIL") and len(messages[-1]["content"]) == 200_008  # not changed
