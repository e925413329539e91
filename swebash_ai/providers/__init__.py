"""Providers behind one door: choose one from the settings, build it, never import litellm needlessly.

Routing: ``openai/...`` names, and names without a provider prefix when ``SWEBASH_AI_API_BASE`` is set, go to
the OpenAI-compatible fast lane (:mod:`~swebash_ai.providers.http_provider`: httpx and httpx-sse, quick to
import); every other ``provider/model`` name goes to litellm.
With no model configured, the first usual provider key in the environment picks a default model, else a
local Ollama server that answers is used, else there is no provider (front ends offer ``swebash-ai setup``).
"""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from swebash_ai.config.address import complete_base, is_loopback_url
from swebash_ai.errors import ConfigError
from swebash_ai.providers.base import (
    Chunk,
    EndpointProvider,
    FinishChunk,
    Provider,
    RetryCallback,
    TextChunk,
    ToolCall,
    ToolCallAccumulator,
    UsageChunk,
)

if TYPE_CHECKING:
    from swebash_ai.config.settings import Settings

__all__ = [
    "NO_PROVIDER_HELP",
    "NO_PROVIDER_TITLE",
    "Chunk",
    "FinishChunk",
    "OllamaOffer",
    "Provider",
    "ProviderChoice",
    "TextChunk",
    "ToolCall",
    "ToolCallAccumulator",
    "UsageChunk",
    "choose_provider",
    "make_provider",
    "no_provider_error",
    "ollama_offer",
    "uses_litellm",
]

#: The usual key variables, in the order they are tried, with the model each one selects by default.
PROVIDER_KEYS: tuple[tuple[str, str], ...] = (
    ("OPENAI_API_KEY", "openai/gpt-4.1-mini"),
    ("ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"),
    ("GEMINI_API_KEY", "gemini/gemini-2.5-flash"),
    ("MISTRAL_API_KEY", "mistral/mistral-large-latest"),
    ("GROQ_API_KEY", "groq/llama-3.3-70b-versatile"),
    ("DEEPSEEK_API_KEY", "deepseek/deepseek-chat"),
    ("OPENROUTER_API_KEY", "openrouter/openai/gpt-4.1-mini"),
)

NO_PROVIDER_TITLE = "No model provider configured"
NO_PROVIDER_HELP = """\
Run `swebash-ai setup` (or /login in the app) to choose one, or set one of:
  OPENAI_API_KEY=sk-...            (or ANTHROPIC_API_KEY, GEMINI_API_KEY, MISTRAL_API_KEY, GROQ_API_KEY...)
  SWEBASH_AI_MODEL=anthropic/claude-sonnet-4-5 SWEBASH_AI_API_KEY=...
  SWEBASH_AI_API_BASE=http://localhost:8000/v1 SWEBASH_AI_MODEL=my-model   (any OpenAI-compatible server)
or start Ollama (https://ollama.com) and pull a model. A profile in the config file works too:
  [profiles.local]
  model = "openai/llama3.1"
  api_base = "http://localhost:11434/v1"
"""


def no_provider_error() -> ConfigError:
    """The error every front end raises without a provider: the title says what is wrong, the message what to do."""
    return ConfigError(NO_PROVIDER_HELP.strip(), title=NO_PROVIDER_TITLE)


@dataclass(frozen=True)
class ProviderChoice:
    """Which model to talk to, and why (shown by ``config`` and ``doctor``)."""

    model: str
    api_base: str | None
    api_key: str | None = field(repr=False)  # never in a repr: reprs end up in logs and tracebacks
    reason: str

    @property
    def via_litellm(self) -> bool:
        return uses_litellm(self.model, self.api_base)


def uses_litellm(model: str, api_base: str | None) -> bool:
    """True when ``model`` needs litellm (its prefix names a provider that is not OpenAI-compatible)."""
    if model.startswith("openai/"):
        return False
    return not ("/" not in model and api_base)


OLLAMA_PORT = 11434
"""Ollama's own default port, added (as Ollama adds it) to an ``OLLAMA_HOST`` without a scheme or a port."""


