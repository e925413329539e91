"""Web tools: ``web_search`` (DuckDuckGo through ddgs) and ``fetch_url`` (one page as readable text).

Contract:

* ``web_search(query, num_results=5)`` asks a backend for results and returns a numbered list of title,
  URL and snippet (deduplicated by URL, at most 10). The backend is ``ctx.services["web_search"]`` when
  injected -- a callable ``(query, max_results, timeout) -> list[dict]``, sync or async, so tests never
  touch the network -- else ddgs, imported lazily (it is slow to import) and run in a worker thread.
  Searches are spaced by ``web_min_interval`` per process: a call that comes too soon waits for the rest
  of the interval instead of failing, because a burst is what gets an IP banned. Rate limits, timeouts
  and a missing network come back as results the model can act on, never as exceptions.
* ``fetch_url(url, max_chars=20000)`` downloads an http(s) page and returns its text: HTML is reduced to
  readable text (no scripts, styles or navigation; headings as ``#`` lines), plain text, JSON, XML and
  Markdown are returned as they are, anything else is refused with its content type.

Which URLs run without asking (provenance, rules; a redirect to another host is judged again, asking
through ``ctx.ask``) is :mod:`swebash_ai.tools.web_guard`'s business: a model that read private files and a
hostile page must not be able to send the one to the other unasked.

Why ``fetch_url`` is careful about addresses: the URL comes from the model, which may have read it on a
hostile page, so the tool must not become a way to reach the user's own machine or network (routers, cloud
metadata at 169.254.169.254, local admin ports). The policy refuses non-http(s) schemes and obviously private
hosts so the user sees the denial; at fetch time every address the host resolves to is checked, on every
redirect (followed by hand, at most 5), and the connection goes to the checked address (the host name still
goes in the ``Host`` header and TLS SNI), so a DNS answer that changes between check and connect cannot slip
through. For the same reason environment proxies are not used. ``web_allow_private`` lifts the address rule.
Every fetch is bounded: one deadline (``web_timeout``) for the whole call, a download byte cap
(:data:`MAX_DOWNLOAD_BYTES`), and ``max_chars`` of text; the time a person takes to answer a question about a
redirect is not counted. Tests inject ``ctx.services["http_transport"]`` (an httpx transport) and
``ctx.services["resolve"]`` (a host's addresses), so no request and no DNS query leaves the machine.
"""

from __future__ import annotations

import asyncio
import html
import inspect
import ipaddress
import logging
import math
import os
import re
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import unquote

from pydantic import BaseModel, Field

from swebash_ai.safety.verdict import Verdict
from swebash_ai.tools import web_guard
from swebash_ai.tools.registry import Status, Tool, ToolContext, ToolResult, tool

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger(__name__)

MAX_RESULTS = 10
"""Most search results one call returns, whatever the model asks."""

MAX_DOWNLOAD_BYTES = 2 * 1024 * 1024
"""Bytes of a response body ``fetch_url`` reads; the rest is never downloaded."""

MAX_REDIRECTS = 5

_SNIPPET_CHARS = 400
_TITLE_CHARS = 200
_HEADERS = {
    "User-Agent": "swebash-ai (terminal assistant; fetches a page a user asked about)",
    "Accept": "text/html,text/plain,application/json,text/*;q=0.9,*/*;q=0.1",
}
_REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
_PRIVATE_SUFFIXES = (".localhost", ".local", ".internal", ".home.arpa", ".lan")

SearchBackend = Callable[[str, int, float], Any]
Resolver = Callable[[str], list[str]]
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


