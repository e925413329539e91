"""What an answer that is not the API is reported as: short, printable, naming what to check."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from swebash_ai import errors
from swebash_ai.providers.base import (
    Chunk,
    TextChunk,
    ToolCall,
    classify_error,
    classify_status,
    first_words,
    not_the_api,
)
from swebash_ai.providers.text_tools import TextToolCallProvider


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("<html><head><title>Proxy login</title></head><body><h1>Sign in</h1></body></html>",
         "Proxy login Sign in"),  # the title first, tags gone
        ("<html><title>Blocked</title><body>Access denied</body></html>", "Blocked Access denied"),
        ("<script>steal()</script><style>p{}</style><p>Hello</p>", "Hello"),  # scripts and styles dropped
        ("Bad \x1b[31mGateway\x07\n\n  now", "Bad [31mGateway now"),  # no escape reaches the terminal
        ("", ""),
        (b"\xff\xfebinary", "��binary"),  # undecodable bytes are replaced, not raised
        ("word " * 100, ("word " * 16).strip() + "…"),  # short: 80 characters at most
    ],
)
def test_first_words(body: str | bytes, expected: str) -> None:
    assert first_words(body) == expected


def test_not_the_api_names_what_came_back_and_what_to_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://user:secret@proxy:3128")
    err = not_the_api(200, "text/html; charset=utf-8", "<title>Sign in</title>",
                      api_base="http://user:pw@host:8080/v1?key=abc", model="openai/m")
    assert isinstance(err, errors.NotTheApiError) and not err.retryable
    assert err.message == "http://host:8080/v1 answered 200 with text/html, not the model's API: 'Sign in'"
    assert "SWEBASH_AI_API_BASE" in (err.hint or "") and "HTTPS_PROXY set" in (err.hint or "")
    assert "secret" not in str(err) and "pw" not in str(err) and "abc" not in str(err)


def test_an_html_error_page_is_not_the_api_whatever_its_status() -> None:
    err = classify_status(502, "<!DOCTYPE html><html><title>502 Bad Gateway</title></html>", model="m")
    assert isinstance(err, errors.NotTheApiError) and not err.retryable
    assert "502 Bad Gateway" in err.message and "<" not in err.message
    assert type(classify_status(502, '{"error": {"message": "upstream"}}')) is errors.ProviderUnavailableError
    quoted = classify_status(400, '{"error": {"message": "cannot parse <html><body> in the prompt"}}')
    assert type(quoted) is errors.BadRequestError  # the API's own error, quoting HTML


def test_a_json_error_inside_a_client_message_shows_its_message() -> None:
    raw = 'litellm.RateLimitError: AnthropicException - b\'{"type": "error", "error": {"message": "slow"}}\'. Handle'
    assert classify_status(429, raw).message == "The provider answered 429: slow"  # the title says "Rate limited"


class _CutAfter:
    """A provider whose answer breaks off after ``pieces``."""

    model = "cut"

    def __init__(self, *pieces: str) -> None:
        self.pieces = pieces

    async def stream(self, messages: Any, tools: Any = None, tool_choice: str = "auto") -> AsyncIterator[Chunk]:
        for piece in self.pieces:
            yield TextChunk(piece)
        raise errors.StreamInterruptedError("The answer from cut broke off: the stream ended without its end marker")


@pytest.mark.parametrize("text_mode", [True, False])
async def test_text_held_as_a_possible_call_is_kept_and_never_run_when_the_stream_is_cut(text_mode: bool) -> None:
    tools = [{"type": "function", "function": {"name": "write_file", "parameters": {"type": "object"}}}]
    cut = '```json\n{"tool": "write_file", "arguments": {"path": "a.txt", "content": "x"}}\n```'[:-6]
    wrapper = TextToolCallProvider(_CutAfter(cut[:10], cut[10:]), text_mode=text_mode)
    seen: list[Chunk] = []
    with pytest.raises(errors.StreamInterruptedError):
        async for chunk in wrapper.stream([{"role": "user", "content": "hi"}], tools):
            seen.append(chunk)
    assert "".join(c.text for c in seen if isinstance(c, TextChunk)) == cut
    assert not [c for c in seen if isinstance(c, ToolCall)]


def test_litellm_wrapping_is_taken_off_the_message() -> None:
    err = classify_error(TimeoutError("litellm.Timeout: Ollama_chatException - litellm.Timeout: Connection timed out."
                                      " Handle with `litellm.Timeout`."), model="m")
    assert err.message == "The provider did not answer in time: Connection timed out"
    assert isinstance(err, errors.ProviderUnavailableError)
