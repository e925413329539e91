"""OpenAI-compatible endpoints through the official ``openai`` async client (the fast lane).

OpenAI itself and anything reached through ``SWEBASH_AI_API_BASE`` (Ollama's ``/v1``, vLLM, LM Studio,
llama.cpp, OpenRouter...) take this path: it imports in a fraction of litellm's time, which is what keeps a
one-shot answer quick. The client's own retries are off; :class:`RetryingProvider` does them once.
"""

from __future__ import annotations

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
from swebash_ai.providers.pricing import cost_of


class OpenAIProvider(RetryingProvider):
    """Chat Completions streaming over the official client."""

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
        self.wire_model = model.split("/", 1)[1] if model.startswith("openai/") else model
        self.api_base = api_base
        self.api_key = api_key
        self.timeout = timeout
        self._client: Any = None

    def _get_client(self) -> Any:
        if self._client is None:
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI(
                base_url=self.api_base,
                # Local servers need no key, but the client insists on one.
                api_key=self.api_key or ("not-needed" if self.api_base else None),
                max_retries=0,
                timeout=self.timeout,
            )
        return self._client

    async def _stream_once(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None, tool_choice: str
    ) -> AsyncIterator[Chunk]:
        kwargs: dict[str, Any] = {
            "model": self.wire_model,
            "messages": list(messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            kwargs["tools"] = list(tools)
            kwargs["tool_choice"] = tool_choice
        # ``client.post`` (the SDK's documented low-level call) instead of ``chat.completions.create``: the
        # latter walks every message through a recursive TypedDict "transform" that costs ~1.5 ms per
        # message here and blocks the event loop (170 ms per request at 120 messages). Our messages are
        # already plain JSON, so there is nothing to transform. Errors and streaming are the same.
        from openai import AsyncStream
        from openai.types.chat import ChatCompletionChunk

        stream = await self._get_client().post(
            "/chat/completions",
            body=kwargs,
            cast_to=ChatCompletionChunk,
            stream=True,
            stream_cls=AsyncStream[ChatCompletionChunk],
        )
        calls = ToolCallAccumulator()
        finish: str | None = None
        try:
            async for chunk in stream:
                usage = getattr(chunk, "usage", None)
                if usage is not None and (usage.prompt_tokens or usage.completion_tokens):
                    yield UsageChunk(
                        usage.prompt_tokens or 0,
                        usage.completion_tokens or 0,
                        cost_of(self.wire_model, usage.prompt_tokens or 0, usage.completion_tokens or 0),
                    )
                for choice in chunk.choices or ():
                    delta = choice.delta
                    if delta is not None:
                        if delta.content:
                            yield TextChunk(delta.content)
                        if delta.tool_calls:
                            calls.add(delta.tool_calls)
                    if choice.finish_reason:
                        finish = choice.finish_reason
        finally:
            await stream.close()
        for call in calls.complete():
            yield call
        yield FinishChunk(finish or ("tool_calls" if calls else "stop"))
