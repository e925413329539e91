"""Provider addresses: the one rule for a server address written without a scheme.

People write ``localhost:11434/v1`` for a local server. Wherever an address enters (the setup's prompt,
``swebash-ai setup --api-base``, the app's setup screen, ``SWEBASH_AI_API_BASE`` or ``api_base`` in the config
file, ``OLLAMA_HOST``, the official client's ``OPENAI_BASE_URL`` read by :func:`env_base`), :func:`complete_base`
gives it a scheme by the same rule: ``http://`` for a loopback host, since nothing leaves the machine and local
servers rarely have TLS, and ``https://`` for any other host, so that a key never travels in clear text to
another machine because a scheme was guessed. An explicit ``http://`` is the user's word and is kept.

"Loopback" means what cannot resolve elsewhere: the name ``localhost`` and loopback (or unspecified, which
connects to this machine) IP literals. Not ``*.localhost`` names: whether those stay on the machine depends on
the resolver.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Mapping

from swebash_ai.errors import ConfigError

EXAMPLE = "http://localhost:8000/v1"


def check_base(url: str) -> str:
    """``url`` without a trailing slash (its scheme in lower case) when it is an http(s) URL with a host; raises
    ConfigError otherwise."""
    url = url.strip().rstrip("/")
    scheme, sep, rest = url.partition("://")
    if sep and scheme.lower() in ("http", "https"):  # a scheme has no case: HTTP:// is http://
        url = f"{scheme.lower()}://{rest}"
    if not url.startswith(("http://", "https://")) or len(url.split("://", 1)[1]) == 0:
        raise ConfigError(f"'{url}' is not an http:// or https:// URL (e.g. {EXAMPLE}).")
    return url


def complete_base(text: str) -> tuple[str, str | None]:
    """A server address as written: ``(url, note)``, ``note`` saying which scheme was added (``None``: none was).

    ``http://`` is added for a loopback host (``localhost``, ``127.0.0.1``, ``[::1]``, ``0.0.0.0``) and
    ``https://`` for any other. What is not an address (no host, spaces, a bad port, a bare word) is refused
    as :func:`check_base` refuses it.

    Raises:
        ConfigError: ``text`` is not an address.
    """
    text = text.strip()
    if "://" in text or not text:
        return check_base(text), None
    parts = urllib.parse.urlsplit("//" + text)
    host = parts.hostname or ""
    try:
        port = parts.port
    except ValueError:  # not a number, or out of range
        port = None
        host = ""
    local = is_loopback_host(host)
    addressy = local or "." in host or port is not None
    if any(c.isspace() for c in text) or not host or not addressy:
        return check_base(text), None  # raises, with the usual example
    scheme = "http" if local else "https"
    why = "a local address" if local else "another machine: use http:// explicitly for a server without TLS"
    return check_base(f"{scheme}://{text}"), f"{scheme}:// added ({why})"


def env_base(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The server address in the environment variable ``name``, given a scheme by :func:`complete_base`;
    ``None`` when it is unset or blank.

    Raises:
        ConfigError: the value is not an address (the message names the variable, as for a setting).
    """
    env = os.environ if environ is None else environ
    value = (env.get(name) or "").strip()
    if not value:
        return None
    try:
        return complete_base(value)[0]
    except ConfigError as exc:
        raise ConfigError(f"{name}={value!r}: {exc.message}", title="Invalid setting",
                          hint=f"Correct or unset {name}.") from None


def is_loopback_host(host: str) -> bool:
    """True for a host name that can only mean this machine (see the module docstring)."""
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    import ipaddress  # only for an address without a scheme or a probe: not on every start

    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified  # 0.0.0.0:8000 is what a local server prints


def is_loopback_url(url: str) -> bool:
    """True when ``url`` (with its scheme) points at this machine by :func:`is_loopback_host`."""
    try:
        host = urllib.parse.urlsplit(url).hostname
    except ValueError:
        return False
    return bool(host) and is_loopback_host(host or "")
