"""API keys in the OS keyring, when the optional ``keyring`` package finds a usable backend.

A profile saved by ``swebash-ai setup`` says ``api_key_source = "keyring"`` instead of holding the key; the
settings read it back when they load (:func:`swebash_ai.config.settings.load_settings`). ``keyring`` is imported only
then, or when saving: it scans its backends' entry points, which costs tens of milliseconds the one-shot path
must not pay when no profile needs it. Tests point it at a fake backend with ``keyring.set_keyring``.

Nothing here logs, prints or puts a key in an exception message.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)

SERVICE = "swebash-ai"
"""The keyring service name; the user name is the profile's name."""


def _keyring() -> Any | None:
    try:
        import keyring
    except ImportError:
        return None
    return keyring


def keyring_usable() -> bool:
    """True when ``keyring`` is installed and its chosen backend can store secrets (priority above zero: the
    ``fail`` and ``null`` backends, picked when nothing else works, have none)."""
    keyring = _keyring()
    if keyring is None:
        return False
    try:
        backend = keyring.get_keyring()
        return float(getattr(backend, "priority", 0)) > 0
    except Exception as exc:  # a broken backend (no D-Bus session...) means "not usable", never a crash
        log.debug("keyring backend unusable: %s", type(exc).__name__)
        return False


def store_key(profile: str, key: str) -> bool:
    """Put ``key`` in the keyring for ``profile``; True when it is there and reads back, else False."""
    if not keyring_usable():
        return False
    keyring = _keyring()
    assert keyring is not None
    try:
        keyring.set_password(SERVICE, profile, key)
        return bool(keyring.get_password(SERVICE, profile) == key)
    except Exception as exc:
        log.info("could not store the key in the keyring (%s); using the config file", type(exc).__name__)
        return False


class KeyringUnavailable(Exception):
    """The keyring cannot be read (the message names why, never the key)."""


def read_key(profile: str) -> str:
    """The key stored for ``profile``.

    Raises:
        KeyringUnavailable: ``keyring`` is not installed, has no usable backend, fails, or holds no key.
    """
    keyring = _keyring()
    if keyring is None:
        raise KeyringUnavailable("the keyring package is not installed (pip install 'swebash-ai[keyring]')")
    try:
        key = keyring.get_password(SERVICE, profile)
    except Exception as exc:
        raise KeyringUnavailable(f"the keyring cannot be read ({type(exc).__name__})") from None
    if not key:
        raise KeyringUnavailable(f"the keyring holds no key for '{profile}' (service {SERVICE})")
    return str(key)