def ollama_host(environ: Mapping[str, str] | None = None) -> str:
    """Where a local Ollama server listens: ``OLLAMA_HOST`` or its usual address, as a URL.

    ``OLLAMA_HOST`` without a scheme (``0.0.0.0``, ``127.0.0.1:11435``, as Ollama takes it) gets Ollama's port
    when it names none, and a scheme by the one rule of :func:`~swebash_ai.config.address.complete_base`:
    ``http://`` for this machine, ``https://`` for another. A value that is not an address is returned as it is
    (it is never probed, and the setup refuses it by name)."""
    env = os.environ if environ is None else environ
    base = (env.get("OLLAMA_HOST") or "").strip().rstrip("/")
    if not base:
        return f"http://127.0.0.1:{OLLAMA_PORT}"
    if "://" in base:
        return base
    hostport, slash, path = base.partition("/")
    if ":" not in hostport.rsplit("]", 1)[-1]:  # no port ("[::1]" has none either)
        hostport += f":{OLLAMA_PORT}"
    try:
        return complete_base(hostport + slash + path)[0]
    except ConfigError:
        return base


def ollama_models(host: str | None = None, timeout: float = 0.3) -> list[str]:
    """Names of the models a local Ollama server has, or [] when none answers quickly."""
    base = host or ollama_host()
    if not is_loopback_url(base):
        return []  # only ever probe this machine
    try:
        with urllib.request.urlopen(base + "/api/tags", timeout=timeout) as resp:  # noqa: S310 - loopback only
            data = json.load(resp)
    except (OSError, ValueError):
        return []
    return [m["name"] for m in data.get("models", []) if isinstance(m, dict) and m.get("name")]


def choose_provider(
    settings: Settings, environ: Mapping[str, str] | None = None, *, probe_ollama: bool = True,
    model_from: str = "env SWEBASH_AI_MODEL",
) -> ProviderChoice | None:
    """The provider the settings select, else one found in the environment, else ``None``.

    ``model_from`` says where the model setting came from (``LoadedSettings.model_from``): the reason names
    it, so that ``doctor`` and ``/model`` do not send someone to an environment variable they never set."""
    env = os.environ if environ is None else environ
    key = settings.api_key.get_secret_value() if settings.api_key else None
    if settings.model:
        return ProviderChoice(settings.model, settings.api_base, key, f"the model is set by {model_from}")
    for var, model in PROVIDER_KEYS:
        if env.get(var):
            return ProviderChoice(model, settings.api_base, key or env[var], f"{var} is set")
    if probe_ollama:
        offer = ollama_offer(env)
        if offer is not None:
            return offer.choice()
    return None


@dataclass(frozen=True)
class OllamaOffer:
    """A local Ollama server that answers, and its models (the first is the default)."""

    host: str
    models: tuple[str, ...]

    def choice(self, model: str | None = None) -> ProviderChoice:
        """Talk to ``model`` (default: the first) through Ollama's OpenAI-compatible ``/v1``."""
        return ProviderChoice(f"openai/{model or self.models[0]}", self.host + "/v1", None,
                              f"Ollama answers at {self.host}")


def ollama_offer(environ: Mapping[str, str] | None = None) -> OllamaOffer | None:
    """The local Ollama server, when one answers quickly and has at least one model."""
    host = ollama_host(environ)
    models = ollama_models(host)
    return OllamaOffer(host, tuple(models)) if models else None


def make_provider(choice: ProviderChoice, settings: Settings, on_retry: RetryCallback | None = None) -> Provider:
    """Build the provider for ``choice``; no network traffic and no heavy import happen here."""
    cls: type[EndpointProvider]
    if choice.via_litellm:
        from swebash_ai.providers.litellm_provider import LiteLLMProvider as cls
    else:
        # The httpx lane, not the official client: same wire format, a fraction of the import time.
        from swebash_ai.providers.http_provider import HttpProvider as cls
    return cls(
        choice.model,
        api_base=choice.api_base,
        api_key=choice.api_key,
        timeout=settings.request_timeout,
        retries=settings.provider_retries,
        base_delay=settings.retry_base_delay,
        on_retry=on_retry,
    )
