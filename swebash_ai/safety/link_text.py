"""Where a Markdown link goes, said where its label may lie.

``[https://github.com/x](https://evil.example/steal)`` draws ``https://github.com/x`` and opens
evil.example: a prompt injection can make the model write it, and the user trusts the label. A front end
that draws a link asks :func:`link_note` what to show after the label: nothing when the label already shows
the target's host (an autolink, ``[github.com/x](https://github.com/x)``), else the target's host (or the
whole target for a link that is not a web address). :func:`linkable` says whether a target may be a link
at all (opened on a click, sent to the terminal as an OSC 8 hyperlink): only web and mail addresses.

Hosts are compared as a browser reads them: a backslash is a slash (``https://evil.example\\@github.com``
goes to evil.example), user info before ``@`` is not the host, and a non-ASCII host is shown in its ASCII
(punycode) form, so a look-alike letter (``gіthub.com`` with a Cyrillic ``і``) shows as ``xn--...``.

Pure: standard library only.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from swebash_ai.safety.terminal_text import safe

_WEB = ("http", "https")
_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:")
NOTE_MAX = 80
"""Longest target shown whole after a label; a longer one is cut (its scheme and start are what matter)."""


def _host(url: str) -> str | None:
    """The host a browser would open for ``url`` (an http(s) address), lower case ASCII, with a port given;
    ``None`` when there is none."""
    try:
        parts = urlsplit(url.strip().replace("\\", "/"))
        host, port = parts.hostname, parts.port
    except ValueError:  # a bad port or IPv6 literal
        return None
    if not host:
        return None
    try:
        host = host.encode("idna").decode("ascii")
    except UnicodeError:  # not a valid international name: show its characters, escaped if need be
        host = host.encode("ascii", "backslashreplace").decode("ascii")
    return f"{host}:{port}" if port is not None else host


def _scheme(target: str) -> str:
    match = _SCHEME.match(target.strip())
    return match.group()[:-1].lower() if match else ""


def linkable(target: str) -> bool:
    """Whether ``target`` may be a clickable link (and an OSC 8 hyperlink): a web address with a host, or mail."""
    scheme = _scheme(target)
    return (scheme in _WEB and _host(target) is not None) or scheme == "mailto"


def link_note(label: str, target: str) -> str | None:
    """What to show after a link's ``label`` so the user sees where ``target`` goes; ``None`` when the label
    already shows it (the label names the target's host, or is the target)."""
    label, target = label.strip(), target.strip()
    if label == target and label.isascii():
        return None
    scheme = _scheme(target)
    if scheme in _WEB and (host := _host(target)) is not None:
        written = label if _scheme(label) in _WEB else f"http://{label}"
        # A non-ASCII label may show a look-alike of another host: its ASCII form is shown instead.
        honest = label.isascii() and len(label.split()) == 1 and _host(written) == host
        return None if honest else host
    if scheme == "mailto" and label == target[len("mailto:"):]:
        return None
    shown = safe(target, visible=True)
    return shown if len(shown) <= NOTE_MAX else shown[: NOTE_MAX - 1] + "…"
