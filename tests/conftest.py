"""Shared fixtures. Every test runs with a private HOME and swebash-ai home, and no provider keys,
so nothing reads or writes the real user's files and nothing reaches a real provider."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from swebash_ai.testing.fake_server import FakeLLMServer

_PROVIDER_VARS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "OLLAMA_HOST",
    "OPENAI_BASE_URL",
    "NO_COLOR",
)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh HOME and SWEBASH_AI_HOME; no SWEBASH_AI_* or provider variables from the outside."""
    home = tmp_path_factory.mktemp("home")
    for name in list(os.environ):
        if name.startswith("SWEBASH_AI_") or name in _PROVIDER_VARS or name.startswith("XDG_"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SWEBASH_AI_HOME", str(home / ".swebash-ai"))
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    # Never probe a real Ollama on this machine: point the probe at a closed loopback port.
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    # Never touch the real user's keyring: the tests that want one install a fake backend.
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    # No language server after the edits of tests that are about something else (the test extra installs ty):
    # tests/lsp/ turn them on where they are the subject.
    monkeypatch.setenv("SWEBASH_AI_LSP_DIAGNOSTICS", "off")
    return home


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working directory that the tests chdir into."""
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.chdir(ws)
    return ws


@pytest.fixture(scope="session")
def litellm_loaded() -> None:
    """litellm imported once per worker, in set-up: its import takes seconds of CPU (a minute on a loaded
    machine), which must never count against a test's own bound on a turn (``asyncio.wait_for(run(...), 20)``)."""
    from swebash_ai.providers.litellm_provider import import_litellm

    import_litellm()


@pytest.fixture
def fake_llm() -> Iterator[FakeLLMServer]:
    """A scripted OpenAI-compatible server on 127.0.0.1 (real HTTP + SSE)."""
    with FakeLLMServer("openai") as server:
        yield server
    assert not server.violations, server.violations


@pytest.fixture
def fake_anthropic() -> Iterator[FakeLLMServer]:
    """A scripted Anthropic Messages API server on 127.0.0.1."""
    with FakeLLMServer("anthropic") as server:
        yield server
    assert not server.violations, server.violations


@pytest.fixture
def llm_env(fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> FakeLLMServer:
    """Settings environment pointing swebash-ai at the fake server with quick retries."""
    monkeypatch.setenv("SWEBASH_AI_MODEL", "openai/fake-model")
    monkeypatch.setenv("SWEBASH_AI_API_BASE", fake_llm.base_url)
    monkeypatch.setenv("SWEBASH_AI_API_KEY", "sk-test-0000000000000000")
    monkeypatch.setenv("SWEBASH_AI_RETRY_BASE_DELAY", "0")
    return fake_llm
