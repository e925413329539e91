"""Ambient inputs: what the libraries under swebash-ai read that nobody named, and what is done with each.

A project folder must never decide where prompts and keys go. Libraries read files and variables on their
own: litellm loads the first ``.env`` found above its own folder into the process environment at import (a
``.env`` beside a project's ``.venv`` then steered every request, and every command's environment);
httpx and aiohttp take proxies and a CA bundle from the environment. Each such input is listed in
:data:`AMBIENT_INPUTS` with what swebash-ai does with it: **honoured** (the user's own environment; ``config``
and ``doctor`` show it with its source), **ignored** (turned off before the library can read it), or **never
read** (nothing on our path reads it). ``docs/configuration.md`` renders the table from here.

:func:`network_route` answers, for the chosen provider, where requests go, through which proxy, trusting which
certificates, and where each came from. Pure: it reads the mapping it is given.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit

#: Set before litellm is imported, whatever the environment says. ``LITELLM_MODE=PRODUCTION`` is the switch
#: litellm's ``__init__`` reads to skip ``dotenv.load_dotenv()`` (which walks up from litellm's own folder,
#: or from the working directory under a debugger or a frozen build).
LITELLM_FORCED: Mapping[str, str] = {"LITELLM_MODE": "PRODUCTION"}

#: Set before litellm is imported unless the user set them: no price list fetched, no telemetry sent.
LITELLM_DEFAULTS: Mapping[str, str] = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_TELEMETRY": "False"}


@contextmanager
def litellm_import_environment(environ: os._Environ[str] | dict[str, str] | None = None) -> Iterator[None]:
    """Hold the environment litellm must be imported under; put ``LITELLM_MODE`` back afterwards.

    litellm reads ``LITELLM_MODE`` at import only, so restoring it keeps it out of every command's
    environment. The defaults stay set: litellm reads them again later (the cost map on a price lookup)."""
    env = os.environ if environ is None else environ
    saved = {name: env.get(name) for name in LITELLM_FORCED}
    env.update(LITELLM_FORCED)
    for name, value in LITELLM_DEFAULTS.items():
        env.setdefault(name, value)
    try:
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                env.pop(name, None)
            else:
                env[name] = old


@dataclass(frozen=True)
class AmbientInput:
    """One input a library reads by itself, and what swebash-ai does with it."""

    name: str
    read_by: str
    effect: str
    handling: str  # "honoured", "ignored", "never read"
    why: str


AMBIENT_INPUTS: tuple[AmbientInput, ...] = (
    AmbientInput(".env files (the first above litellm's folder, or above the working directory under a "
                 "debugger)", "litellm at import (python-dotenv)", "every variable in it joins the process "
                 "environment: provider addresses, proxies, CA bundles, keys", "ignored",
                 "`LITELLM_MODE=PRODUCTION` is set for litellm's import, so it never loads one; a project's `.env` "
                 "is also hidden from the tools"),
    AmbientInput("`LITELLM_MODE`", "litellm at import", "`DEV` (its default) loads `.env`", "ignored",
                 "forced to `PRODUCTION` during the import, then put back"),
    AmbientInput("`LITELLM_LOCAL_MODEL_COST_MAP`, `LITELLM_MODEL_COST_MAP_URL`", "litellm at import",
                 "fetch a price list over the network at every start", "honoured",
                 "set to use the bundled list unless you set it; set it to `False` yourself to fetch"),
    AmbientInput("`LITELLM_TELEMETRY`", "litellm", "usage telemetry", "honoured",
                 "set to `False` unless you set it; litellm.telemetry is also turned off"),
    AmbientInput("`SWEBASH_AI_*`", "swebash-ai", "every setting", "honoured",
                 "your settings; `config` shows each with its source"),
    AmbientInput("`<PROVIDER>_API_KEY` (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`...)",
                 "swebash-ai, litellm", "the key sent with every request", "honoured",
                 "picks a default model when none is set; `config` names the variable"),
    AmbientInput("`OPENAI_BASE_URL`", "the OpenAI-compatible lane", "where requests go", "honoured",
                 "used when no `api_base` is set, by the same address rule; `config`/`doctor` show it"),
    AmbientInput("`<PROVIDER>_API_BASE`, `<PROVIDER>_BASE_URL` (`ANTHROPIC_API_BASE`, `GEMINI_API_BASE`, "
                 "`OPENAI_API_BASE`...)", "litellm", "where requests go when no `api_base` is set", "honoured",
                 "your environment only (no `.env`); `config`/`doctor` show the address and the variable"),
    AmbientInput("`OPENAI_ORG_ID`, `OPENAI_PROJECT_ID`", "the OpenAI-compatible lane, litellm",
                 "headers sent with requests", "honoured", "as the official client sends them"),
    AmbientInput("`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY` (either case)",
                 "httpx (the OpenAI-compatible lane), aiohttp (litellm)", "a proxy that sees every request",
                 "honoured", "your environment only; `config`/`doctor` show the proxy for the provider's address"),
    AmbientInput("`SSL_CERT_FILE`, `SSL_CERT_DIR`", "httpx, Python's ssl, litellm",
                 "the certificates trusted for the provider", "honoured",
                 "your environment only; `config`/`doctor` show the CA bundle in force"),
    AmbientInput("`SSL_VERIFY`, `SSL_CERTIFICATE`", "litellm", "turns certificate checks off / a client "
                 "certificate", "honoured", "`config`/`doctor` show certificate checks as off when it is false"),
    AmbientInput("`REQUESTS_CA_BUNDLE`, `CURL_CA_BUNDLE`", "requests, curl", "a CA bundle", "never read",
                 "nothing on swebash-ai's request path uses requests or curl (commands you run may)"),
    AmbientInput("`~/.netrc`, `NETRC`", "aiohttp (proxy credentials only)", "credentials for a proxy",
                 "honoured", "only when a proxy from your environment is in use; httpx never reads it"),
    AmbientInput("`sitecustomize`, `usercustomize`, `.pth` files", "Python at start",
                 "code run before swebash-ai", "honoured",
                 "from the installation's own folders only; a workspace is never on Python's path "
                 "(`python -m swebash_ai` drops the working directory from it)"),
    AmbientInput("`OLLAMA_HOST`", "swebash-ai", "the local Ollama server probed when nothing is configured",
                 "honoured", "probed only on this machine (loopback)"),
    AmbientInput("network at start", "litellm (price list), update checks, telemetry", "traffic before any "
                 "question", "ignored", "none: the price list is the bundled one; no update check exists"),
)


def ambient_inputs_markdown() -> str:
    """The table of ambient inputs for docs/configuration.md."""
    rows = ["| Input | Read by | What it would do | swebash-ai | How |", "| --- | --- | --- | --- | --- |"]
    rows += [f"| {a.name} | {a.read_by} | {a.effect} | **{a.handling}** | {a.why} |" for a in AMBIENT_INPUTS]
    return "\n".join(rows) + "\n"


#: The variables litellm reads for a provider's address when no ``api_base`` is passed, by model prefix.
LITELLM_BASE_VARIABLES: Mapping[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL"),
    "gemini": ("GEMINI_API_BASE",),
    "openai": ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
    "mistral": ("MISTRAL_API_BASE",),
    "groq": ("GROQ_API_BASE",),
    "deepseek": ("DEEPSEEK_API_BASE",),
    "openrouter": ("OPENROUTER_API_BASE",),
    "ollama": ("OLLAMA_API_BASE",),
    "ollama_chat": ("OLLAMA_API_BASE",),
    "azure": ("AZURE_API_BASE",),
}


@dataclass(frozen=True)
class Origin:
    """One fact of the route to the provider and where it came from."""

    value: str
    source: str


@dataclass(frozen=True)
class NetworkRoute:
    """Where requests to the provider go, through what, trusting what."""

    address: Origin
    proxy: Origin
    ca_bundle: Origin

    def lines(self) -> list[str]:
        return [f"address:     {self.address.value}  ({self.address.source})",
                f"proxy:       {self.proxy.value}  ({self.proxy.source})",
                f"CA bundle:   {self.ca_bundle.value}  ({self.ca_bundle.source})"]


def provider_address(model: str, api_base: str | None, api_base_source: str, via_litellm: bool,
                     environ: Mapping[str, str]) -> Origin:
    """The provider's address as the lane in use will pick it, and where it came from."""
    if api_base:
        return Origin(api_base, api_base_source)
    if not via_litellm:
        if environ.get("OPENAI_BASE_URL", "").strip():
            return Origin(environ["OPENAI_BASE_URL"].strip(), "env OPENAI_BASE_URL")
        return Origin("https://api.openai.com/v1", "the default")
    prefix = model.split("/", 1)[0] if "/" in model else "openai"
    for var in LITELLM_BASE_VARIABLES.get(prefix, ()):
        if environ.get(var, "").strip():
            return Origin(environ[var].strip(), f"env {var}, read by litellm")
    return Origin(f"litellm's default for {prefix}", "no address set")


