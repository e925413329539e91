"""Every provider that is not OpenAI-compatible (Anthropic, Gemini, Ollama native, Bedrock...) via litellm.

The only module that imports litellm, and only when a request is made: the import costs seconds. Before it,
``LITELLM_LOCAL_MODEL_COST_MAP`` keeps litellm from fetching a price list over the network, and after it
``suppress_debug_info`` keeps it from printing to stdout (which is the answer in one-shot mode). litellm's
own retries are off; :class:`RetryingProvider` does them once.
"""

from __future__ import annotations

import os
import threading
from collections.abc import AsyncIterator, Sequence
from typing import Any

from swebash_ai.providers.base import (
    Chunk,
    FinishChunk,
    Message,
    RetryCallback,
    RetryingProvider,
    TextChunk,
    ToolCallAccumulator,
    UsageChunk,
)

_lock = threading.Lock()


def import_litellm() -> Any:
    """Import and quiet litellm (idempotent, thread-safe: the TUI preloads it in a background thread)."""
    with _lock:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        os.environ.setdefault("LITELLM_TELEMETRY", "False")
        import litellm

        litellm.suppress_debug_info = True
        litellm.telemetry = False
        litellm.drop_params = True  # a provider that lacks a parameter gets the request without it
        litellm.num_retries = 0
        return litellm


class LiteLLMProvider(RetryingProvider):
    """Streaming completions through ``litellm.acompletion``."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        retries: int = 3,
        base_delay: float = 1.0,
        on_retry: RetryCallback | None = None,
    ) -> None:
        super().__init__(retries=retries, base_delay=base_delay, on_retry=on_retry)
        self.model = model
        self.api_base = api_base
        self.api_key = api_key
        self.timeout = timeout

    async def _stream_once(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None, tool_choice: str
    ) -> AsyncIterator[Chunk]:
        litellm = import_litellm()
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "stream": True,
            "stream_options": {"include_usage": True},
            "timeout": self.timeout,
            "num_retries": 0,
            "max_retries": 0,
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        if tools:
            kwargs["tools"] = list(tools)
            kwargs["tool_choice"] = tool_choice
        stream = await litellm.acompletion(**kwargs)
        calls = ToolCallAccumulator()
        finish: str | None = None
        usage_seen = False
        async for chunk in stream:
            usage = getattr(chunk, "usage", None)
            if usage is not None and not usage_seen and (usage.prompt_tokens or usage.completion_tokens):
                usage_seen = True
                yield UsageChunk(usage.prompt_tokens or 0, usage.completion_tokens or 0, self._cost(litellm, usage))
            for choice in getattr(chunk, "choices", None) or ():
                delta = getattr(choice, "delta", None)
                if delta is not None:
                    if getattr(delta, "content", None):
                        yield TextChunk(delta.content)
                    if getattr(delta, "tool_calls", None):
                        calls.add(delta.tool_calls)
                if getattr(choice, "finish_reason", None):
                    finish = choice.finish_reason
        for call in calls.complete():
            yield call
        yield FinishChunk(finish or ("tool_calls" if calls else "stop"))

    def _cost(self, litellm: Any, usage: Any) -> float | None:
        try:
            prompt, completion = litellm.cost_per_token(
                model=self.model,
                prompt_tokens=usage.prompt_tokens or 0,
                completion_tokens=usage.completion_tokens or 0,
            )
            return float(prompt + completion)
        except Exception:  # unknown price: no cost, not an error
            return None
