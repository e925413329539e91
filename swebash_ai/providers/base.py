"""The provider contract: stream one completion as typed chunks, with retries and typed errors.

Every implementation yields the same chunks (:class:`TextChunk`, complete :class:`ToolCall`\\ s assembled
from deltas by index, :class:`UsageChunk`, :class:`FinishChunk`) and raises only
:class:`~swebash_ai.errors.ProviderError` subclasses. Retries live here, once: a retryable error (rate limit,
connection, timeout, 5xx, a stream that ended without its end marker) *before anything was shown* is retried
with exponential backoff; an error after that is a :class:`StreamInterruptedError` (retrying would repeat
text already shown): the answer is incomplete, and what arrived is kept.

A stream counts as complete only when its end marker arrived (a finish reason or ``[DONE]`` for OpenAI,
``message_stop``/a stop reason for Anthropic, ``done`` for Ollama): a server or proxy that closes the
connection cleanly mid-answer must not pass for a short answer, and tool calls whose arguments were cut are
never yielded (so never run). An answer that is not the API at all (a proxy's HTML page, plain text, JSON of
another shape) is a :class:`NotTheApiError`, never retried, whose message says what came back
(:func:`not_the_api`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from swebash_ai import errors
from swebash_ai.words import count

log = logging.getLogger(__name__)

Message = dict[str, Any]


@dataclass(frozen=True)
class TextChunk:
    text: str


@dataclass(frozen=True)
class ReasoningChunk:
    """Reasoning the model shows before or between its answer (``reasoning_content``): never sent back."""

    text: str


@dataclass(frozen=True)
class ToolCall:
    """One complete tool call: ``arguments`` is the raw JSON string the model sent (may be invalid)."""

    id: str
    name: str
    arguments: str

    def to_message(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


@dataclass(frozen=True)
class ProviderToolChunk:
    """A tool the provider ran itself (Anthropic's server tools: web search, code execution, tool search):
    shown as what it is, never run here. ``arguments`` is the raw JSON string the model sent."""

    id: str
    name: str
    arguments: str

    def describe(self) -> str:
        """One line for people: which tool, with what (shortened), and that it ran at the provider."""
        shown = " ".join(self.arguments.split())
        shown = shown if len(shown) <= 120 else shown[:119] + "…"
        shown = "".join(ch if ch.isprintable() else " " for ch in shown)
        return f"The provider ran its own tool {self.name or '(unnamed)'}{' ' + shown if shown else ''} (not run here)"


@dataclass(frozen=True)
class UsageChunk:
    """Tokens of one response. ``cached_tokens`` is the part of ``prompt_tokens`` the provider read from its
    prompt cache (billed lower); ``cache_write_tokens`` the part it wrote to it (Anthropic bills it higher)."""

    prompt_tokens: int
    completion_tokens: int
    cost: float | None = None
    cached_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True)
class FinishChunk:
    reason: str


Chunk = TextChunk | ReasoningChunk | ToolCall | ProviderToolChunk | UsageChunk | FinishChunk


@dataclass
class _Partial:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    emitted: bool = False


def _get(obj: Any, key: str) -> Any:
    # ``type(obj) is dict`` first: the JSON the httpx lane reads is plain dicts, and the ABC check costs more.
    return obj.get(key) if type(obj) is dict or isinstance(obj, Mapping) else getattr(obj, key, None)


def _whole_object(raw: str) -> bool:
    """Are these arguments a complete JSON object? Nothing valid can follow its closing brace, so no later
    fragment can belong to it: the call cannot have been cut."""
    text = raw.strip()
    if not text.endswith("}"):  # cheap: most fragments end mid-value
        return False
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


class ToolCallAccumulator:
    """Assembles streamed tool-call deltas into complete calls, each as soon as it is known to be complete.

    Deltas are keyed by ``index``; ids, names and argument fragments may arrive split in any way. Some
    servers repeat the id or the full name on every delta: a repeated identical value is not appended twice.

    A call is complete early (:meth:`add` returns it) when two things hold: a delta for another index came
    after it (the model moved on: the next call started, or, through litellm, Anthropic closed that block and
    opened the next), and its arguments are a whole JSON object. Both, because servers may interleave the
    deltas of several calls (then "another index" says nothing), and invalid arguments may begin with a
    valid object. Calls complete early in index order; the rest (the last call always) come from
    :meth:`complete` at the end of the stream, after the caller knows the stream really ended.
    """

    def __init__(self, on_name: Callable[[str], None] | None = None) -> None:
        self._calls: dict[int, _Partial] = {}
        self._next = 0  # calls before this position (in index order) were returned early
        self._on_name = on_name  # told a call's name as it streams in (RetryingProvider.on_call_start)

    def add(self, delta_calls: Sequence[Any] | None) -> list[ToolCall]:
        """Take one chunk's tool-call deltas; return the calls they showed to be complete (usually none)."""
        last: int | None = None
        for position, delta in enumerate(delta_calls or ()):
            index = _get(delta, "index")
            if index is None:
                index = position
            last = int(index)
            part = self._calls.setdefault(last, _Partial())
            if part.emitted:
                # A fragment for a call already handed out can only come from a server that broke the
                # format (the arguments were already a whole object): the call stands as it was run.
                log.warning("tool call %d got a fragment after it was complete; ignored", last)
                continue
            call_id = _get(delta, "id")
            if call_id and call_id != part.id:
                part.id = call_id if part.id and call_id.startswith(part.id) else part.id + call_id
            fn = _get(delta, "function")
            if fn is None:
                continue
            name = _get(fn, "name")
            if name and name != part.name:
                part.name = name if part.name and name.startswith(part.name) else part.name + name
                if self._on_name is not None:
                    self._on_name(part.name)
            args = _get(fn, "arguments")
            if args:
                part.arguments.append(args)
        return [] if last is None else self._ready(last)

    def _ready(self, active: int) -> list[ToolCall]:
        out: list[ToolCall] = []
        order = sorted(self._calls)
        while self._next < len(order) and order[self._next] != active:
            part = self._calls[order[self._next]]
            if part.emitted:  # a lower index that arrived late
                self._next += 1
                continue
            if not (part.name and _whole_object("".join(part.arguments))):
                break
            out.append(self._emit(part))
            self._next += 1
        return out

    def _emit(self, part: _Partial) -> ToolCall:
        part.emitted = True
        part.id = part.id or f"call_{uuid.uuid4().hex[:24]}"  # the conversation needs ids to pair
        return ToolCall(part.id, part.name, "".join(part.arguments))

    def __bool__(self) -> bool:
        return bool(self._calls)

    def complete(self) -> list[ToolCall]:
        """The calls not returned early, in index order; a call without an id gets one."""
        return [self._emit(part) for _, part in sorted(self._calls.items()) if not part.emitted]


@runtime_checkable
class Provider(Protocol):
    """Streams completions. ``model`` is the name shown to people (``openai/gpt-4.1``)."""

    model: str

    def stream(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, tool_choice: str = "auto"
    ) -> AsyncIterator[Chunk]: ...


RetryCallback = Callable[[errors.ProviderError, float, int], None]


class RetryingProvider:
    """Shared retry and error-classification logic; subclasses implement :meth:`_stream_once`."""

    model: str = ""

    def __init__(
        self,
        *,
        retries: int = 3,
        base_delay: float = 1.0,
        max_delay: float = 30.0,
        on_retry: RetryCallback | None = None,
    ) -> None:
        self.retries = retries
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.on_retry = on_retry
        self.on_call_start: Callable[[str], None] | None = None
        """Told the name of each tool call as soon as it streams in, long before its arguments end: the session
        starts what the call will need (a command's supervisor) then, and never for an answer that calls
        nothing. A name streamed in pieces is told as it grows."""

    def _stream_once(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None, tool_choice: str
    ) -> AsyncIterator[Chunk]:
        raise NotImplementedError

    def classify(self, exc: BaseException) -> errors.ProviderError:
        return classify_error(exc, model=self.model, api_base=getattr(self, "api_base", None))

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, tool_choice: str = "auto"
    ) -> AsyncIterator[Chunk]:
        attempt = 0
        while True:
            started = False
            try:
                async for chunk in self._stream_once(messages, tools, tool_choice):
                    # Usage is not shown to anyone as the answer: a retry after it repeats nothing.
                    started = started or not isinstance(chunk, UsageChunk)
                    yield chunk
                return
            except (asyncio.CancelledError, GeneratorExit):
                raise
            except errors.ProviderError as exc:
                err = exc
            except Exception as exc:
                err = self.classify(exc)
                err.__cause__ = exc
            if started:
                raise errors.StreamInterruptedError(
                    f"The answer from {self.model} broke off: {err.message}",
                    hint="What arrived is shown and kept in the session, marked incomplete; ask again to continue.",
                    status=err.status,
                ) from err
            if not err.retryable or attempt >= self.retries:
                if attempt:
                    err.message += f" (gave up after {attempt + 1} attempts)"
                raise err
            delay = min(self.max_delay, self.base_delay * (2**attempt))
            if err.retry_after is not None:
                delay = min(self.max_delay, max(delay, err.retry_after))
            attempt += 1
            log.info("provider error %s; retry %d/%d in %.1fs", err.title, attempt, self.retries, delay)
            if self.on_retry is not None:
                self.on_retry(err, delay, attempt)
            await asyncio.sleep(delay)