# --- web_search -----------------------------------------------------------------------------------------
class _RateLimiter:
    """Spaces calls by a minimum interval, per process. Callers wait; nobody fails.

    A threading lock (never held across an ``await``) rather than an ``asyncio.Lock``: the limiter is
    module state and must work from any event loop (each test, each one-shot run has its own).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._last = -math.inf

    def reset(self) -> None:
        with self._lock:
            self._pid, self._last = os.getpid(), -math.inf

    async def wait(self, interval: float) -> float:
        """Return once ``interval`` seconds have passed since the previous call started; the wait."""
        waited = 0.0
        while True:
            with self._lock:
                if self._pid != os.getpid():  # a forked child starts with its own budget
                    self._pid, self._last = os.getpid(), -math.inf
                now = time.monotonic()
                remaining = self._last + interval - now
                if remaining <= 0:
                    self._last = now
                    return waited
            await asyncio.sleep(remaining)
            waited += remaining


_RATE_LIMITER = _RateLimiter()


def _ddgs_search(query: str, max_results: int, timeout: float) -> list[dict[str, Any]]:
    """The default backend. Runs in a worker thread; ddgs is imported here, never at module import."""
    from ddgs import DDGS

    results: list[dict[str, Any]] = DDGS(timeout=max(1, math.ceil(timeout))).text(query, max_results=max_results)
    return results


async def _call_backend(backend: SearchBackend, query: str, max_results: int, limit_s: float) -> Any:
    if inspect.iscoroutinefunction(backend):
        return await backend(query, max_results, limit_s)
    out = await asyncio.to_thread(backend, query, max_results, limit_s)  # an object with an async __call__
    return await out if inspect.isawaitable(out) else out  # returns a coroutine: await it here


_TAG = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")


def _clean(text: Any, limit: int) -> str:
    """Text without tags, entities or runs of whitespace, cut to ``limit`` characters."""
    out = _SPACE.sub(" ", html.unescape(_TAG.sub(" ", str(text or "")))).strip()
    return out if len(out) <= limit else out[: limit - 1].rstrip() + "…"


def format_results(query: str, raw: Any, limit: int) -> tuple[str, list[str]]:
    """A numbered list (title, URL, snippet) of up to ``limit`` results unique by URL; and their URLs."""
    lines: list[str] = []
    urls: list[str] = []
    seen: set[str] = set()
    count = 0
    for item in raw if isinstance(raw, list) else []:
        if count >= limit:
            break
        if not isinstance(item, dict):
            continue
        url = str(item.get("href") or item.get("url") or item.get("link") or "").strip()
        key = url.rstrip("/").lower()
        if not url or key in seen:
            continue
        seen.add(key)
        urls.append(url)
        count += 1
        title = _clean(item.get("title"), _TITLE_CHARS) or url
        snippet = _clean(item.get("body") or item.get("snippet") or item.get("description"), _SNIPPET_CHARS)
        lines.append(f"{count}. {title}\n   {url}" + (f"\n   {snippet}" if snippet else ""))
    if not lines:
        return f'No web results for "{query}".', []
    return f'Web results for "{query}":\n\n' + "\n\n".join(lines), urls


def _search_error(exc: BaseException, limit_s: float) -> ToolResult | None:
    """A result for the model explaining a backend failure; ``None`` when it just found nothing."""
    name = type(exc).__name__.lower()
    text = str(exc).lower()
    if "ratelimit" in name or "rate limit" in text or "ratelimit" in text or "429" in text:
        return ToolResult.error(
            "Web search is rate limited by DuckDuckGo; try again in a minute or answer from what you know."
        )
    if isinstance(exc, TimeoutError) or "timeout" in name or "timed out" in text:
        message = f"Web search timed out after {limit_s:g} seconds; try again later or answer from what you know."
        return ToolResult(False, message, "timeout")
    if "no results" in text:
        return None
    network = ("dns", "resolv", "connect", "sending request", "network", "unreachable", "no route")
    if isinstance(exc, ConnectionError | socket.gaierror) or any(word in text for word in network):
        return ToolResult.error("Web search failed: no network connection.")
    return ToolResult.error(f"Web search failed: {type(exc).__name__}: {exc}")


def _search_policy(ctx: ToolContext, args: BaseModel) -> Verdict:
    # The query goes to the search provider only (docs/safety.md, "Ways out"): enabling the web tools accepts
    # that. What comes back is remembered as URLs that may be fetched; the query itself never is.
    return Verdict.allow("the query is sent to the search provider", rule="web.search")


def _describe_search(args: BaseModel) -> str:
    return f'search the web for "{getattr(args, "query", "")}"'


@tool("web", policy=_search_policy, describe=_describe_search)
async def web_search(
    ctx: ToolContext,
    query: Annotated[str, Field(min_length=1, max_length=500)],
    num_results: Annotated[int, Field(ge=1, le=MAX_RESULTS)] = 5,
) -> ToolResult:
    """Search the web (DuckDuckGo) and get back titles, URLs and snippets.

    Use it for facts that may have changed or that you do not know; read a result with fetch_url.

    Args:
        query: What to search for, as you would type it in a search box (at most 500 characters).
        num_results: How many results to return (1-10).
    """
    query = _SPACE.sub(" ", query).strip()
    if not query:
        return ToolResult.error("The search query is empty; say what to search for.")
    injected = ctx.services.get("web_search")
    backend: SearchBackend = injected if injected is not None else _ddgs_search
    timeout = ctx.settings.web_timeout
    waited = await _RATE_LIMITER.wait(ctx.settings.web_min_interval)
    meta: dict[str, Any] = {
        "query": query,
        "provider": "injected" if injected else "duckduckgo",
        "waited": round(waited, 3),
    }
    try:
        raw = await asyncio.wait_for(_call_backend(backend, query, num_results, timeout), timeout)
    except Exception as exc:  # any backend failure becomes a result the model can act on
        logger.info("web search failed: %r", exc)
        problem = _search_error(exc, timeout)
        if problem is not None:
            return ToolResult(problem.ok, problem.content, problem.status, metadata=meta)
        raw = []
    text, urls = format_results(query, raw, min(num_results, MAX_RESULTS))
    for url in urls:  # the provider chose these, not the model: fetch_url may open them unasked
        ctx.provenance.add_url(url)
    return ToolResult.success(text, metadata={**meta, "results": len(urls)})


# --- fetch_url: address checks ----------------------------------------------------------------------------
def address_problem(ip: IPAddress) -> str | None:
    """Why ``fetch_url`` must not connect to ``ip`` (unless private addresses are allowed); else ``None``."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    checks = (
        (ip.is_loopback, "a loopback address (this machine)"),
        (ip.is_unspecified, "an unspecified address"),
        (ip.is_link_local, "a link-local address"),
        (ip.is_multicast, "a multicast address"),
        (ip.is_private, "a private network address"),
        (ip.is_reserved, "a reserved address"),
        (not ip.is_global, "not a public internet address"),
    )
    return next((why for bad, why in checks if bad), None)


