"""web_search and fetch_url, without the network.

Search runs on an injected backend (``ctx.services["web_search"]``) or a fake ``ddgs`` module; fetch runs
against a local ``http.server`` on 127.0.0.1, which only answers when ``web_allow_private`` is on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import textwrap
import threading
import time
import types
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.config.settings import load_settings
from swebash_ai.tools import web
from swebash_ai.tools.registry import Tool, ToolContext, ToolResult
from swebash_ai.tools.web import TOOLS, fetch_url, web_search

REPO = Path(__file__).resolve().parents[2]


def make_ctx(tmp_path: Path, services: dict[str, Any] | None = None, **settings: Any) -> ToolContext:
    loaded = load_settings({"web_min_interval": 0, **settings})
    return ToolContext(settings=loaded.settings, cwd=tmp_path, services=dict(services or {}))


async def call(t: Tool, ctx: ToolContext, **args: Any) -> ToolResult:
    """Validate, check the policy, run: what the loop does."""
    parsed = t.parse_arguments(args)
    assert not isinstance(parsed, ToolResult), parsed.content
    verdict = t.check(ctx, parsed)
    if verdict.decision == "deny":
        return ToolResult.denied("; ".join(verdict.reasons))
    return await t.invoke(ctx, parsed)


@pytest.fixture(autouse=True)
def fresh_rate_limiter() -> None:
    web._RATE_LIMITER.reset()


def test_exports_both_tools() -> None:
    assert [t.name for t in TOOLS] == ["web_search", "fetch_url"]
    assert {t.category for t in TOOLS} == {"web"}


# --- web_search ---------------------------------------------------------------------------------------
class Recorder:
    """A sync search backend returning fixed results and recording its calls."""

    def __init__(self, results: list[dict[str, Any]]) -> None:
        self.results = results
        self.calls: list[tuple[str, int, float]] = []

    def __call__(self, query: str, max_results: int, timeout: float) -> list[dict[str, Any]]:
        self.calls.append((query, max_results, timeout))
        return self.results


def hits(n: int) -> list[dict[str, Any]]:
    return [
        {"title": f"Result {i}", "href": f"https://example.com/{i}", "body": f"snippet {i}"} for i in range(1, n + 1)
    ]


async def test_formats_a_numbered_list_with_clean_snippets(tmp_path: Path) -> None:
    backend = Recorder(
        [
            {
                "title": "<b>Python</b> &amp; you",
                "href": "https://python.org/",
                "body": "  The   <em>official</em>\n\n site &lt;3 ",
            },
            {"title": "Docs", "href": "https://docs.python.org/3/", "body": ""},
        ]
    )
    result = await call(web_search, make_ctx(tmp_path, {"web_search": backend}, web_timeout=7), query="python")
    assert result.ok, result.content
    assert result.text == (
        'Web results for "python":\n\n'
        "1. Python & you\n   https://python.org/\n   The official site <3\n\n"
        "2. Docs\n   https://docs.python.org/3/"
    )
    assert backend.calls == [("python", 5, 7.0)]  # num_results and web_timeout reach the backend
    assert result.metadata["results"] == 2
    assert result.metadata["provider"] == "injected"


async def test_deduplicates_by_url(tmp_path: Path) -> None:
    backend = Recorder(
        [
            {"title": "A", "href": "https://a.example/page", "body": "first"},
            {"title": "A again", "href": "https://a.example/page/", "body": "same page, trailing slash"},
            {"title": "no url", "body": "skipped"},
            {"title": "B", "href": "https://b.example/", "body": "second"},
        ]
    )
    result = await call(web_search, make_ctx(tmp_path, {"web_search": backend}), query="dups")
    assert result.text.count("https://a.example/page") == 1
    assert "2. B\n   https://b.example/" in result.text
    assert "3." not in result.text
    assert "skipped" not in result.text


@pytest.mark.parametrize(
    ("asked", "returned", "shown"),
    [
        (10, 15, 10),  # never more than 10, even when the backend sends more
        (3, 15, 3),  # a backend that ignores max_results is cut to num_results
        (5, 2, 2),  # fewer results than asked is fine
    ],
)
async def test_caps_the_number_of_results(tmp_path: Path, asked: int, returned: int, shown: int) -> None:
    backend = Recorder(hits(returned))
    result = await call(web_search, make_ctx(tmp_path, {"web_search": backend}), query="q", num_results=asked)
    assert result.metadata["results"] == shown
    assert f"{shown}. Result {shown}\n" in result.text
    assert f"{shown + 1}. " not in result.text


@pytest.mark.parametrize(
    ("args", "ok"),
    [
        ({"query": "x", "num_results": 0}, False),  # below the minimum of 1
        ({"query": "x", "num_results": 11}, False),  # above the cap of 10
        ({"query": "x", "num_results": 10}, True),  # the cap itself is fine
        ({"query": "x" * 501}, False),  # queries are limited to 500 characters
        ({"query": "x" * 500}, True),  # exactly 500 is fine
        ({"query": ""}, False),  # an empty query is not a search
        ({"num_results": 3}, False),  # query is required
        ({"query": "x", "engine": "google"}, False),  # unknown arguments are refused
    ],
)
def test_schema_validates_arguments(args: dict[str, Any], ok: bool) -> None:
    parsed = web_search.parse_arguments(args)
    assert (not isinstance(parsed, ToolResult)) is ok, parsed


def test_schema_and_description_for_the_model() -> None:
    props = web_search.parameters["properties"]
    assert props["num_results"]["minimum"] == 1
    assert props["num_results"]["maximum"] == 10
    assert props["query"]["maxLength"] == 500
    assert "search box" in props["query"]["description"]
    parsed = web_search.parse_arguments({"query": "rust async"})
    assert not isinstance(parsed, ToolResult)
    assert web_search.describe(parsed) == 'search the web for "rust async"'


async def test_async_backend_and_no_results(tmp_path: Path) -> None:
    async def backend(query: str, max_results: int, timeout: float) -> list[dict[str, Any]]:
        await asyncio.sleep(0)
        return []

    result = await call(web_search, make_ctx(tmp_path, {"web_search": backend}), query="nothing here")
    assert result.ok
    assert result.text == 'No web results for "nothing here".'


async def test_rate_limiter_spaces_calls(tmp_path: Path) -> None:
    stamps: list[float] = []

    async def backend(query: str, max_results: int, timeout: float) -> list[dict[str, Any]]:
        stamps.append(time.monotonic())
        return hits(1)

    ctx = make_ctx(tmp_path, {"web_search": backend}, web_min_interval=0.2)
    start = time.monotonic()
    first = await call(web_search, ctx, query="one")
    assert time.monotonic() - start < 0.2  # the first call does not wait
    second = await call(web_search, ctx, query="two")
    assert time.monotonic() - start >= 0.2  # the second waited for the rest of the interval...
    assert stamps[1] - stamps[0] >= 0.2 - 0.005
    assert first.ok and second.ok  # ...instead of failing
    assert second.metadata["waited"] > 0


class RatelimitException(Exception):  # named like ddgs's
    pass


@pytest.mark.parametrize(
    ("error", "status", "expected"),
    [
        (RatelimitException("202 Ratelimit"), "error", "rate limited by DuckDuckGo; try again in a minute"),
        (ConnectionError("connection refused"), "error", "Web search failed: no network connection"),
        (OSError("DNSError: error resolving DNS"), "error", "Web search failed: no network connection"),
        (TimeoutError("read timed out"), "timeout", "Web search timed out"),
        (ValueError("boom"), "error", "Web search failed: ValueError: boom"),
    ],
)
async def test_backend_errors_become_clear_results(
    tmp_path: Path, error: Exception, status: str, expected: str
) -> None:
    def backend(query: str, max_results: int, timeout: float) -> list[dict[str, Any]]:
        raise error

    result = await call(web_search, make_ctx(tmp_path, {"web_search": backend}), query="q")
    assert not result.ok
    assert result.status == status
    assert expected in result.text


@pytest.mark.parametrize("kind", ["async", "sync"])
async def test_a_backend_slower_than_web_timeout_times_out(tmp_path: Path, kind: str) -> None:
    async def slow_async(query: str, max_results: int, timeout: float) -> list[dict[str, Any]]:
        await asyncio.sleep(5)
        return hits(1)

    def slow_sync(query: str, max_results: int, timeout: float) -> list[dict[str, Any]]:
        time.sleep(0.5)  # the thread cannot be killed; keep it short
        return hits(1)

    backend = slow_async if kind == "async" else slow_sync
    start = time.monotonic()
    result = await call(web_search, make_ctx(tmp_path, {"web_search": backend}, web_timeout=0.1), query="q")
    assert time.monotonic() - start < 0.45
    assert result.status == "timeout"
    assert result.for_model().startswith("Timed out: Web search timed out after 0.1 seconds")


def fake_ddgs(error: Exception | None = None) -> tuple[types.ModuleType, list[dict[str, Any]]]:
    """A stand-in ``ddgs`` module: the default backend's contract with the real one."""
    calls: list[dict[str, Any]] = []

    class DDGS:
        def __init__(self, timeout: int | None = 5) -> None:
            calls.append({"timeout": timeout})

        def text(self, query: str, max_results: int | None = 10) -> list[dict[str, Any]]:
            calls.append({"query": query, "max_results": max_results})
            if error is not None:
                raise error
            return hits(2)

    module = types.ModuleType("ddgs")
    module.DDGS = DDGS  # type: ignore[attr-defined]
    return module, calls


