"""The host-allowlist proxy: the one way out of a sandbox without a network, for the hosts the user listed.

Contract:
    :class:`Proxy` listens on a unix socket in a private folder (a session-owned service: started when a
    confined command first needs it, stopped with the session or at exit). It speaks HTTP proxy: ``CONNECT
    host:port`` (HTTPS, any TLS) and absolute-form plain HTTP (``GET http://host/path``). It names the host of
    each connection, lets through those :meth:`Proxy.allows` (``sandbox_allow_hosts``: ``pypi.org`` for ports
    80 and 443, ``*.pythonhosted.org`` for its subdomains, ``host:8080`` for one port; else ``ask(host, port)``,
    none by default), answers the rest ``403`` naming the host and the setting, and resolves names itself, so
    DNS never happens inside. Every decision is kept in :attr:`Proxy.seen`.

Inside the sandbox (bubblewrap, own network namespace) ``relay.py`` listens on ``127.0.0.1:3128`` and carries
each connection to the socket, which is bound into the sandbox; ``HTTPS_PROXY``/``HTTP_PROXY`` point there.
Threads, not the caller's event loop: the runner, background commands and ``swebash-ai sandbox`` share it.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import os
import shutil
import socket
import socketserver
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from swebash_ai.sandbox.relay import pipe

__all__ = ["RELAY_PORT", "Proxy", "shared"]

RELAY_PORT = 3128
"""The port the relay listens on inside the sandbox's own network namespace (nothing else is there)."""
_HEAD_MAX = 16_384
_CONNECT_TIMEOUT = 10.0
_IDLE_TIMEOUT = 300.0

AskFn = Callable[[str, int], bool]


def _split_host_port(target: str, default: int) -> tuple[str, int]:
    host, sep, port = target.rpartition(":")
    if not sep or "]" in port:  # no port, or an IPv6 literal without one
        host, port = target, str(default)
    return host.strip("[]").lower().rstrip("."), int(port)


def splice(a: socket.socket, b: socket.socket) -> None:
    """Copy both ways until both sides have ended (one direction in a thread of its own)."""
    other = threading.Thread(target=pipe, args=(b, a), daemon=True)
    other.start()
    pipe(a, b)
    other.join(_IDLE_TIMEOUT)


class Proxy:
    """One proxy on one unix socket (see the module docstring); ``start()`` then ``stop()``."""

    def __init__(self, allow_hosts: Sequence[str], ask: AskFn | None = None) -> None:
        self.allow = tuple(h.strip().lower() for h in allow_hosts if h.strip())
        self.ask = ask
        self.pending: list[concurrent.futures.Future[Any]] = []
        """Questions put to a person through ``ask`` (cancelled by :meth:`stop`: the command has ended)."""
        self.seen: list[tuple[str, int, bool]] = []
        # 0700: ours alone. In /tmp, the sandbox's own writable tmpfs, where bwrap can make the bind's mount
        # point (TMPDIR may be in a folder the sandbox hides, where it could not).
        tmp = "/tmp" if os.access("/tmp", os.W_OK) else None  # noqa: S108
        self._dir = Path(tempfile.mkdtemp(prefix="swebash-ai-proxy-", dir=tmp))
        self.path = self._dir / "proxy.sock"
        self._server: socketserver.ThreadingUnixStreamServer | None = None

    def allows(self, host: str, port: int) -> bool:
        """Whether a connection to ``host:port`` may go out (the allow list, else ``ask``, else no)."""
        for entry in self.allow:
            name, _, only = entry.partition(":")
            if (int(only) != port if only.isdigit() else only or port not in (80, 443)):
                continue
            if host == name or (name.startswith("*.") and host.endswith(name[1:])):
                return True
        return bool(self.ask is not None and self.ask(host, port))

    def start(self) -> Proxy:
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                proxy._serve(self.request)

        server = socketserver.ThreadingUnixStreamServer(str(self.path), Handler)
        server.daemon_threads = True
        self._server = server
        # A short poll: a command's own proxy is stopped when the command ends, and stop() waits for the loop.
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="swebash-ai-proxy",
                         daemon=True).start()
        return self

    def stop(self) -> None:
        for question in self.pending:
            question.cancel()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        shutil.rmtree(self._dir, ignore_errors=True)

    def _serve(self, client: socket.socket) -> None:
        client.settimeout(_IDLE_TIMEOUT)
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = client.recv(4096)
            if not chunk:
                return
            head += chunk
            if len(head) > _HEAD_MAX:
                client.sendall(b"HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n")
                return
        request, _, rest = head.partition(b"\r\n\r\n")
        line, _, headers = request.partition(b"\r\n")
        try:
            method, target, version = line.decode("latin-1").split(" ")
            if method == "CONNECT":
                host, port = _split_host_port(target, 443)
            else:
                url = urlsplit(target)
                if url.scheme != "http" or not url.hostname:
                    raise ValueError(target)
                host, port = url.hostname.lower().rstrip("."), url.port or 80
        except ValueError:
            client.sendall(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
            return
        allowed = self.allows(host, port)
        self.seen.append((host, port, allowed))
        if not allowed:
            body = (f"swebash-ai sandbox: {host}:{port} is not in sandbox_allow_hosts; the sandbox has no other "
                    "network\n").encode()
            client.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                           b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            return
        try:
            upstream = socket.create_connection((host, port), timeout=_CONNECT_TIMEOUT)
        except OSError as exc:
            client.sendall(f"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n{host}:{port}: {exc}\n".encode())
            return
        with upstream:
            upstream.settimeout(_IDLE_TIMEOUT)
            if method == "CONNECT":
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                if rest:
                    upstream.sendall(rest)
            else:  # origin-form to the server; one request per connection (the next may name another host)
                url = urlsplit(target)
                path = (url.path or "/") + (f"?{url.query}" if url.query else "")
                kept = [h for h in headers.split(b"\r\n") if h and not h.lower().startswith(
                    (b"proxy-connection:", b"connection:", b"proxy-authorization:"))]
                upstream.sendall(f"{method} {path} {version}\r\n".encode("latin-1") + b"\r\n".join(
                    [*kept, b"Connection: close"]) + b"\r\n\r\n" + rest)
            splice(client, upstream)


_shared: dict[tuple[str, ...], Proxy] = {}
_shared_lock = threading.Lock()


def shared(allow_hosts: Sequence[str]) -> Proxy:
    """The process's running proxy for this allow list (started on first use, stopped at exit)."""
    key = tuple(sorted(h.strip().lower() for h in allow_hosts if h.strip()))
    with _shared_lock:
        proxy = _shared.get(key)
        if proxy is None:
            proxy = _shared[key] = Proxy(key).start()
        return proxy


@atexit.register
def _stop_shared() -> None:
    for proxy in list(_shared.values()):
        proxy.stop()
    _shared.clear()
