"""OpenAI-compatible chat completions spoken directly over httpx (the fast lane).

OpenAI itself and anything reached through ``SWEBASH_AI_API_BASE`` (Ollama's ``/v1``, vLLM, LM Studio,
llama.cpp, OpenRouter...) take this path. It sends the same request the official client sends
(``POST {base}/chat/completions`` with ``stream: true`` and ``stream_options.include_usage``) and reads the
server-sent events with ``httpx-sse``. Why not the official client: importing it costs about half a second
of a one-shot answer (its type tree), and we read each chunk as the plain JSON dict it arrives as anyway.

Contract, as for every provider (:mod:`swebash_ai.providers.base`): typed chunks out; HTTP status errors are
classified from the status and the body (:func:`~swebash_ai.providers.base.classify_status`), transport
errors by kind; retries happen once, in :class:`~swebash_ai.providers.base.RetryingProvider`. One httpx
client per provider, kept open so that the turns of a tool loop reuse the connection.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Sequence
from typing import Any

from swebash_ai import errors
from swebash_ai.config.address import env_base
from swebash_ai.providers.base import (
    Chunk,
    EndpointProvider,
    Message,
    _short,
    classify_status,
    first_words,
    not_the_api,
    openai_format_chunks,
)
from swebash_ai.providers.pricing import cost_of
from swebash_ai.providers.wire import request_body

#: Where requests go when no endpoint is configured (the official client's default too).
DEFAULT_API_BASE = "https://api.openai.com/v1"


class HttpProvider(EndpointProvider):
    """Chat Completions streaming over httpx + httpx-sse."""

    reads_stored_results = True
    """Its request body copies the results a conversation set aside from where they are kept
    (:func:`~swebash_ai.providers.wire.request_body`)."""

    def __init__(self, model: str, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        # litellm's "openai/gpt-4.1" names the provider; the API itself wants "gpt-4.1".
        self.wire_model = wire_name(model)
        self._client: Any = None
        # The official client's OPENAI_BASE_URL is read by the rule SWEBASH_AI_API_BASE follows (a guessed scheme
        # is https:// unless the host is this machine); a value that is no address stops here, naming it.
        self.base = (self.api_base or env_base("OPENAI_BASE_URL") or DEFAULT_API_BASE).rstrip("/")

    def _url(self) -> str:
        return self.base + "/chat/completions"

    def _headers(self) -> dict[str, str]:
        key = self.api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if not self.api_base:
                raise errors.AuthenticationError(
                    f"No API key for {self.model}.",
                    hint="Set SWEBASH_AI_API_KEY (or OPENAI_API_KEY) to a valid key.",
                )
            key = "not-needed"  # local servers need no key; send a placeholder as the official client does
        headers = {"Authorization": f"Bearer {key}", "Accept": "text/event-stream"}
        # The official client sends these when set; keep requests the same whichever lane is used.
        for var, header in (("OPENAI_ORG_ID", "OpenAI-Organization"), ("OPENAI_PROJECT_ID", "OpenAI-Project")):
            if os.environ.get(var):
                headers[header] = os.environ[var]
        return headers

    def _get_client(self) -> Any:
        if self._client is None:
            self._client = self._new_client()
        return self._client

    def _new_client(self) -> Any:
        httpx = _import_httpx()
        # An https client builds a verifying SSL context (the CA bundle: ~20-80 ms). A plain-http endpoint
        # (a local server) never uses it, and redirects are not followed, so no request can reach https.
        plain = self._url().startswith("http://")
        return httpx.AsyncClient(
            timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0)),
            verify=not plain,
            follow_redirects=False,
        )

    async def warm(self) -> None:
        """Build the HTTP client in a thread (an https one reads the CA bundle) before the first request needs
        it: an editor calls this once a session is open. A request that came first keeps its own client."""
        if self._client is not None:
            return
        client = await asyncio.to_thread(self._new_client)
        if self._client is None:
            self._client = client
        else:
            await client.aclose()

    def classify(self, exc: BaseException) -> errors.ProviderError:
        """Transport errors by kind; never imports the openai package (that is the point of this lane)."""
        httpx = _import_httpx()

        detail = str(exc) or type(exc).__name__
        if isinstance(exc, httpx.TimeoutException):
            return errors.ProviderUnavailableError(f"The provider did not answer in time: {detail}")
        if isinstance(exc, httpx.ConnectError):
            return errors.ProviderUnavailableError(
                f"Cannot reach the provider: {detail}",
                hint="Is the server running and SWEBASH_AI_API_BASE right? Are you online?",
            )
        if isinstance(exc, httpx.TransportError):
            return errors.ProviderUnavailableError(f"Connection problem: {type(exc).__name__}: {detail}")
        return errors.ProviderError(f"{type(exc).__name__}: {_short(detail)}")

    async def _stream_once(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None, tool_choice: str
    ) -> AsyncIterator[Chunk]:
        client = self._get_client()  # first: imports httpx the light way before httpx_sse imports it
        from httpx_sse import aconnect_sse

        body: dict[str, Any] = {
            "model": self.wire_model,
            "messages": list(messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            body["tools"] = list(tools)
            body["tool_choice"] = tool_choice
        async with aconnect_sse(
            client, "POST", self._url(), content=request_body(body),
            headers={**self._headers(), "Content-Type": "application/json"},
        ) as source:
            response = source.response
            content_type = response.headers.get("content-type", "")
            cost = lambda u: cost_of(  # noqa: E731
                self.wire_model, u.prompt_tokens, u.completion_tokens, u.cached_tokens, u.cache_write_tokens
            )
            if response.status_code >= 400 or "text/event-stream" not in content_type.lower():
                raw = await _read_capped(response)
                whole = self._whole_answer(response.status_code, content_type, raw, response.headers)
                async for chunk in openai_format_chunks(_aiter([whole]), cost, on_call_start=self.on_call_start):
                    yield chunk
                return
            done = [False]
            events = _events(source, done)
            async for chunk in openai_format_chunks(events, cost, lambda finish: finish is not None or done[0],
                                                    self.on_call_start):
                yield chunk

    def _whole_answer(self, status: int, content_type: str, raw: bytes, headers: Any) -> dict[str, Any]:
        """A response that is not an event stream: an error of the API (raised, typed by its status), a
        whole completion from a server that ignored ``stream`` (returned as one chunk), or not the API at
        all (raised, never retried: see :func:`~swebash_ai.providers.base.not_the_api`)."""
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise not_the_api(status, content_type, raw, api_base=self._url(), model=self.model)
        if status >= 400:
            text = raw.decode("utf-8", "replace")
            raise classify_status(status, text, model=self.model, retry_after=headers.get("retry-after"))
        if body.get("error"):
            raise _reported_error(body["error"])
        choices = body.get("choices")
        if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
            raise not_the_api(status, content_type, raw, api_base=self._url(), model=self.model)
        # A whole ``chat.completion``: its messages become the deltas of a single chunk.
        deltas = []
        for choice in choices:
            message = dict(choice.get("message") or {})
            calls = message.get("tool_calls")
            if isinstance(calls, list):
                message["tool_calls"] = [{**c, "index": i} for i, c in enumerate(calls) if isinstance(c, dict)]
            deltas.append({"index": choice.get("index", 0), "delta": message,
                           "finish_reason": choice.get("finish_reason") or "stop"})
        return {"choices": deltas, "usage": body.get("usage")}


# Optional modules httpx and httpcore load when they are installed, for features this client never uses: httpx's
# command line (rich, click: ~45 ms), trio support in httpcore (~45 ms), HTTP/2 through h2 (~20 ms). Each
# import has a fallback for "not installed" that takes effect while the module is blocked.
_UNUSED_OPTIONAL = ("httpx._main", "trio", "h2")


def _import_httpx() -> Any:
    """``import httpx``, without the optional modules it would load for features we do not use.

    Blocking them (``sys.modules[name] = None``) only during the first import takes httpx's and httpcore's
    own "not installed" paths; they are unblocked afterwards, so any other library can still import them.
    """
    import sys

    loaded = "httpx" in sys.modules and "httpcore" in sys.modules
    blocked = [] if loaded else [m for m in _UNUSED_OPTIONAL if m not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        # Always through the import statement, never a sys.modules shortcut: while another thread (the TUI's
        # preload) is importing httpx, sys.modules holds a half-initialised module, and only the import
        # machinery's module lock waits for it to be complete. httpx imports httpcore only when a client is
        # made, so it is imported here too, inside the block.
        import httpcore  # noqa: F401
        import httpx
    finally:
        for name in blocked:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]
    return httpx


def wire_name(model: str) -> str:
    """The model's name on the wire: litellm's "openai/gpt-4.1" names the provider; the API wants "gpt-4.1"."""
    return model.split("/", 1)[1] if model.startswith("openai/") else model


def preload_http(model: str | None = None) -> None:
    """Import what the first request needs (the TUI calls this in a thread after its first frame); with
    ``model``, also find its price, which the first answer's usage needs (a search of a 3 MB list: done here,
    it does not hold the event loop at the end of the first turn, or before its first chunk)."""
    _import_httpx()
    import httpx_sse  # noqa: F401

    if model is not None:
        from swebash_ai.providers.pricing import cost_of

        cost_of(wire_name(model), 0, 0)


async def _events(source: Any, done: list[bool]) -> AsyncIterator[dict[str, Any]]:
    """The JSON chunks of the stream, up to ``[DONE]`` (``done[0]`` is set when it arrives); an error event in
    the stream is raised, and so is an event that is not JSON (the stream went bad: what follows is lost)."""
    async for event in source.aiter_sse():
        data = event.data
        if not data:
            continue
        if data.startswith("[DONE]"):
            done[0] = True
            return
        try:
            chunk = json.loads(data)
        except ValueError:
            raise errors.IncompleteAnswerError(
                f"the stream carried an event that is not JSON: '{first_words(data)}'"
            ) from None
        if isinstance(chunk, dict) and chunk.get("error"):
            raise _reported_error(chunk["error"])
        if not isinstance(chunk, dict):
            raise errors.IncompleteAnswerError(f"the stream carried an event of another shape: '{first_words(data)}'")
        yield chunk


def _reported_error(err: Any) -> errors.ProviderError:
    message = err.get("message") if isinstance(err, dict) else str(err)
    return errors.ProviderError(f"The provider reported an error: {_short(str(message or err))}")


async def _aiter(items: list[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
    for item in items:
        yield item


async def _read_capped(response: Any, cap: int = 65_536) -> bytes:
    """At most ``cap`` bytes of a body: enough to name what answered, never a whole large page."""
    data = b""
    async for block in response.aiter_bytes():
        data += block
        if len(data) >= cap:
            break
    return data[:cap]
