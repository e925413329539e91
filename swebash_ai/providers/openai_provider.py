"""OpenAI-compatible endpoints through the official ``openai`` async client (the fast lane).

OpenAI itself and anything reached through ``SWEBASH_AI_API_BASE`` (Ollama's ``/v1``, vLLM, LM Studio,
llama.cpp, OpenRouter...) take this path: it imports in a fraction of litellm's time, which is what keeps a
one-shot answer quick. The client's own retries are off; :class:`RetryingProvider` does them once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from swebash_ai.providers.base import Chunk, EndpointProvider, Message, openai_format_chunks
from swebash_ai.providers.pricing import cost_of


class OpenAIProvider(EndpointProvider):
    """Chat Completions streaming over the official client."""

    def __init__(self, model: str, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        # litellm's "openai/gpt-4.1" names the provider; the API itself wants "gpt-4.1".
        self.wire_model = model.split("/", 1)[1] if model.startswith("openai/") else model
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
        # ``cast_to=object`` keeps each streamed chunk the plain dict it was parsed as: building the SDK's
        # pydantic ChatCompletionChunk costs ~0.3 ms per chunk (half the CPU of a fast stream, on the
        # thread the UI shares the interpreter with) to be read once, field by field.
        from openai import AsyncStream

        stream = await self._get_client().post(
            "/chat/completions",
            body=kwargs,
            cast_to=object,
            stream=True,
            stream_cls=AsyncStream[object],
        )
        try:
            async for chunk in openai_format_chunks(stream, lambda p, c: cost_of(self.wire_model, p, c)):
                yield chunk
        finally:
            await stream.close()