class EndpointProvider(RetryingProvider):
    """A provider reached over HTTP with a model name, an optional endpoint and key, and a timeout."""

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


def _finish_seen(finish: str | None) -> bool:
    return finish is not None


def _count(obj: Any, key: str) -> int:
    value = _get(obj, key) if obj is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def usage_chunk(usage: Any) -> UsageChunk | None:
    """The tokens of an OpenAI-format ``usage`` (a dict or litellm's object); None when it counts nothing.

    Cached prompt tokens come as ``prompt_tokens_details.cached_tokens`` (OpenAI, and litellm for every
    provider), ``cache_read_input_tokens`` (litellm's Anthropic usage, some gateways) or
    ``prompt_cache_hit_tokens`` (DeepSeek). In all of them they are part of ``prompt_tokens``.
    """
    prompt, completion = _count(usage, "prompt_tokens"), _count(usage, "completion_tokens")
    if not (prompt or completion):
        return None
    cached = (_count(_get(usage, "prompt_tokens_details"), "cached_tokens") or _count(usage, "cache_read_input_tokens")
              or _count(usage, "prompt_cache_hit_tokens"))  # fmt: skip
    written = _count(usage, "cache_creation_input_tokens")
    return UsageChunk(prompt, completion, None, min(cached, prompt), min(written, prompt))


