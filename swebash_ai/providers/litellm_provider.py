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

from swebash_ai.providers.base import Chunk, EndpointProvider, Message, openai_format_chunks

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


class LiteLLMProvider(EndpointProvider):
    """Streaming completions through ``litellm.acompletion``."""

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
        async for chunk in openai_format_chunks(stream, lambda p, c: self._cost(litellm, p, c)):
            yield chunk

    def _cost(self, litellm: Any, prompt_tokens: int, completion_tokens: int) -> float | None:
        try:
            prompt, completion = litellm.cost_per_token(
                model=self.model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
            )
            return float(prompt + completion)
        except Exception:  # unknown price: no cost, not an error
            return None
