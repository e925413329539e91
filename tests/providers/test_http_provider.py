"""The httpx fast lane's own rules: status classification, plain-http clients without TLS, and what the
one-shot path imports (the behaviour shared with every provider is in test_conformance.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from swebash_ai import errors
from swebash_ai.providers import make_provider
from swebash_ai.providers.base import classify_status
from swebash_ai.providers.http_provider import HttpProvider
from swebash_ai.testing.fake_server import FakeLLMServer, Reply


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (401, '{"error": {"message": "bad key"}}', errors.AuthenticationError),  # key rejected: not retried
        (403, "forbidden", errors.AuthenticationError),  # same remedy as 401
        (404, "no such model", errors.ModelNotFoundError),  # wrong model name
        (429, "slow down", errors.RateLimitError),  # retryable, honours retry-after
        (400, "maximum context length exceeded", errors.ContextTooLongError),  # the user can act: /new
        (400, "bad field", errors.BadRequestError),  # any other refusal
        (422, "unprocessable", errors.BadRequestError),  # some servers use 422 for 400
        (503, "overloaded", errors.ProviderUnavailableError),  # 5xx: retryable
        (418, "teapot", errors.BadRequestError),  # an unusual 4xx is still a typed refusal
    ],
)
def test_status_classification(status: int, body: str, expected: type[errors.ProviderError]) -> None:
    err = classify_status(status, body, model="m", retry_after="2")
    assert type(err) is expected
    assert err.status == status
    if expected is errors.RateLimitError:
        assert err.retry_after == 2.0


def test_json_error_body_shows_its_message() -> None:
    err = classify_status(401, '{"error": {"message": "invalid api key"}}', model="m")
    assert "invalid api key" in err.message and "{" not in err.message


def test_plain_http_endpoint_gets_no_tls_context_and_https_verifies() -> None:
    plain = HttpProvider("openai/x", api_base="http://127.0.0.1:1/v1")._get_client()
    secure = HttpProvider("openai/x", api_base="https://example.invalid/v1")._get_client()
    assert plain._transport._pool._ssl_context.verify_mode.name == "CERT_NONE"
    assert secure._transport._pool._ssl_context.verify_mode.name == "CERT_REQUIRED"


def test_no_key_and_no_endpoint_is_an_authentication_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(errors.AuthenticationError):
        HttpProvider("openai/x")._headers()


async def test_server_error_status_is_unavailable_without_retries_when_none_allowed() -> None:
    with FakeLLMServer("openai") as server:
        server.enqueue(Reply.error(500, "boom"))
        provider = HttpProvider("openai/x", api_base=server.base_url, api_key="k", retries=0)
        with pytest.raises(errors.ProviderUnavailableError):
            _ = [c async for c in provider.stream([{"role": "user", "content": "hi"}])]


@pytest.mark.parametrize(("value", "base"), [
    # the official client's variable, written without a scheme: the rule of SWEBASH_AI_API_BASE
    ("localhost:8000/v1", "http://localhost:8000/v1"),  # this machine: http
    ("api.example.com/v1/", "https://api.example.com/v1"),  # another machine: never http guessed
    ("http://gpu-box:8000/v1", "http://gpu-box:8000/v1"),  # an explicit scheme is the user's word
    ("  ", "https://api.openai.com/v1"),  # blank is unset
])
def test_openai_base_url_follows_the_address_rule(monkeypatch: pytest.MonkeyPatch, value: str, base: str) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", value)
    assert HttpProvider("openai/x").base == base
    assert HttpProvider("openai/x", api_base="http://127.0.0.1:1/v1").base == "http://127.0.0.1:1/v1"  # it wins


def test_an_openai_base_url_that_is_no_address_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from swebash_ai.config.settings import Settings
    from swebash_ai.providers import ProviderChoice

    monkeypatch.setenv("OPENAI_BASE_URL", "my server")
    with pytest.raises(errors.ConfigError, match=r"OPENAI_BASE_URL='my server': .* is not an http:// or https:// URL"):
        make_provider(ProviderChoice("openai/x", None, "k", "test"), Settings())


async def test_a_local_openai_base_url_without_a_scheme_is_reached(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeLLMServer("openai") as server:
        server.enqueue(Reply.text("hello there"))
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url.removeprefix("http://"))
        provider = HttpProvider("openai/x", api_key="k", retries=0)
        chunks = [c async for c in provider.stream([{"role": "user", "content": "hi"}])]
    assert "hello there" in "".join(getattr(c, "text", "") for c in chunks)


def test_openai_compatible_models_take_the_http_lane() -> None:
    from swebash_ai.config.settings import Settings
    from swebash_ai.providers import ProviderChoice

    provider = make_provider(ProviderChoice("openai/x", "http://127.0.0.1:1/v1", None, "test"), Settings())
    assert isinstance(provider, HttpProvider)


def test_the_lane_imports_neither_the_openai_package_nor_the_httpx_cli() -> None:
    code = (
        "import sys\n"
        "from swebash_ai.providers.http_provider import HttpProvider\n"
        "HttpProvider('openai/x', api_base='http://127.0.0.1:1/v1')._get_client()\n"
        "import httpx_sse, httpx\n"
        "print(','.join(m for m in ('openai', 'httpx._main', 'click', 'trio', 'h2') if m in sys.modules),"
        " httpx.main.__module__)\n"
        # Unblocked again, so another library may still import them: no None left in sys.modules, and an
        # installed one imports (both are optional: a fresh install may have neither).
        "import importlib, importlib.util\n"
        "left = [m for m in ('trio', 'h2') if m in sys.modules and sys.modules[m] is None]\n"
        "for m in ('trio', 'h2'):\n"
        "    if importlib.util.find_spec(m) is not None:\n"
        "        importlib.import_module(m)\n"
        "print('still blocked:', ','.join(left) or 'none')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["httpx"]  # nothing heavy loaded; httpx's fallback main is in place
    assert lines[1] == "still blocked: none"