async def openai_format_chunks(
    stream: AsyncIterator[Any],
    cost: Callable[[UsageChunk], float | None],
    ended: Callable[[str | None], bool] = _finish_seen,
    on_call_start: Callable[[str], None] | None = None,
) -> AsyncIterator[Chunk]:
    """Typed chunks from a stream of OpenAI-format ``chat.completion.chunk`` objects or plain JSON dicts.

    Text is yielded as it arrives; tool-call deltas are assembled, and each call is yielded as soon as it is
    complete (see :class:`ToolCallAccumulator`: the loop may start it while the rest streams), the last one at
    the end; usage once (some servers repeat it); then the finish reason. ``ended(finish_reason)`` says
    whether the stream reached its end marker; when it did not, :class:`~swebash_ai.errors.IncompleteAnswerError`
    is raised instead of the remaining tool calls and the finish (arguments may have been cut: such a call must
    never run; a call yielded early had whole arguments and the model had moved on).
    """
    calls = ToolCallAccumulator(on_call_start)
    finish: str | None = None
    usage_seen = False
    async for chunk in stream:
        text = _text_only(chunk)
        if text is not None:  # nearly every chunk of an answer: nothing else to read in it
            if text:
                yield TextChunk(text)
            continue
        usage = _get(chunk, "usage")
        if usage is not None and not usage_seen:
            counted = usage_chunk(usage)
            if counted is not None:
                usage_seen = True
                yield replace(counted, cost=cost(counted))
        for choice in _get(chunk, "choices") or ():
            delta = _get(choice, "delta")
            if delta is not None:
                thought = _get(delta, "reasoning_content") or _get(delta, "reasoning")
                if thought and isinstance(thought, str):  # DeepSeek, vLLM, llama.cpp; OpenRouter, Ollama
                    yield ReasoningChunk(thought)
                for part in content_chunks(_get(delta, "content")):
                    yield part
                tool_calls = _get(delta, "tool_calls")
                if tool_calls:
                    for call in calls.add(tool_calls):
                        yield provider_ran(call)
            reason = _get(choice, "finish_reason")
            if reason:
                finish = reason
    if not ended(finish):
        n = len(calls.complete())
        cut = f" ({count(n, 'tool call')} with cut arguments {'was' if n == 1 else 'were'} not run)" if calls else ""
        raise errors.IncompleteAnswerError(f"the stream ended without its end marker{cut}")
    ours = False
    for call in calls.complete():
        ran = provider_ran(call)
        ours = ours or isinstance(ran, ToolCall)
        yield ran
    if finish == "tool_calls" and not ours and calls:
        finish = "stop"  # every call was one the provider ran itself: nothing is left for us to run
    yield FinishChunk(finish or ("tool_calls" if calls else "stop"))


