"""The host-allowlist proxy: what it lets out, over its unix socket and from inside a real sandbox."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from swebash_ai.safety.paths import PathPolicy
from swebash_ai.sandbox import bwrap, detect
from swebash_ai.sandbox.policy import SandboxPolicy, build_policy
from swebash_ai.sandbox.proxy import RELAY_PORT, Proxy
from swebash_ai.tools.process import run_process


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"hello from {self.path}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[int]:
    """A web server on this machine's loopback; its port."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def proxy_for(server: int) -> Iterator[Proxy]:
    proxy = Proxy([f"127.0.0.1:{server}"]).start()
    try:
        yield proxy
    finally:
        proxy.stop()


def _ask(proxy: Proxy, request: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(str(proxy.path))
        s.sendall(request)
        out = b""
        while chunk := s.recv(65_536):
            out += chunk
        return out


@pytest.mark.parametrize(("entry", "host", "port", "allowed"), [
    ("pypi.org", "pypi.org", 443, True),
    ("pypi.org", "pypi.org", 80, True),
    ("pypi.org", "pypi.org", 22, False),           # a bare name: web ports only
    ("pypi.org", "evil-pypi.org", 443, False),
    ("pypi.org", "files.pypi.org", 443, False),    # subdomains only with *.
    ("*.pythonhosted.org", "files.pythonhosted.org", 443, True),
    ("*.pythonhosted.org", "pythonhosted.org.evil.com", 443, False),
    ("git.example.com:8443", "git.example.com", 8443, True),
    ("git.example.com:8443", "git.example.com", 443, False),
])
def test_what_the_allow_list_lets_out(entry: str, host: str, port: int, allowed: bool) -> None:
    proxy = Proxy([entry])
    try:
        assert proxy.allows(host, port) == allowed
    finally:
        proxy.stop()


def test_an_unlisted_host_is_asked_about_when_someone_can_answer() -> None:
    asked: list[tuple[str, int]] = []
    proxy = Proxy([], ask=lambda host, port: asked.append((host, port)) or host == "ok.example")
    try:
        assert proxy.allows("ok.example", 443) and not proxy.allows("no.example", 443)
        assert asked == [("ok.example", 443), ("no.example", 443)]
    finally:
        proxy.stop()


def test_connect_and_plain_http_to_a_listed_host(proxy_for: Proxy, server: int) -> None:
    tunnel = _ask(proxy_for, f"CONNECT 127.0.0.1:{server} HTTP/1.1\r\nHost: x\r\n\r\n"
                  f"GET /t HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    assert tunnel.startswith(b"HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.0 200")
    assert tunnel.endswith(b"hello from /t\n")
    plain = _ask(proxy_for, f"GET http://127.0.0.1:{server}/p?q=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 "Proxy-Connection: keep-alive\r\n\r\n".encode())
    assert plain.startswith(b"HTTP/1.0 200") and plain.endswith(b"hello from /p?q=1\n")
    assert proxy_for.seen == [("127.0.0.1", server, True)] * 2


def test_an_unlisted_host_gets_403_naming_it(proxy_for: Proxy, server: int) -> None:
    out = _ask(proxy_for, b"CONNECT example.com:443 HTTP/1.1\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 403 Forbidden") and b"example.com:443 is not in sandbox_allow_hosts" in out
    assert _ask(proxy_for, b"GET ftp://x/ HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 400")
    assert proxy_for.seen == [("example.com", 443, False)]


def test_bwrap_puts_the_relay_in_front_of_the_command(tmp_path: Path) -> None:
    sock = tmp_path / "proxy.sock"
    policy = SandboxPolicy(writable=(Path("/w"),), allow_hosts=("pypi.org",), proxy=sock)
    argv = bwrap.render(policy, ["bash", "-c", "x"], cwd=Path("/w"), bwrap="bwrap")
    assert ["--ro-bind", str(tmp_path), str(tmp_path)] == argv[argv.index(str(tmp_path)) - 1:][:3]
    tail = argv[argv.index("--chdir"):]
    # the real interpreter and the relay as code: a venv or a checkout under /tmp is not in the sandbox
    assert tail[3:7] == [os.path.realpath(sys.executable), "-I", "-S", "-c"] and "def main" in tail[7]
    assert tail[8:] == [str(sock), str(RELAY_PORT), "--", "bash", "-c", "x"]
    opened = bwrap.render(SandboxPolicy(writable=(Path("/w"),), network="full", proxy=sock), ["x"], cwd=Path("/w"),
                          bwrap="bwrap")
    assert "-c" not in opened[: opened.index("--chdir")] and "def main" not in " ".join(opened)  # no relay


@pytest.mark.skipif(not detect.choose("bwrap").ok or shutil.which("curl") is None,
                    reason="needs bubblewrap that works here, and curl")
async def test_from_inside_the_sandbox_only_the_listed_host_answers(server: int) -> None:
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
    ws = Path(tempfile.mkdtemp(prefix="sbx-proxy-", dir=base))
    try:
        policy = build_policy(PathPolicy(roots=[ws], home=ws / "home"), allow_hosts=[f"127.0.0.1:{server}"])
        # --noproxy '': the test's server is on the host's loopback, which NO_PROXY would otherwise keep direct
        res = await run_process(f'echo "$HTTPS_PROXY"; curl -sS --noproxy "" -x "$HTTP_PROXY" '
                                f"http://127.0.0.1:{server}/in; curl -sS --noproxy '' -x \"$HTTP_PROXY\" "
                                f"http://127.0.0.1:{server + 1 if server < 65535 else 1}/no; "
                                f"curl -sS --max-time 5 https://example.com; "
                                f"exec 3<>/dev/tcp/127.0.0.1/{server} && echo DIRECT",
                                cwd=ws, timeout=30, sandbox=policy, sandbox_backend="bwrap")
    finally:
        shutil.rmtree(ws, ignore_errors=True)
    lines = res.stdout.splitlines()
    assert lines and lines[0] == f"http://127.0.0.1:{RELAY_PORT}", (res.exit_code, res.timed_out, res.stderr[-2000:])
    assert "hello from /in" in res.stdout  # through the proxy
    assert "is not in sandbox_allow_hosts" in res.stdout  # another port of the same host: refused
    assert "CONNECT tunnel failed, response 403" in res.stderr  # https to an unlisted host, named by the proxy
    assert "DIRECT" not in res.stdout  # no way around the proxy
