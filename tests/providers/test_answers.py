"""What an answer that is not the API is reported as: short, printable, naming what to check."""

from __future__ import annotations

import pytest

from swebash_ai import errors
from swebash_ai.providers.base import classify_status, first_words, not_the_api


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


def test_a_json_error_inside_a_client_message_shows_its_message() -> None:
    raw = 'litellm.RateLimitError: AnthropicException - b\'{"type": "error", "error": {"message": "slow"}}\'. Handle'
    assert classify_status(429, raw).message == "Rate limited by the provider: slow"
