"""``SWEBASH_AI_API_BASE``, ``api_base`` in a profile and ``OLLAMA_HOST`` written without a scheme follow the setup's
rule (config/address.py): ``http://`` only for this machine, so that a key never travels in clear text to another
machine because a scheme was guessed; what is not an address is refused by name when the settings load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from swebash_ai.config.settings import load_settings
from swebash_ai.errors import ConfigError
from swebash_ai.providers import choose_provider, ollama_host, ollama_models


def _write_config(text: str) -> Path:
    from swebash_ai.storage.locations import locations

    path = locations().config_file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize(("written", "used"), [
    ("localhost:8000/v1", "http://localhost:8000/v1"),  # this machine: http
    ("127.0.0.1:11434/v1/", "http://127.0.0.1:11434/v1"),
    ("gpu-box:8000/v1", "https://gpu-box:8000/v1"),  # another machine: never a guessed http://
    ("api.example.com/v1", "https://api.example.com/v1"),
    ("http://gpu-box:8000/v1", "http://gpu-box:8000/v1"),  # written by the user: kept
    ("", ""),  # empty is unset (every use tests its truth)
    ("  ", ""),  # so is blank (it used to be a "URL" of two spaces)
])
def test_the_environment_and_a_profile_get_the_same_scheme(monkeypatch: pytest.MonkeyPatch, written: str,
                                                           used: str | None) -> None:
    monkeypatch.setenv("SWEBASH_AI_API_BASE", written)
    assert load_settings().settings.api_base == used
    monkeypatch.delenv("SWEBASH_AI_API_BASE")
    _write_config(f'profile = "p"\n[profiles.p]\nmodel = "openai/m"\napi_base = "{written}"\n')
    loaded = load_settings()
    assert loaded.settings.api_base == used
    choice = choose_provider(loaded.settings, {}, probe_ollama=False)
    assert choice is not None and choice.api_base == used  # what the provider is built with


@pytest.mark.parametrize("written", ["not an address", "hello", "localhost:99999", "ftp://example.com"])
def test_what_is_not_an_address_is_refused_by_name(monkeypatch: pytest.MonkeyPatch, written: str) -> None:
    monkeypatch.setenv("SWEBASH_AI_API_BASE", written)
    with pytest.raises(ConfigError, match=rf"SWEBASH_AI_API_BASE='{written}': .* is not an http:// or https:// URL"):
        load_settings()
    monkeypatch.delenv("SWEBASH_AI_API_BASE")
    path = _write_config(f'[profiles.p]\napi_base = "{written}"\n')
    with pytest.raises(ConfigError, match=rf"'api_base' in \[profiles.p\] of {path}: .* is not an http://"):
        load_settings(profile="p")


@pytest.mark.parametrize(("value", "url"), [
    ("", "http://127.0.0.1:11434"),
    ("0.0.0.0", "http://0.0.0.0:11434"),  # what people set for the server; Ollama's port, as Ollama adds it
    ("127.0.0.1:11435", "http://127.0.0.1:11435"),
    ("[::1]", "http://[::1]:11434"),
    ("gpu-box:11434", "https://gpu-box:11434"),  # another machine: not http:// by guess (it used to be)
    ("http://gpu-box:11434/", "http://gpu-box:11434"),  # written by the user: kept
    ("not an address", "not an address"),  # left as it is: never probed, refused by name by the setup
])
def test_ollama_host_follows_the_same_rule(value: str, url: str) -> None:
    assert ollama_host({"OLLAMA_HOST": value} if value else {}) == url


@pytest.mark.parametrize(("value", "probed"), [
    ("0.0.0.0", True),  # this machine (the old prefix check skipped it)
    ("localhost:11434", True),
    ("http://localhost.evil.example:11434", False),  # the old prefix check probed it
    ("http://127.evil.example:11434", False),
    ("gpu-box:11434", False),
])
def test_only_this_machine_is_probed(monkeypatch: pytest.MonkeyPatch, value: str, probed: bool) -> None:
    opened: list[str] = []

    def urlopen(url: str, timeout: float) -> Any:
        opened.append(url)
        raise OSError("refused")

    monkeypatch.setattr("urllib.request.urlopen", urlopen)
    assert ollama_models(ollama_host({"OLLAMA_HOST": value})) == []
    assert bool(opened) is probed
