"""The setup's model list against loopback servers that answer in the shapes the providers document.

Anthropic: ``GET /v1/models`` with ``x-api-key`` and ``anthropic-version``, ``data: [{type: "model", id,
display_name, created_at}]``, paged by ``has_more`` / ``last_id`` and ``after_id``, a bad key answered 401.
Gemini: ``GET /v1beta/models`` with ``x-goog-api-key`` (or ``?key=``), ``models: [{name: "models/...",
supportedGenerationMethods}]``, paged by ``nextPageToken`` and ``pageToken``, a bad key answered 400
``INVALID_ARGUMENT`` with reason ``API_KEY_INVALID``. Pages are cut small here, as a server may.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from swebash_ai import errors
from swebash_ai.commands import setup_flow
from swebash_ai.commands.setup_flow import kind_named, list_models

KEY = "test-key-0123456789"
PAGE = 2

CLAUDES = ["claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"]
GEMINIS: list[tuple[str, list[str]]] = [
    ("models/gemini-2.5-flash", ["generateContent", "countTokens", "createCachedContent"]),
    ("models/text-embedding-004", ["embedContent"]),
    ("models/gemini-2.5-pro", ["generateContent", "countTokens"]),
    ("models/imagen-4.0-generate-001", ["predict"]),
    ("models/gemini-embedding-001", ["embedContent", "countTextTokens"]),
    ("models/gemini-2.0-flash-lite", ["generateContent"]),
]


class Server:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.native_gemini = True
        self.endless = False
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                headers = {k.lower(): v for k, v in self.headers.items()}
                owner.requests.append({"path": url.path, "query": query, "headers": headers})
                status, body = owner.answer(url.path, query, headers)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def answer(self, path: str, query: dict[str, str], headers: dict[str, str]) -> tuple[int, Any]:
        if path == "/v1/models":
            return self.anthropic(query, headers)
        if path == "/v1beta/models" and self.native_gemini:
            return self.gemini(query, headers)
        if path == "/v1beta/openai/models":  # Gemini's OpenAI-compatible list
            return 200, {"object": "list", "data": [{"id": n, "object": "model", "owned_by": "google"}
                                                    for n, _m in GEMINIS]}
        return 404, {"error": {"code": 404, "message": "not found", "status": "NOT_FOUND"}}

    def anthropic(self, query: dict[str, str], headers: dict[str, str]) -> tuple[int, Any]:
        if headers.get("x-api-key") != KEY or "anthropic-version" not in headers:
            return 401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
        start = CLAUDES.index(query["after_id"]) + 1 if "after_id" in query else 0
        if self.endless:
            start = 0
        page = CLAUDES[start : start + min(PAGE, int(query.get("limit", "20")))]
        data = [{"type": "model", "id": m, "display_name": m.title(), "created_at": "2025-09-29T00:00:00Z"}
                for m in page]
        more = self.endless or start + len(page) < len(CLAUDES)
        return 200, {"data": data, "has_more": more, "first_id": page[0], "last_id": page[-1]}

    def gemini(self, query: dict[str, str], headers: dict[str, str]) -> tuple[int, Any]:
        if (headers.get("x-goog-api-key") or query.get("key")) != KEY:
            return 400, {"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
                                   "status": "INVALID_ARGUMENT", "details": [{
                                       "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                       "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]}}
        start = int(query.get("pageToken", "0"))
        page = GEMINIS[start : start + PAGE]
        body: dict[str, Any] = {"models": [{"name": n, "version": "001", "displayName": n[7:],
                                            "supportedGenerationMethods": m} for n, m in page]}
        if start + PAGE < len(GEMINIS):
            body["nextPageToken"] = str(start + PAGE)
        return 200, body


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    srv = Server()
    thread = threading.Thread(target=srv.httpd.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setitem(setup_flow.BASES, "anthropic", srv.base)
    monkeypatch.setitem(setup_flow.BASES, "gemini", srv.base + "/v1beta/openai")
    yield srv
    srv.httpd.shutdown()
    srv.httpd.server_close()


async def models(kind: str, key: str | None = KEY) -> list[str] | None:
    return await list_models(kind_named(kind), setup_flow.BASES[kind], key)


async def test_anthropic_lists_every_page_with_its_headers(server: Server) -> None:
    assert await models("anthropic") == sorted(CLAUDES)  # three models over two pages
    first, second = server.requests
    assert first["headers"]["x-api-key"] == KEY and first["headers"]["anthropic-version"] == "2023-06-01"
    assert "authorization" not in first["headers"]  # Anthropic's key goes in x-api-key only
    assert second["query"]["after_id"] == CLAUDES[1]  # the next page starts after the last id seen


async def test_gemini_lists_only_chat_models_without_the_prefix(server: Server) -> None:
    got = await models("gemini")
    assert got == ["gemini-2.0-flash-lite", "gemini-2.5-flash", "gemini-2.5-pro"]  # no embedding, no imagen
    assert [r["path"] for r in server.requests] == ["/v1beta/models"] * 3  # every page, by nextPageToken
    assert [r["query"].get("pageToken") for r in server.requests] == [None, "2", "4"]
    assert all(r["headers"]["x-goog-api-key"] == KEY and "key" not in r["query"] for r in server.requests)


async def test_gemini_without_its_native_list_falls_back_to_the_compatible_one(server: Server) -> None:
    server.native_gemini = False  # a proxy that only serves the OpenAI-compatible routes
    got = await models("gemini")
    assert got is not None and "gemini-2.5-flash" in got and not any(m.startswith("models/") for m in got)


@pytest.mark.parametrize(
    ("kind", "status"),
    [
        ("anthropic", 401),  # why: Anthropic refuses a bad x-api-key with 401 authentication_error
        ("gemini", 400),  # why: Gemini refuses a bad key with 400 INVALID_ARGUMENT / API_KEY_INVALID, not 401
    ],
)
async def test_a_refused_key_is_said_to_be_refused(server: Server, kind: str, status: int) -> None:
    with pytest.raises(errors.AuthenticationError) as caught:
        await models(kind, "wrong-key-0000")
    assert caught.value.status == status and "wrong-key" not in str(caught.value)


async def test_a_list_that_pages_forever_stops(server: Server) -> None:
    server.endless = True  # has_more forever: the setup must not hang
    assert await models("anthropic") == sorted(CLAUDES[:PAGE])
    assert len(server.requests) == setup_flow.MAX_PAGES
