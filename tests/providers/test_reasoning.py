"""Reasoning that OpenAI-compatible servers stream (``delta.reasoning_content``) reaches the loop as its own
chunks on both lanes, apart from the answer: shown to an editor as thoughts, never sent back to the model."""

from __future__ import annotations

from typing import Any

import pytest

from swebash_ai.agent import Agent, Conversation
from swebash_ai.agent.events import ReasoningDelta, TextDelta
from swebash_ai.providers.base import ReasoningChunk, RetryingProvider, TextChunk
from swebash_ai.providers.http_provider import HttpProvider
from swebash_ai.providers.litellm_provider import LiteLLMProvider
from swebash_ai.testing.fake_server import FakeLLMServer, Reply


def _http(server: FakeLLMServer) -> RetryingProvider:
    return HttpProvider("openai/gpt-4o", api_base=server.base_url, api_key="sk-x", retries=0, base_delay=0.01,
                        timeout=10)


def _litellm(server: FakeLLMServer) -> RetryingProvider:
    return LiteLLMProvider("openai/gpt-4o", api_base=server.base_url, api_key="sk-x", retries=0, base_delay=0.01,
                           timeout=10)


@pytest.mark.parametrize("lane", [_http, _litellm], ids=["httpx", "litellm"])
async def test_reasoning_arrives_apart_from_the_answer(lane: Any) -> None:
    with FakeLLMServer("openai") as server:
        server.enqueue(Reply.text("The answer.", reasoning="First, think it over.", chunk_size=5))
        chunks = [c async for c in lane(server).stream([{"role": "user", "content": "hi"}], None)]
    assert not server.violations, server.violations
    assert "".join(c.text for c in chunks if isinstance(c, ReasoningChunk)) == "First, think it over."
    assert "".join(c.text for c in chunks if isinstance(c, TextChunk)) == "The answer."


async def test_the_loop_emits_reasoning_and_keeps_it_out_of_the_conversation(tmp_path: Any) -> None:
    from swebash_ai.config.settings import Settings
    from swebash_ai.tools.registry import ToolContext, ToolRegistry

    with FakeLLMServer("openai") as server:
        server.enqueue(Reply.text("Two.", reasoning="one plus one"), Reply.text("Done."))
        agent = Agent(_http(server), ToolRegistry([]), ToolContext(settings=Settings(), cwd=tmp_path))
        conversation = Conversation()
        events = [e async for e in agent.run_turn(conversation, "1+1?")]
        async for _ in agent.run_turn(conversation, "and?"):
            pass
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "one plus one"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Two."
    assert "one plus one" not in str(conversation.messages)
    assert "one plus one" not in str(server.requests[-1]["body"]["messages"])