def _text_only(chunk: Any) -> str | None:
    """The text of a chunk of the common shape (a plain ``dict``, no usage, one choice whose delta has a string
    ``content`` and no tool calls, reasoning or finish reason), read with a few dict lookups; ``None`` for any
    other chunk, which the general reading in :func:`openai_format_chunks` takes. Both give the same chunks."""
    if type(chunk) is not dict or chunk.get("usage") is not None:
        return None
    choices = chunk.get("choices")
    if type(choices) is not list or len(choices) != 1:
        return None
    choice = choices[0]
    if type(choice) is not dict or choice.get("finish_reason"):
        return None
    delta = choice.get("delta")
    if type(delta) is not dict:
        return None
    content = delta.get("content")
    if type(content) is not str or delta.get("tool_calls") or delta.get("reasoning_content") or delta.get("reasoning"):
        return None
    return content


#: Anthropic's ids of the tools it runs itself (``server_tool_use`` blocks); litellm passes them on as tool
#: calls like any other, and only the id tells them apart (a server tool may share a name with ours).
_SERVER_TOOL_ID = "srvtoolu_"


def provider_ran(call: ToolCall) -> ToolCall | ProviderToolChunk:
    """A call the provider ran itself becomes a :class:`ProviderToolChunk`; the others stay ours to run."""
    if call.id.startswith(_SERVER_TOOL_ID):
        return ProviderToolChunk(call.id, call.name, call.arguments)
    return call


def content_chunks(content: Any) -> list[TextChunk | ReasoningChunk]:
    """A delta's ``content``: a string (the usual), or a list of typed parts (Mistral's reasoning models:
    ``[{"type": "thinking", "thinking": [{"type": "text", "text": ...}]}, {"type": "text", "text": ...}]``).

    Parts are read by type: text is the answer, thinking and reasoning are reasoning; a part of any other
    type (a reference, an image, a type added later) is skipped with a debug note, never a crash.
    """
    if not content:
        return []
    if isinstance(content, str):
        return [TextChunk(content)]
    if not isinstance(content, Sequence):
        log.debug("content of type %s skipped", type(content).__name__)
        return []
    out: list[TextChunk | ReasoningChunk] = []
    for part in content:
        kind = _get(part, "type") if not isinstance(part, str) else "text"
        if kind == "text":
            text = part if isinstance(part, str) else _get(part, "text")
            if isinstance(text, str) and text:
                out.append(TextChunk(text))
        elif kind in ("thinking", "reasoning"):
            thought = _plain_text(_get(part, kind) if _get(part, kind) is not None else _get(part, "text"))
            if thought:
                out.append(ReasoningChunk(thought))
        else:
            log.debug("content part of type %r skipped", kind)
    return out