async def test_default_backend_uses_ddgs_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module, calls = fake_ddgs()
    monkeypatch.setitem(sys.modules, "ddgs", module)
    result = await call(web_search, make_ctx(tmp_path, web_timeout=2.5), query="py", num_results=4)
    assert result.ok, result.content
    assert calls == [{"timeout": 3}, {"query": "py", "max_results": 4}]
    assert result.metadata["provider"] == "duckduckgo"
    assert "2. Result 2" in result.text


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        # what ddgs raises offline: a DDGSException wrapping the engine's DNS error
        (Exception("DNSError('error sending request for url > error resolving DNS')"), "no network connection"),
        (Exception("No results found."), 'No web results for "py"'),
    ],
)
async def test_default_backend_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: Exception, expected: str
) -> None:
    module, _ = fake_ddgs(error)
    monkeypatch.setitem(sys.modules, "ddgs", module)
    result = await call(web_search, make_ctx(tmp_path), query="py")
    assert expected in result.text


def test_ddgs_is_not_imported_when_a_backend_is_injected(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """
        import asyncio, json, pathlib, sys
        from swebash_ai.config.settings import load_settings
        from swebash_ai.tools.registry import ToolContext
        import swebash_ai.tools.web as web
        after_import = "ddgs" in sys.modules
        ctx = ToolContext(load_settings({"web_min_interval": 0}).settings, pathlib.Path("."),
                          services={"web_search": lambda q, n, t: [{"title": "t", "href": "https://x.y/"}]})
        args = web.web_search.parse_arguments({"query": "hello"})
        result = asyncio.run(web.web_search.invoke(ctx, args))
        print(json.dumps({"after_import": after_import, "ok": result.ok, "ddgs": "ddgs" in sys.modules}))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report == {"after_import": False, "ok": True, "ddgs": False}


# --- fetch_url: policy ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("url", "allow_private", "decision"),
    [
        ("https://example.com/docs", False, "ask"),  # past the floor; unseen, so it asks (test_web_provenance.py)
        ("http://8.8.8.8/", False, "ask"),  # a public address literal passes the floor
        ("http://127.0.0.1:8080/", False, "deny"),  # loopback: this machine's services
        ("http://localhost/admin", False, "deny"),  # loopback by name
        ("http://app.localhost/", False, "deny"),  # *.localhost is loopback too
        ("http://[::1]/", False, "deny"),  # IPv6 loopback
        ("http://[::ffff:127.0.0.1]/", False, "deny"),  # IPv4-mapped IPv6 loopback
        ("http://169.254.169.254/latest/meta-data/", False, "deny"),  # cloud metadata (link-local)
        ("http://10.1.2.3/", False, "deny"),  # private network
        ("http://192.168.1.1/", False, "deny"),  # the home router
        ("http://0.0.0.0:8000/", False, "deny"),  # unspecified, reaches local services
        ("http://224.0.0.1/", False, "deny"),  # multicast
        ("http://printer.local/", False, "deny"),  # mDNS names are on the local network
        ("file:///etc/passwd", False, "deny"),  # not http(s)
        ("ftp://example.com/file", False, "deny"),  # not http(s)
        ("javascript:alert(1)", False, "deny"),  # not http(s)
        ("example.com/page", False, "deny"),  # no scheme
        ("http://127.0.0.1:8080/", True, "ask"),  # web_allow_private lifts the address rule...
        ("file:///etc/passwd", True, "deny"),  # ...but not the scheme rule
    ],
)
def test_fetch_policy(tmp_path: Path, url: str, allow_private: bool, decision: str) -> None:
    ctx = make_ctx(tmp_path, web_allow_private=allow_private)
    parsed = fetch_url.parse_arguments({"url": url})
    assert not isinstance(parsed, ToolResult)
    verdict = fetch_url.check(ctx, parsed)
    assert verdict.decision == decision, verdict
    if decision == "deny":
        assert verdict.reasons  # the user sees why in the activity pane
    assert fetch_url.describe(parsed) == f"fetch {url}"


# --- fetch_url: against a local server --------------------------------------------------------------------
PAGE = b"""<!doctype html><html><head><title>The Page</title>
<style>body { color: red }</style><script>var secret = "do not show";</script></head>
<body><nav><a href="/home">Home</a> | <a href="/about">About us</a></nav>
<h1>Main heading</h1>
<p>First   paragraph
with <b>bold</b> text and a <a href="/plain">link to plain</a>.</p>
<script>alert("also hidden")</script><noscript>enable javascript</noscript>
<h2>Second</h2><ul><li>one</li><li>two &amp; three</li></ul>
</body></html>"""

ROUTES: dict[str, tuple[int, dict[str, str], bytes]] = {
    "/page": (200, {"Content-Type": "text/html; charset=utf-8"}, PAGE),
    "/plain": (200, {"Content-Type": "text/plain; charset=utf-8"}, b"hello plain\n"),
    "/latin1": (200, {"Content-Type": "text/plain; charset=iso-8859-1"}, "café".encode("latin-1")),
    "/json": (200, {"Content-Type": "application/json"}, b'{"a": [1, 2]}'),
    "/bin": (200, {"Content-Type": "application/octet-stream"}, b"\x00\x01\x02" * 100),
    "/png": (200, {"Content-Type": "image/png"}, b"\x89PNG\r\n\x1a\n" + b"\x00" * 64),
    "/untyped-bin": (200, {}, b"PK\x03\x04\x00\x00binary"),
    "/untyped-html": (200, {}, b"<!DOCTYPE html><html><body><h1>Sniffed</h1></body></html>"),
    "/big": (200, {"Content-Type": "text/plain"}, b"x" * 300_000),
    "/missing": (404, {"Content-Type": "text/plain"}, b"no such page"),
    "/redirect": (302, {"Location": "/plain"}, b""),
    "/to-metadata": (302, {"Location": "http://169.254.169.254/latest/meta-data/"}, b""),
    "/to-file": (301, {"Location": "file:///etc/passwd"}, b""),
    "/loop": (302, {"Location": "/loop"}, b""),
}


SLOW_SECONDS = 3.0


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/slow":
            time.sleep(SLOW_SECONDS)
        status, headers, body = ROUTES.get(self.path, (200, {"Content-Type": "text/plain"}, b"slow"))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a client stopped at its cap
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def open_ctx(tmp_path: Path) -> ToolContext:
    return make_ctx(tmp_path, web_allow_private=True, web_timeout=5)


async def test_local_server_refused_by_default(tmp_path: Path, server: str) -> None:
    ctx = make_ctx(tmp_path)
    via_policy = await call(fetch_url, ctx, url=f"{server}/plain")
    assert via_policy.status == "denied"
    assert "loopback" in via_policy.text and "web_allow_private" in via_policy.text
    parsed = fetch_url.parse_arguments({"url": f"{server}/plain"})
    assert not isinstance(parsed, ToolResult)
    direct = await fetch_url.invoke(ctx, parsed)  # the tool checks again, whatever the policy said
    assert direct.status == "denied"


async def test_plain_text_with_allow_private(open_ctx: ToolContext, server: str) -> None:
    result = await call(fetch_url, open_ctx, url=f"{server}/plain")
    assert result.ok, result.content
    assert result.text == f"{server}/plain (text/plain, HTTP 200)\n\nhello plain\n"
    assert result.metadata == {
        "url": f"{server}/plain",
        "status": 200,
        "content_type": "text/plain",
        "redirects": [],
        "bytes": 12,
    }


async def test_html_becomes_readable_text(open_ctx: ToolContext, server: str) -> None:
    result = await call(fetch_url, open_ctx, url=f"{server}/page")
    assert result.ok, result.content
    text = result.text
    for hidden in ("secret", "also hidden", "color: red", "enable javascript", "About us"):
        assert hidden not in text  # scripts, styles, noscript and navigation are dropped
    assert "# Main heading" in text
    assert "## Second" in text
    assert "First paragraph with bold text and a link to plain" in text
    assert f"link to plain ({server}/plain)" in text
    assert "- two & three" in text
    assert result.metadata["title"] == "The Page"


async def test_json_and_declared_charset(open_ctx: ToolContext, server: str) -> None:
    as_json = await call(fetch_url, open_ctx, url=f"{server}/json")
    assert as_json.ok and as_json.text.endswith('{"a": [1, 2]}')
    latin = await call(fetch_url, open_ctx, url=f"{server}/latin1")
    assert latin.ok and latin.text.endswith("café")


async def test_follows_redirects_and_reports_the_final_url(open_ctx: ToolContext, server: str) -> None:
    result = await call(fetch_url, open_ctx, url=f"{server}/redirect")
    assert result.ok, result.content
    assert result.metadata["url"] == f"{server}/plain"
    assert result.metadata["redirects"] == [f"{server}/redirect"]


async def test_redirect_to_a_private_address_is_refused(
    tmp_path: Path, server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pretend 127.0.0.1 is public so the first hop is allowed; the redirect goes to cloud metadata.
    real = web.address_problem
    monkeypatch.setattr(web, "address_problem", lambda ip: None if str(ip) == "127.0.0.1" else real(ip))
    result = await call(fetch_url, make_ctx(tmp_path), url=f"{server}/to-metadata")
    assert result.status == "denied"
    assert "refused to follow a redirect to http://169.254.169.254/" in result.text


async def test_redirect_to_another_scheme_or_in_a_loop(open_ctx: ToolContext, server: str) -> None:
    to_file = await call(fetch_url, open_ctx, url=f"{server}/to-file")
    assert to_file.status == "denied"
    assert "only http and https" in to_file.text
    looping = await call(fetch_url, open_ctx, url=f"{server}/loop")
    assert not looping.ok
    assert "too many redirects" in looping.text


async def test_a_name_resolving_to_a_private_address_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = {"inside.example.com": ["93.184.215.14", "10.0.0.7"]}  # one public, one private answer

    async def fake_getaddrinfo(host: str, port: int, **kw: Any) -> list[Any]:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port)) for ip in answers[host]]

    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", fake_getaddrinfo)
    result = await call(fetch_url, make_ctx(tmp_path), url="http://inside.example.com/")
    assert result.status == "denied"
    assert "resolves to 10.0.0.7" in result.text


@pytest.mark.parametrize(("path", "kind"), [("/bin", "application/octet-stream"), ("/png", "image/png")])
async def test_binary_content_is_refused(open_ctx: ToolContext, server: str, path: str, kind: str) -> None:
    result = await call(fetch_url, open_ctx, url=server + path)
    assert not result.ok
    assert f"({kind}, " in result.text and "is not a text page; fetch_url only reads text" in result.text


async def test_missing_content_type_is_sniffed(open_ctx: ToolContext, server: str) -> None:
    as_html = await call(fetch_url, open_ctx, url=f"{server}/untyped-html")
    assert as_html.ok and "# Sniffed" in as_html.text
    as_binary = await call(fetch_url, open_ctx, url=f"{server}/untyped-bin")
    assert not as_binary.ok and "looks binary" in as_binary.text


async def test_max_chars_truncates_with_a_note(open_ctx: ToolContext, server: str) -> None:
    result = await call(fetch_url, open_ctx, url=f"{server}/big", max_chars=1000)
    assert result.ok and result.truncated
    assert "[truncated: showing the first 1000 of 300000 characters" in result.text
    assert result.text.split("\n\n")[1] == "x" * 1000


async def test_download_byte_cap(open_ctx: ToolContext, server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(web, "MAX_DOWNLOAD_BYTES", 50_000)
    result = await call(fetch_url, open_ctx, url=f"{server}/big", max_chars=200_000)
    assert result.ok and result.truncated
    assert result.metadata["bytes"] == 50_000
    assert "download stopped at 50000 bytes" in result.text


async def test_http_errors_and_timeouts(tmp_path: Path, server: str) -> None:
    # The 404 gets all the time a loaded machine needs; the slow page a short timeout, which must cut the wait
    # well before the page would come (SLOW_SECONDS): a margin of ten times, so a busy machine does not fail it.
    missing = await call(fetch_url, make_ctx(tmp_path, web_allow_private=True, web_timeout=30),
                         url=f"{server}/missing")
    assert not missing.ok
    assert "HTTP 404 Not Found" in missing.text and "no such page" in missing.text
    start = time.monotonic()
    slow = await call(fetch_url, make_ctx(tmp_path, web_allow_private=True, web_timeout=0.3), url=f"{server}/slow")
    assert slow.status == "timeout"
    assert time.monotonic() - start < SLOW_SECONDS


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://127.0.0.1/file"])
async def test_other_schemes_refused_even_with_allow_private(open_ctx: ToolContext, url: str) -> None:
    parsed = fetch_url.parse_arguments({"url": url})
    assert not isinstance(parsed, ToolResult)
    result = await fetch_url.invoke(open_ctx, parsed)
    assert result.status == "denied"
    assert "only http and https" in result.text
