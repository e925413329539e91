"""Every provider that is not OpenAI-compatible (Anthropic, Gemini, Ollama native, Bedrock...) via litellm.

The only module that imports litellm, and only when a request is made: the import costs seconds. Before it,
``LITELLM_LOCAL_MODEL_COST_MAP`` keeps litellm from fetching a price list over the network and
``LITELLM_MODE=PRODUCTION`` from loading a ``.env`` file into the environment (see
:mod:`swebash_ai.config.ambient`), and after it
``suppress_debug_info`` keeps it from printing to stdout (which is the answer in one-shot mode). litellm's
own retries are off; :class:`RetryingProvider` does them once.

litellm ends every stream with a finish reason of its own, whether or not the provider sent one, so the
end marker is read from what litellm *received* (``received_finish_reason``: the OpenAI finish reason,
Anthropic's stop reason, Ollama's ``done``). A stream that ended with neither text nor a finish, from a
response whose content type is not the API's, is reported as not the API (litellm reads past an HTML page
as an empty stream; its first words are not kept by litellm, its content type is).
"""

from __future__ import annotations

import ast
import re
import sys
import threading
from collections.abc import AsyncIterator, Sequence
from typing import Any

from swebash_ai import errors
from swebash_ai.config.ambient import litellm_import_environment
from swebash_ai.providers.base import (
    Chunk,
    EndpointProvider,
    Message,
    TextChunk,
    UsageChunk,
    first_words,
    not_the_api,
    openai_format_chunks,
)

_lock = threading.Lock()


def import_litellm() -> Any:
    """Import and quiet litellm (idempotent, thread-safe: the TUI preloads it in a background thread)."""
    with _lock, litellm_import_environment():
        try:
            import litellm
        except BaseException:
            # An import cut short (Ctrl-C, a timeout's exception, an error in one of its modules) leaves parts of
            # litellm in sys.modules, and every later import would find them half initialised ("partially
            # initialized module 'litellm'"): forget them all, so that the next request imports it afresh.
            for name in [n for n in sys.modules if n == "litellm" or n.startswith("litellm.")]:
                sys.modules.pop(name, None)
            raise

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
        shown = False
        done = [False]
        try:
            async for chunk in openai_format_chunks(
                _through_last_line(stream, done), lambda usage: self._cost(litellm, usage),
                lambda finish: done[0] or _received_end(stream, finish), self.on_call_start,
            ):
                shown = shown or isinstance(chunk, TextChunk)
                yield chunk
        except errors.IncompleteAnswerError:
            status, content_type = _answer_of(stream)
            if not shown and content_type is not None and not _streams(content_type):
                raise not_the_api(status, content_type, None, api_base=self.api_base, model=self.model) from None
            raise

    def _cost(self, litellm: Any, usage: UsageChunk) -> float | None:
        """litellm's price, with cache reads and writes priced as the provider bills them."""
        try:
            prompt, completion = litellm.cost_per_token(
                model=self.model,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                cache_read_input_tokens=usage.cached_tokens,
                cache_creation_input_tokens=usage.cache_write_tokens,
            )
            return float(prompt + completion)
        except Exception:  # unknown price: no cost, not an error
            return None


#: How litellm words a streamed line of Ollama's that its parser could not read (it names the Python error and
#: quotes the line as a Python dict).
_UNREAD_LINE = re.compile(r"(\w+Error: .*?), Got unexpected response from (\w+): (\{.*\})", re.S)


async def _through_last_line(stream: Any, done: list[bool]) -> AsyncIterator[Any]:
    """litellm's chunks, with Ollama's last line read here when litellm cannot read it.

    Ollama ends a stream with a line that has ``"done": true`` and the counts, and (as its API documents)
    may leave ``message`` out of it: litellm's parser then raises a ``KeyError`` as a 400. That line is the
    end marker, not an error: its counts become the usage and ``done[0]`` says the stream really ended. Any
    other line litellm could not read is an error that says so (never "the provider answered 400").
    """
    try:
        async for chunk in stream:
            yield chunk
    except Exception as exc:
        found = _UNREAD_LINE.search(str(getattr(exc, "message", None) or exc))
        if found is None:
            raise
        try:
            line = ast.literal_eval(found.group(3))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            line = None
        if not (isinstance(line, dict) and line.get("done") is True):
            raise errors.IncompleteAnswerError(
                f"{found.group(2)} sent a line that could not be read ({found.group(1).rsplit(' - ', 1)[-1]}): "
                f"'{first_words(found.group(3))}'"
            ) from exc
        done[0] = True
        prompt, completion = line.get("prompt_eval_count"), line.get("eval_count")
        yield {"choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion}}


def _received_end(stream: Any, finish: str | None) -> bool:
    """Whether the provider itself ended the stream (see the module docstring)."""
    if not hasattr(stream, "received_finish_reason"):
        return finish is not None
    return bool(stream.received_finish_reason or getattr(stream, "intermittent_finish_reason", None))


def _answer_of(stream: Any) -> tuple[int | None, str | None]:
    """The status and content type of the response behind a litellm stream, as far as litellm kept them."""
    inner = getattr(stream, "completion_stream", None)
    response = getattr(inner, "response", None) or getattr(inner, "http_response", None)
    status = getattr(response, "status_code", None)
    headers = getattr(response, "headers", None) or getattr(stream, "_response_headers", None)
    try:
        if headers is None:
            return status, None
        # litellm keeps some providers' headers under its own prefix
        kind = headers.get("content-type") or headers.get("llm_provider-content-type") or ""
    except AttributeError:
        return status, None
    return (status if isinstance(status, int) else None), str(kind)


def _streams(content_type: str) -> bool:
    """A content type of a streamed answer (a JSON body answering a streamed request is not one)."""
    kind = content_type.split(";")[0].strip().lower()
    return kind in ("text/event-stream", "application/x-ndjson")