def proxy_for(url: str, environ: Mapping[str, str]) -> Origin:
    """The proxy httpx and aiohttp take from ``environ`` for ``url`` (lower case wins, as in both)."""
    scheme = urlsplit(url).scheme if "://" in url else "https"
    host = (urlsplit(url).hostname or "") if "://" in url else ""
    no_proxy = _first(environ, "NO_PROXY")
    if no_proxy and host and _bypassed(host, no_proxy[1]):
        return Origin("none", f"env {no_proxy[0]} covers {host}")
    for name in (f"{scheme.upper()}_PROXY", "ALL_PROXY"):
        found = _first(environ, name)
        if found:
            return Origin(found[1], f"env {found[0]}")
    return Origin("none", "no proxy variable set")


def ca_bundle(environ: Mapping[str, str], via_litellm: bool, default: str) -> Origin:
    """The certificates trusted for the provider, and where that came from."""
    if via_litellm:
        verify = environ.get("SSL_VERIFY", "").strip()
        if verify.lower() in ("false", "0", "no", "off"):
            return Origin("certificate checks OFF", "env SSL_VERIFY, read by litellm")
        if verify and os.path.exists(verify):
            return Origin(verify, "env SSL_VERIFY, read by litellm")
    for var in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        if environ.get(var, "").strip():
            return Origin(environ[var].strip(), f"env {var}")
    return Origin(default, "the bundled certifi store")


def network_route(model: str, api_base: str | None, api_base_source: str, via_litellm: bool,
                  environ: Mapping[str, str] | None = None, certifi_path: str = "certifi") -> NetworkRoute:
    """Address, proxy and CA bundle for the chosen provider, each with its source."""
    env = os.environ if environ is None else environ
    address = provider_address(model, api_base, api_base_source, via_litellm, env)
    url = address.value if "://" in address.value else "https://provider"
    plain = url.startswith("http://")
    trust = Origin("not used (plain http)", "the address") if plain else ca_bundle(env, via_litellm, certifi_path)
    return NetworkRoute(address, proxy_for(url, env), trust)


def _first(environ: Mapping[str, str], upper: str) -> tuple[str, str] | None:
    for name in (upper.lower(), upper):
        value = environ.get(name, "").strip()
        if value:
            return name, value
    return None


def _bypassed(host: str, no_proxy: str) -> bool:
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        if entry == "*":
            return True
        entry = entry.lstrip(".").split(":", 1)[0]
        if entry and (host.lower() == entry or host.lower().endswith("." + entry)):
            return True
    return False
