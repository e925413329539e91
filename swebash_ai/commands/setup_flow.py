"""First-run setup, without a user interface: the providers offered, their model lists, the test request
that proves a choice works, and saving it as the default profile.

``swebash-ai setup`` (:mod:`swebash_ai.commands.setup`) and the app's setup screen (``/login``) are two faces of
this module. Every network call goes to the base URL of the chosen :class:`ProviderKind` (``BASES`` maps
each kind to its public address; tests point it at the loopback fake server), never anywhere else, and
nothing is saved before the test request succeeds.

A key is never logged, printed or put in a message: an error body that quotes it has it masked.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from swebash_ai import errors
from swebash_ai.config.address import check_base

KeyPlace = Literal["keyring", "file", "none"]


@dataclass(frozen=True)
class ProviderKind:
    """One kind of provider the setup offers."""

    id: str
    label: str
    prefix: str
    """Prepended to the chosen model: ``openai/`` takes the fast OpenAI-compatible lane, others litellm."""
    needs_key: bool
    default_model: str
    key_help: str = ""
    fixed_base: bool = True
    """False: the user gives the address (any OpenAI-compatible server)."""


KINDS: tuple[ProviderKind, ...] = (
    ProviderKind("openai", "OpenAI", "openai/", True, "gpt-4.1-mini", "https://platform.openai.com/api-keys"),
    ProviderKind("anthropic", "Anthropic", "anthropic/", True, "claude-sonnet-4-5",
                 "https://console.anthropic.com/settings/keys"),
    # Gemini and OpenRouter speak the OpenAI wire format: the fast lane, and a model list at {base}/models.
    ProviderKind("gemini", "Google Gemini", "openai/", True, "gemini-2.5-flash", "https://aistudio.google.com/apikey"),
    ProviderKind("openrouter", "OpenRouter", "openai/", True, "openai/gpt-4.1-mini", "https://openrouter.ai/keys"),
    ProviderKind("ollama", "Ollama on this machine", "openai/", False, ""),
    ProviderKind("openai-compatible", "Any OpenAI-compatible server (URL)", "openai/", False, "", fixed_base=False),
)

BASES: dict[str, str] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "gemini": "https://generativelanguage.googleapis.com/v1beta/openai",
    "openrouter": "https://openrouter.ai/api/v1",
}
"""Where each kind's API is (the seam the tests point at the fake server). Ollama's is found by probing."""

LIST_TIMEOUT = 10.0
TEST_TIMEOUT = 60.0
TEST_PROMPT = "Reply with the single word: ok"


def kind_named(name: str) -> ProviderKind:
    """The kind called ``name``; raises ConfigError naming the choices."""
    for kind in KINDS:
        if kind.id == name:
            return kind
    raise errors.ConfigError(f"Unknown provider '{name}' (choose from {', '.join(k.id for k in KINDS)}).")


def default_base(kind: ProviderKind) -> str | None:
    """The kind's API address: the public one, Ollama's local ``/v1``, or ``None`` (the user must give it)."""
    if kind.id == "ollama":
        from swebash_ai.providers import ollama_host

        return check_base(ollama_host() + "/v1")  # OLLAMA_HOST may be anything: refused here as any address
    return BASES.get(kind.id)


@dataclass(frozen=True)
class Candidate:
    """A provider, its address, a key and a model: what the test request proves and what is saved."""

    kind: ProviderKind
    base: str
    key: str | None
    model: str
    """As the provider names it (``gpt-4.1-mini``); :attr:`full_model` adds our routing prefix."""

    @property
    def full_model(self) -> str:
        # Only OpenAI's and Anthropic's own names cannot contain the prefix: elsewhere "openai/x" is a model id.
        if self.kind.id in ("openai", "anthropic") and self.model.startswith(self.kind.prefix):
            return self.model
        return self.kind.prefix + self.model

    def __repr__(self) -> str:  # never the key
        return f"Candidate({self.kind.id}, {self.base}, {self.model}, key={'set' if self.key else 'none'})"


def _mask(text: str, key: str | None) -> str:
    return text.replace(key, "****") if key and len(key) >= 4 else text


async def list_models(kind: ProviderKind, base: str, key: str | None) -> list[str] | None:
    """The provider's model list (sorted), or ``None`` when it serves none (then the user types a name).

    Each API in its own documented shape: OpenAI-compatible ``GET {base}/models`` (``data: [{id}]``);
    Anthropic ``GET /v1/models`` (``x-api-key``, ``anthropic-version``; ``data: [{id, type: "model"}]``, pages
    by ``has_more`` / ``after_id``); Gemini's native ``GET /v1beta/models`` (``x-goog-api-key``; ``models:
    [{name: "models/...", supportedGenerationMethods}]``, pages by ``nextPageToken``), keeping only the models
    that can chat (``generateContent``: the list also holds embedding and image models) without the
    ``models/`` prefix. At most :data:`MAX_PAGES` pages are read.

    Raises:
        AuthenticationError: the key was refused (401/403, or Gemini's 400 ``API_KEY_INVALID``).
        ProviderUnavailableError: nothing answers at ``base``.
    """
    if kind.id == "ollama":
        from swebash_ai.providers import ollama_models

        names = await asyncio.to_thread(ollama_models, base.removesuffix("/v1"), 2.0)
        return sorted(names) or None
    from swebash_ai.providers.http_provider import _import_httpx

    httpx = _import_httpx()
    base = base.rstrip("/")
    try:
        async with httpx.AsyncClient(timeout=LIST_TIMEOUT, follow_redirects=False,
                                     verify=not base.startswith("http://")) as client:
            pages = _Pages(client, base)
            if kind.id == "anthropic":
                ids = await _anthropic_models(pages, key)
            elif kind.id == "gemini":
                ids = await _gemini_models(pages, key)
                if ids is None:  # no native list there (a proxy): the OpenAI-compatible one
                    ids = await _openai_models(pages, key)
            else:
                ids = await _openai_models(pages, key)
    except httpx.HTTPError as exc:
        raise errors.ProviderUnavailableError(f"Cannot reach {base}: {type(exc).__name__}: {exc}") from None
    return sorted(set(ids)) or None if ids is not None else None


MAX_PAGES = 20
"""Pages of a model list read at most (a provider that pages forever must not hang the setup)."""


@dataclass
class _Pages:
    """GET one page of a model list: its JSON object, or ``None`` when the server has no list there."""

    client: Any
    base: str

    async def get(self, url: str, headers: dict[str, str], params: dict[str, str]) -> dict[str, Any] | None:
        response = await self.client.get(url, headers=headers, params=params)
        status = response.status_code
        # Gemini answers a bad key with 400 INVALID_ARGUMENT, reason API_KEY_INVALID, not with 401.
        if status in (401, 403) or (status == 400 and "API_KEY_INVALID" in response.text):
            raise errors.AuthenticationError(f"{self.base} refused the key ({status}).", status=status)
        if status >= 400:
            return None
        try:
            body = response.json()
        except ValueError:
            return None
        return body if isinstance(body, dict) else None


async def _openai_models(pages: _Pages, key: str | None) -> list[str] | None:
    body = await pages.get(pages.base + "/models", {"Authorization": f"Bearer {key}"} if key else {}, {})
    data = body.get("data") if body is not None else None
    if not isinstance(data, list):
        return None
    # Gemini's OpenAI-compatible list names models "models/gemini-...", as its native API does
    return [str(m["id"]).removeprefix("models/") for m in data if isinstance(m, dict) and m.get("id")]


async def _anthropic_models(pages: _Pages, key: str | None) -> list[str] | None:
    headers = {"x-api-key": key or "", "anthropic-version": "2023-06-01"}
    params = {"limit": "1000"}
    ids: list[str] = []
    for _ in range(MAX_PAGES):
        body = await pages.get(pages.base + "/v1/models", headers, params)
        data = body.get("data") if body is not None else None
        if body is None or not isinstance(data, list):
            return ids or None
        ids += [str(m["id"]) for m in data if isinstance(m, dict) and m.get("id") and m.get("type", "model") == "model"]
        last = body.get("last_id")
        if not body.get("has_more") or not isinstance(last, str) or not last:
            break
        params = {"limit": "1000", "after_id": last}
    return ids


async def _gemini_models(pages: _Pages, key: str | None) -> list[str] | None:
    # The setup talks to Gemini's OpenAI-compatible address (…/v1beta/openai); the native list is beside it.
    url = pages.base.removesuffix("/openai") + "/models"
    headers = {"x-goog-api-key": key} if key else {}  # a header, so the key is in no URL (logs, proxies)
    params = {"pageSize": "1000"}
    ids: list[str] = []
    for _ in range(MAX_PAGES):
        body = await pages.get(url, headers, params)
        models = body.get("models") if body is not None else None
        if body is None or not isinstance(models, list):
            return ids or None
        for m in models:
            if not isinstance(m, dict) or not isinstance(m.get("name"), str):
                continue
            methods = m.get("supportedGenerationMethods")
            if isinstance(methods, list) and "generateContent" in methods:
                ids.append(m["name"].removeprefix("models/"))
        token = body.get("nextPageToken")
        if not isinstance(token, str) or not token:
            break
        params = {"pageSize": "1000", "pageToken": token}
    return ids


async def test_request(candidate: Candidate, wait: float = TEST_TIMEOUT) -> str:
    """Send one short request through the provider exactly as a session would; the start of the reply.

    Raises:
        ProviderError: with a message that says what went wrong (see :func:`explain`).
    """
    from swebash_ai.providers import ProviderChoice
    from swebash_ai.providers.base import EndpointProvider, TextChunk

    choice = ProviderChoice(candidate.full_model, candidate.base, candidate.key, "setup")
    cls: type[EndpointProvider]
    if choice.via_litellm:
        from swebash_ai.providers.litellm_provider import LiteLLMProvider as cls
    else:
        from swebash_ai.providers.http_provider import HttpProvider as cls
    provider = cls(choice.model, api_base=choice.api_base, api_key=choice.api_key, timeout=wait, retries=0)
    text: list[str] = []
    stream = provider.stream([{"role": "user", "content": TEST_PROMPT}])
    async with contextlib.aclosing(stream):  # type: ignore[type-var]
        async for chunk in stream:
            if isinstance(chunk, TextChunk):
                text.append(chunk.text)
                if sum(map(len, text)) > 40:
                    break
    return "".join(text).strip()[:40]


def explain(exc: errors.SwebashError, candidate: Candidate) -> str:
    """One line that says what went wrong with ``candidate`` and what to change (the key masked)."""
    status = f" ({exc.status})" if isinstance(exc, errors.ProviderError) and exc.status else ""
    if isinstance(exc, errors.AuthenticationError):
        line = f"The key was refused{status}: check it and paste it again."
    elif isinstance(exc, errors.ModelNotFoundError):
        line = f"No model '{candidate.model}' at {candidate.base}{status}: pick or type another."
    elif isinstance(exc, errors.ProviderUnavailableError):
        line = f"Cannot reach {candidate.base}: {exc.message} Is the address right and the server running?"
    else:
        line = f"{exc.title}{status}: {exc.message}"
    return _mask(" ".join(line.split()), candidate.key)


@dataclass(frozen=True)
class Saved:
    """Where the setup went: the profile, the file, and where the key is."""

    profile: str
    path: Path
    key_place: KeyPlace
    model: str

    def summary(self) -> str:
        key = {"keyring": "the key is in the OS keyring",
               "file": f"the key is in {self.path} (readable by you only)",
               "none": "no key needed"}[self.key_place]
        return f"Saved profile '{self.profile}' ({self.model}) in {self.path} as the default; {key}."


def save(candidate: Candidate, profile: str, path: Path, *, use_keyring: bool = True) -> Saved:
    """Write ``candidate`` as ``[profiles.PROFILE]``, the default; its key in the keyring when one is usable.

    Raises:
        ConfigError: the config file cannot be edited or written.
    """
    from swebash_ai.config.credentials import store_key
    from swebash_ai.config.edit import check_profile_name, save_profile

    check_profile_name(profile)
    values: dict[str, str] = {"model": candidate.full_model, "api_base": candidate.base}
    place: KeyPlace = "none"
    if candidate.key:
        if use_keyring and store_key(profile, candidate.key):
            values["api_key_source"] = "keyring"
            place = "keyring"
        else:
            values["api_key"] = candidate.key
            place = "file"
    save_profile(path, profile, values)
    return Saved(profile, path, place, candidate.full_model)


def config_path(environ: Mapping[str, str] | None = None) -> Path:
    from swebash_ai.storage.locations import locations

    return locations(dict(environ) if environ is not None else None).config_file
