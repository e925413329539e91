"""Cached prompt tokens, read from what providers really send, over loopback HTTP, on both lanes.

OpenAI-compatible servers count cache hits inside ``prompt_tokens`` and say how many in
``usage.prompt_tokens_details.cached_tokens``; Anthropic counts them outside ``input_tokens`` as
``cache_read_input_tokens`` (litellm adds them back into ``prompt_tokens``). Either way a usage chunk says
how many of its prompt tokens were cached, and its cost prices them at the model's cached price.
"""

from __future__ import annotations

from typing import Any

import pytest

from swebash_ai.providers.base import RetryingProvider, UsageChunk, usage_chunk
from swebash_ai.providers.http_provider import HttpProvider
from swebash_ai.providers.litellm_provider import LiteLLMProvider
from swebash_ai.providers.pricing import _entry, cost_of
from swebash_ai.testing.fake_server import FakeLLMServer, Reply


def _http(server: FakeLLMServer, model: str) -> RetryingProvider:
    return HttpProvider(model, api_base=server.base_url, api_key="sk-x", retries=0, base_delay=0.01, timeout=10)


def _litellm(server: FakeLLMServer, model: str) -> RetryingProvider:
    return LiteLLMProvider(model, api_base=server.base_url, api_key="sk-x", retries=0, base_delay=0.01, timeout=10)


LANES = [
    pytest.param("openai", _http, "openai/gpt-4o", "gpt-4o", id="httpx-openai"),
    pytest.param("openai", _litellm, "openai/gpt-4o", "gpt-4o", id="litellm-openai"),
    pytest.param("anthropic", _litellm, "anthropic/claude-sonnet-4-5", "claude-sonnet-4-5", id="litellm-anthropic"),
]


async def usage_of(provider: RetryingProvider) -> UsageChunk:
    chunks = [c async for c in provider.stream([{"role": "user", "content": "hi"}], None)]
    usage = [c for c in chunks if isinstance(c, UsageChunk)]
    assert len(usage) == 1, chunks
    return usage[0]


def price(entry: str, key: str) -> float:
    found = _entry(entry)
    assert isinstance(found, dict) and key in found, f"{entry} has no {key} in litellm's price list"
    return float(found[key])


@pytest.mark.parametrize(("dialect", "lane", "model", "entry"), LANES)
async def test_cached_prompt_tokens_are_read_and_priced_lower(dialect: str, lane: Any, model: str, entry: str) -> None:
    with FakeLLMServer(dialect) as server:
        server.enqueue(Reply.text("cached", usage=(1000, 10), cached_tokens=800),
                       Reply.text("fresh", usage=(1000, 10)))
        cached = await usage_of(lane(server, model))
        fresh = await usage_of(lane(server, model))
    assert not server.violations, server.violations
    assert (cached.prompt_tokens, cached.completion_tokens, cached.cached_tokens) == (1000, 10, 800)
    assert (fresh.prompt_tokens, fresh.cached_tokens) == (1000, 0)
    base, read = price(entry, "input_cost_per_token"), price(entry, "cache_read_input_token_cost")
    out = price(entry, "output_cost_per_token")
    assert fresh.cost == pytest.approx(1000 * base + 10 * out)
    assert cached.cost == pytest.approx(200 * base + 800 * read + 10 * out)  # the 800 at the cached price
    assert cached.cost < fresh.cost


# (usage as a provider sends it, expected (prompt, completion, cached, written)); one row per shape
USAGES: list[tuple[dict[str, Any], tuple[int, int, int, int]]] = [
    # why: OpenAI and compatible servers: cached inside prompt_tokens, counted in the details
    ({"prompt_tokens": 50, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 32}}, (50, 5, 32, 0)),
    # why: litellm's usage for Anthropic: the cache read as its own field, creation too (billed higher)
    ({"prompt_tokens": 90, "completion_tokens": 5, "cache_read_input_tokens": 40, "cache_creation_input_tokens": 30},
     (90, 5, 40, 30)),
    # why: DeepSeek's own field name
    ({"prompt_tokens": 64, "completion_tokens": 1, "prompt_cache_hit_tokens": 60}, (64, 1, 60, 0)),
    # why: details present but null (servers without a cache send this)
    ({"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": None}, (10, 2, 0, 0)),
    # why: a server claiming more cached than sent is capped: cached is a part of the prompt
    ({"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 99}}, (10, 2, 10, 0)),
    # why: nonsense values (negative, text) count as nothing rather than breaking the turn
    ({"prompt_tokens": 10, "completion_tokens": 2, "cache_read_input_tokens": -4,
      "prompt_tokens_details": {"cached_tokens": "many"}}, (10, 2, 0, 0)),
]


@pytest.mark.parametrize(("usage", "expected"), USAGES)
def test_usage_shapes(usage: dict[str, Any], expected: tuple[int, int, int, int]) -> None:
    chunk = usage_chunk(usage)
    assert chunk is not None
    assert (chunk.prompt_tokens, chunk.completion_tokens, chunk.cached_tokens, chunk.cache_write_tokens) == expected


def test_cache_writes_are_priced_at_the_creation_price() -> None:
    """Anthropic bills writing the cache above the input price; the fast lane prices it as litellm does."""
    entry = "claude-sonnet-4-5"
    base, write = price(entry, "input_cost_per_token"), price(entry, "cache_creation_input_token_cost")
    got = cost_of(entry, 100, 0, cached_tokens=0, cache_write_tokens=60)
    assert got == pytest.approx(40 * base + 60 * write) and write > base