def _plain_text(value: Any) -> str:
    """The text of a string or of a list of text parts (Mistral nests a thinking part's text that way)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Sequence):
        return "".join(t for t in (_get(p, "text") if not isinstance(p, str) else p for p in value)
                       if isinstance(t, str))
    return ""


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    # litellm's errors carry an empty stand-in response; the real headers are kept beside it.
    headers = getattr(response, "headers", None) or getattr(exc, "litellm_response_headers", None)
    if not headers:
        return None
    value = next((v for k, v in headers.items() if str(k).lower() == "retry-after"), None)
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


#: What litellm wraps a provider's message in: ``litellm.Timeout: Ollama_chatException - ...`` (sometimes
#: twice), ``b'...'`` around a body, ``. Handle with `litellm.X``` after it.
_LITELLM_WRAPPING = re.compile(r"litellm\.\w+: |\b\w+Exception - |\. Received Model Group=.*$|"
                               r"\. Handle with `litellm\.\w+`\.?", re.S)
_BYTES_REPR = re.compile(r"^b'(.*)'$", re.S)


def classify_error(exc: BaseException, *, model: str = "", api_base: str | None = None) -> errors.ProviderError:
    """Map an ``openai`` (or litellm, whose exceptions subclass openai's) error to our error tree."""
    import openai  # already imported by whichever client raised

    context = exc.__context__
    if isinstance(exc, ValueError | TypeError | KeyError) and type(context).__module__.startswith("litellm."):
        # litellm failed while wrapping the provider's error (``int()`` of Groq's code "tool_use_failed"): the
        # error it was wrapping is what happened, not the ValueError.
        assert context is not None
        return classify_error(context, model=model, api_base=api_base)
    status = getattr(exc, "status_code", None)
    raw = str(getattr(exc, "message", None) or exc)
    for _ in range(3):  # the wrapping nests
        raw = _BYTES_REPR.sub(r"\1", _LITELLM_WRAPPING.sub("", raw.strip()))
    detail = _short(raw)
    if isinstance(exc, openai.APIStatusError):
        # One mapping of statuses (classify_status, which the httpx lane uses too); the class decides where a
        # litellm subclass carries an odd status_code.
        kinds = ((openai.AuthenticationError, 401), (openai.PermissionDeniedError, 403), (openai.NotFoundError, 404),
                 (openai.RateLimitError, 429), (openai.BadRequestError, 400), (openai.UnprocessableEntityError, 422))
        code = next((c for kind, c in kinds if isinstance(exc, kind)), status)
        if isinstance(code, int):
            return classify_status(code, raw, model=model, retry_after=_retry_after(exc), api_base=api_base)
    if isinstance(exc, openai.APITimeoutError):
        return errors.ProviderUnavailableError(f"The provider did not answer in time: {detail}")
    if isinstance(exc, openai.APIConnectionError):
        return errors.ProviderUnavailableError(
            f"Cannot reach the provider: {detail}",
            hint="Is the server running and SWEBASH_AI_API_BASE right? Are you online?",
        )
    name = type(exc).__name__
    if isinstance(status, str) and status and not status.isdigit():
        # An error the provider sent inside the stream, its code a word (Groq's "tool_use_failed")
        return errors.ProviderError(f"The provider reported an error ({_short(status, 60)}): {detail}")
    if "Timeout" in name:
        return errors.ProviderUnavailableError(f"The provider did not answer in time: {detail}")
    if any(w in name for w in ("Connect", "Network", "Protocol", "ReadError")):
        return errors.ProviderUnavailableError(f"Connection problem: {name}: {detail}")
    return errors.ProviderError(f"{name}: {detail}")


def classify_status(
    status: int, raw: str, *, model: str = "", retry_after: str | float | None = None, api_base: str | None = None
) -> errors.ProviderError:
    """Map an HTTP error status and its body to our error tree, without importing any client library: the
    httpx lane's errors, and (through :func:`classify_error`) the openai and litellm clients' status errors."""
    page = _HTML.search(raw)
    # A web page in place of the API's error JSON (not a JSON error that quotes some HTML): asking again
    # brings the same page.
    if page and "{" not in raw[: page.start()]:
        end = raw.lower().rfind("</html>")
        body = raw[page.start() : end + 7] if end > page.start() else raw[page.start() :]
        return not_the_api(status, "text/html", body, api_base=api_base, model=model)
    detail = _short(raw)
    try:
        wait = float(retry_after) if retry_after is not None else None
    except ValueError:
        wait = None
    if status in (401, 403):
        return errors.AuthenticationError(
            f"The provider rejected the API key for {model or 'the model'} ({status}): {detail}",
            hint="Set SWEBASH_AI_API_KEY (or the provider's own variable, e.g. OPENAI_API_KEY) to a valid key.",
            status=status,
        )
    if status == 404:
        return errors.ModelNotFoundError(
            f"Model '{model}' was not found: {detail}",
            hint="Check SWEBASH_AI_MODEL (litellm's provider/model form, e.g. openai/gpt-4.1) and SWEBASH_AI_API_BASE.",
            status=status,
        )
    if status == 429:
        return errors.RateLimitError(f"The provider answered 429: {detail}", status=status, retry_after=wait)
    if status in (400, 422):
        lowered = raw.lower()
        if "context" in lowered and any(w in lowered for w in ("length", "too long", "maximum", "exceed")):
            return errors.ContextTooLongError(
                f"It does not fit the context of {model}: {detail}",
                hint="Start a new conversation (/new) or lower SWEBASH_AI_CONTEXT_TOKENS.",
                status=status,
            )
        if _IMAGE_REFUSAL.search(raw):
            return errors.ImageInputError(
                f"{model or 'The model'} refused the image ({status}): {detail}",
                hint="Choose a model that takes images (SWEBASH_AI_MODEL), or ask without the image.",
                status=status,
            )
        return errors.BadRequestError(f"The provider answered {status}: {detail}", status=status)
    if status >= 500:
        return errors.ProviderUnavailableError(f"The provider failed ({status}): {detail}", status=status)
    return errors.BadRequestError(f"The provider answered {status}: {detail}", status=status)


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    try:  # many providers put a JSON body in the message, with more text around it; show its message field
        start = text.index("{")
        body, _ = json.JSONDecoder().raw_decode(text[start:])
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            text = str(inner["message"])
        elif isinstance(inner, str) and inner:
            text = inner
    except (ValueError, AttributeError):
        pass
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


_HTML = re.compile(r"<(!doctype html|html|head|body|title)\b", re.I)
#: How providers word a refused image: OpenAI "Invalid content type. image_url is only supported by certain
#: models", vLLM/Ollama "does not support image input", "model is not multimodal", "vision is not supported".
_IMAGE_REFUSAL = re.compile(r"image_url|image input|images? (?:are|is) not supported|not (?:a )?multimodal|"
                            r"(?:vision|images?) (?:is |are )?not (?:supported|enabled)|"
                            r"does(?: not|n't) support (?:images?|vision)", re.I)

#: Proxy variables httpx and litellm's clients honour; named (never their values) when something that is not
#: the API answered.
PROXY_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY")


def first_words(body: bytes | str, limit: int = 80) -> str:
    """The start of a body as one short, printable line: HTML tags and scripts dropped, whitespace collapsed,
    control and escape characters removed (a hostile page must not drive the terminal)."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    text = text[:20_000]
    text = re.sub(r"<(script|style)\b.*?(</\1>|$)", " ", text, flags=re.I | re.S)
    text = re.sub(r"<!--.*?(-->|$)|<[^>]*>?", " ", text, flags=re.S)
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def not_the_api(
    status: int | None, content_type: str, body: bytes | str | None, *, api_base: str | None = None, model: str = ""
) -> errors.NotTheApiError:
    """The error for an answer that is not the API: what came back (status, content type, first words; the
    body is ``None`` when the client did not keep it) and the settings that send requests there."""
    kind = content_type.split(";")[0].strip() or "no content type"
    words = first_words(body) if body is not None else ""
    shown = f": '{words}'" if words else (" (an empty body)" if body is not None else "")
    where = _safe_url(api_base) if api_base else "the provider's address"
    proxies = [name for name in PROXY_VARIABLES if os.environ.get(name) or os.environ.get(name.lower())]
    proxy_note = f"the proxy variables ({', '.join(proxies)} set)" if proxies else "the proxy variables (none set)"
    return errors.NotTheApiError(
        f"{where} answered {'' if status is None else f'{status} '}with {kind}, not the model's API{shown}",
        hint=f"Check SWEBASH_AI_API_BASE (the model's API endpoint) and {proxy_note}; a proxy or a login page "
        f"may be answering instead of {model or 'the model'}.",
        status=status,
    )


def _safe_url(url: str) -> str:
    """``url`` without credentials or query (both may hold secrets)."""
    match = re.match(r"^([a-z][a-z0-9+.-]*://)(?:[^@/]*@)?([^?#]*)", url, re.I)
    return match.group(1) + match.group(2) if match else url.split("?")[0]