def _parse_ip(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def _url_problem(url: str, allow_private: bool) -> str | None:
    """What is wrong with ``url`` without resolving it: scheme, missing host, a private host name/literal."""
    import httpx

    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        return f"not a valid URL ({exc})"
    if parsed.scheme not in ("http", "https"):
        return f"only http and https URLs can be fetched, not {parsed.scheme or 'a URL without a scheme'}"
    host = parsed.raw_host.decode("ascii", "replace").lower().rstrip(".")
    if not host:
        return "the URL has no host"
    if allow_private:
        return None
    ip = _parse_ip(host)
    why = address_problem(ip) if ip is not None else None
    if why is None and (host == "localhost" or host.endswith(_PRIVATE_SUFFIXES)):
        why = "a local network name"
    if why:
        return f"{host} is {why}; private addresses are refused (set web_allow_private to allow them)"
    return None


async def _resolve(host: str, port: int, allow_private: bool, resolver: Resolver | None = None) -> str:
    """A checked address to connect to. Every address the name has must pass, not just the first.

    Raises:
        _FetchRefused: the host does not resolve, or resolves to a refused address.
    """
    literal = _parse_ip(host)
    if literal is not None:
        addresses = [literal]
    elif resolver is not None:  # injected (tests): no DNS query leaves the machine
        addresses = [ip for name in resolver(host) if (ip := _parse_ip(name)) is not None]
        if not addresses:
            raise _FetchRefused(f"cannot resolve {host} (no such host)")
    else:
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise _FetchRefused(f"cannot resolve {host} (no network connection, or no such host): {exc}") from exc
        addresses = [ip for info in infos if (ip := _parse_ip(str(info[4][0]))) is not None]
        if not addresses:
            raise _FetchRefused(f"{host} has no usable address")
    if not allow_private:
        for ip in addresses:
            why = address_problem(ip)
            if why:
                raise _FetchRefused(
                    f"{host} resolves to {ip}, {why}; private addresses are refused "
                    "(set web_allow_private to allow them)",
                    "denied",
                )
    return str(addresses[0])


class _FetchRefused(Exception):
    def __init__(self, message: str, status: Status = "error") -> None:
        super().__init__(message)
        self.status = status


def _fetch_policy(ctx: ToolContext, args: BaseModel) -> Verdict:
    url = str(getattr(args, "url", ""))
    problem = _url_problem(url, ctx.settings.web_allow_private)
    if problem:  # the floor: no rule and no approval gets past it
        return Verdict.deny(problem, rule="web.url")
    return web_guard.judge(url, ctx.provenance, ctx.rules)


def _describe_fetch(args: BaseModel) -> str:
    return f"fetch {getattr(args, 'url', '')}"


def _fetch_key(ctx: ToolContext, args: BaseModel) -> str | None:
    return web_guard.session_key(str(getattr(args, "url", "")))


def _fetch_preview(ctx: ToolContext, args: BaseModel) -> str:
    return web_guard.preview(str(getattr(args, "url", "")))


# --- fetch_url ------------------------------------------------------------------------------------------
@tool("web", policy=_fetch_policy, describe=_describe_fetch, session_key=_fetch_key, preview=_fetch_preview)
async def fetch_url(
    ctx: ToolContext,
    url: Annotated[str, Field(min_length=1, max_length=2000)],
    max_chars: Annotated[int, Field(ge=100, le=200_000)] = 20_000,
) -> ToolResult:
    """Download a web page (http or https) and return its readable text.

    HTML is reduced to text (headings as # lines, links as "text (url)"); plain text, JSON and Markdown
    come back as they are; binary files (images, PDFs, archives) are refused. A URL the user gave, a search
    result or a link on a fetched page runs at once; any other URL (or added query parameters) needs the
    user's approval, so use such URLs as they are.

    Args:
        url: The full http:// or https:// URL to fetch.
        max_chars: The most characters of text to return (100-200000); longer pages are cut with a note.
    """
    settings = ctx.settings
    problem = _url_problem(url, settings.web_allow_private)
    if problem:
        return ToolResult.denied(problem, metadata={"url": url})
    # The page's links may be followed unasked if this URL came by provenance or was approved by a person; a
    # rule-allowed URL is the model's choice, and its page may echo it.
    trusted = ctx.approved or ctx.provenance.covers(url)
    try:
        async with asyncio.timeout(settings.web_timeout) as deadline:
            result, links = await _fetch(ctx, url, max_chars, deadline)
    except TimeoutError:
        message = f"Fetching {url} took longer than {settings.web_timeout:g} seconds."
        return ToolResult(False, message, "timeout", metadata={"url": url})
    except _FetchRefused as exc:
        return ToolResult(False, str(exc), exc.status, metadata={"url": url})
    if trusted and result.ok:
        # An approved URL may carry data the model put there, and a page can echo its own URL into links:
        # a link repeating that data is not the page's own, so it is not remembered.
        echoes = [] if ctx.provenance.covers(url) else web_guard.data_values(url)
        for link in links:
            if not any(echo in unquote(link) for echo in echoes):
                ctx.provenance.add_url(link)
    return result


async def _fetch(ctx: ToolContext, url: str, max_chars: int, deadline: asyncio.Timeout) -> tuple[ToolResult, list[str]]:
    import httpx

    allow_private = ctx.settings.web_allow_private
    current = httpx.URL(url)
    redirects: list[str] = []
    # Proxies from the environment are not used: the checked address must be the one connected to.
    async with httpx.AsyncClient(
        timeout=httpx.Timeout(ctx.settings.web_timeout),
        follow_redirects=False,
        trust_env=False,
        transport=ctx.services.get("http_transport"),  # injected (tests), else httpx's own
    ) as client:
        for _ in range(MAX_REDIRECTS + 1):
            problem = _url_problem(str(current), allow_private)
            if problem:
                raise _FetchRefused(
                    f"refused to follow a redirect to {current}: {problem}" if redirects else problem, "denied"
                )
            if redirects and web_guard.host_of(str(current)) != web_guard.host_of(redirects[-1]):
                await _check_redirect(ctx, str(current), redirects[-1], deadline)
            host = current.raw_host.decode("ascii")
            port = current.port or (443 if current.scheme == "https" else 80)
            ip = await _resolve(host, port, allow_private, ctx.services.get("resolve"))
            pinned = current.copy_with(host=ip) if ip != host.strip("[]") else current
            request = client.build_request(
                "GET",
                pinned,
                headers={**_HEADERS, "Host": current.netloc.decode("ascii")},
                extensions={"sni_hostname": host} if current.scheme == "https" else {},
            )
            try:
                response = await client.send(request, stream=True)
            except httpx.TimeoutException as exc:
                raise TimeoutError from exc
            except httpx.HTTPError as exc:
                raise _FetchRefused(f"could not fetch {current}: {type(exc).__name__}: {exc}") from exc
            try:
                location = response.headers.get("location")
                if response.status_code in _REDIRECT_CODES and location:
                    redirects.append(str(current))
                    current = current.join(location)
                    continue
                return await _read(response, str(current), max_chars, redirects)
            finally:
                await response.aclose()
    raise _FetchRefused(f"too many redirects (more than {MAX_REDIRECTS}) starting at {url}")


async def _check_redirect(ctx: ToolContext, target: str, source: str, deadline: asyncio.Timeout) -> None:
    """A redirect to another host is judged like a new fetch: the server chose it, but a trusted host's open
    redirect can carry what the model put in the first URL anywhere.

    Raises:
        _FetchRefused: a rule denies the new host, or the user (or nobody) did not approve it.
    """
    verdict = web_guard.judge(target, ctx.provenance, ctx.rules, redirect_from=source)
    if verdict.decision == "deny":
        raise _FetchRefused(f"refused to follow a redirect to {target}: {'; '.join(verdict.reasons)}", "denied")
    if verdict.decision == "allow":
        return
    summary = f"follow a redirect from {web_guard.host_of(source)} to {web_guard.shown(target, 2000)}"
    if ctx.ask is None:
        refusal: str | None = f"Not run: {summary} needs the user's approval, and no one could approve it."
    else:
        loop = asyncio.get_running_loop()
        when = deadline.when()
        left = None if when is None else max(0.0, when - loop.time())
        deadline.reschedule(None)  # the time the user takes to decide is not the server's
        try:
            refusal = await ctx.ask(verdict, summary, web_guard.preview(target), web_guard.session_key(target))
        finally:
            deadline.reschedule(None if left is None else loop.time() + left)
    if refusal is not None:
        raise _FetchRefused(f"{source} redirects to another host; not followed. {refusal}", "denied")


async def _read(
    response: httpx.Response, final_url: str, max_chars: int, redirects: list[str]
) -> tuple[ToolResult, list[str]]:
    """The page as a result for the model, and its links."""
    from swebash_ai.tools.web_text import decode, html_to_text, kind  # not at import: only a fetch needs it

    header = response.headers.get("content-type", "")
    content_type = header.split(";", 1)[0].strip().lower()
    charset = response.charset_encoding
    meta: dict[str, Any] = {
        "url": final_url,
        "status": response.status_code,
        "content_type": content_type or "unknown",
        "redirects": redirects,
    }
    declared = response.headers.get("content-length", "")
    not_text = "is not a text page; fetch_url only reads text (HTML, plain text, JSON, Markdown)."
    if content_type and kind(content_type, b"") is None:  # refuse before downloading anything
        meta["bytes"] = int(declared) if declared.isdigit() else None
        shown = f", {declared} bytes" if declared.isdigit() else ""
        return ToolResult.error(
            f"{final_url} ({content_type}{shown}, HTTP {response.status_code}) {not_text}", metadata=meta
        ), []

    chunks: list[bytes] = []
    size = 0
    capped = False
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= MAX_DOWNLOAD_BYTES:
            capped = True
            break
    body = b"".join(chunks)[:MAX_DOWNLOAD_BYTES]
    meta["bytes"] = len(body)
    page_kind = kind(content_type, body[:1024])
    if page_kind is None:
        shown = f"no content type, {len(body)} bytes, looks binary"
        return ToolResult.error(f"{final_url} ({shown}, HTTP {response.status_code}) {not_text}", metadata=meta), []
    text = decode(body, charset, page_kind == "html")
    if page_kind == "html":
        page = html_to_text(text, final_url)
        text, links = page.text, page.links
        meta["title"] = page.title
        if page.title and not text.startswith("# "):
            text = f"# {page.title}\n\n{text}"
    else:
        links = web_guard.extract_urls(text[:MAX_DOWNLOAD_BYTES])
    if response.status_code >= 400:
        excerpt = text[:500].strip()
        return ToolResult.error(
            f"HTTP {response.status_code} {response.reason_phrase} for {final_url}"
            + (f":\n{excerpt}" if excerpt else "."),
            metadata=meta,
        ), []

    notes: list[str] = []
    truncated = capped
    if capped:
        notes.append(f"download stopped at {MAX_DOWNLOAD_BYTES} bytes")
    if len(text) > max_chars:
        notes.append(
            f"showing the first {max_chars} of {len(text)} characters; ask again with a larger max_chars for more"
        )
        text = text[:max_chars]
        truncated = True
    if notes:
        text += "\n\n[truncated: " + "; ".join(notes) + "]"
    head = f"{final_url} ({meta['content_type']}, HTTP {response.status_code})\n\n"
    return ToolResult.success(head + text, truncated=truncated, metadata=meta), links


TOOLS: list[Tool] = [web_search, fetch_url]
