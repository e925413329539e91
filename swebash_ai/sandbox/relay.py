"""Inside the sandbox: ``127.0.0.1:PORT`` carried to swebash-ai's proxy socket, then the command.

Contract:
    Run as ``python -I -S relay.py SOCKET PORT -- ARGV`` as the sandbox's first process (bubblewrap,
    ``--as-pid-1``: its own network namespace, where only loopback exists). It listens on ``127.0.0.1:PORT``,
    starts ARGV with ``HTTPS_PROXY``/``HTTP_PROXY`` (both cases) pointing there and ``NO_PROXY`` for loopback,
    carries each connection to the unix SOCKET (the proxy outside, ``proxy.py``), and exits with ARGV's
    status when it ends (ending the namespace and what ARGV left in it). Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading

_VARS = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")


def pipe(a: socket.socket, b: socket.socket) -> None:
    """Copy ``a`` to ``b`` until ``a`` ends; then tell ``b`` nothing more comes (the proxy outside uses it too)."""
    try:
        while data := a.recv(65_536):
            b.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            b.shutdown(socket.SHUT_WR)


def _carry(conn: socket.socket, path: str) -> None:
    try:
        out = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        out.connect(path)
    except OSError:
        conn.close()
        return
    back = threading.Thread(target=pipe, args=(out, conn), daemon=True)
    back.start()
    pipe(conn, out)
    back.join()
    conn.close()
    out.close()


def _accept(listener: socket.socket, path: str) -> None:
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_carry, args=(conn, path), daemon=True).start()


def main(args: list[str]) -> int:
    path, port, argv = args[0], int(args[1]), args[3:]
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    env = dict(os.environ)
    env.update(dict.fromkeys(_VARS, f"http://127.0.0.1:{port}"))
    env["NO_PROXY"] = env["no_proxy"] = "localhost,127.0.0.1,::1"
    pid = os.fork()
    if pid == 0:
        listener.close()
        try:
            os.execvpe(argv[0], argv, env)  # noqa: S606 - the command this relay exists to run
        except OSError as exc:
            os.write(2, f"swebash-ai sandbox: cannot start {argv[0]}: {exc}\n".encode())
        os._exit(127)
    threading.Thread(target=_accept, args=(listener, path), daemon=True).start()
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
