"""Helpers for MCP tests (also used by tests/cli): ``[mcp_servers]`` tables running demo_server.py, a real SDK
server; whether a process is alive, and what a ``--daemon`` server left running."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import sys
import time
from pathlib import Path

DEMO = Path(__file__).with_name("demo_server.py")
_ids = itertools.count()


def server_table(name: str, *extra_args: str, **keys: object) -> str:
    args = ", ".join(f'"{a}"' for a in (str(DEMO), *extra_args))
    lines = [f"[mcp_servers.{name}]", f'command = "{sys.executable}"', f"args = [{args}]"]
    for key, value in keys.items():
        if isinstance(value, list):
            lines.append(f"{key} = [{', '.join(repr(v).replace(chr(39), chr(34)) for v in value)}]")
        elif isinstance(value, bool):
            lines.append(f"{key} = {'true' if value else 'false'}")
        else:
            lines.append(f"{key} = {value!r}".replace("'", '"'))
    return "\n".join(lines) + "\n"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purpose
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def unique_duration() -> str:
    """A sleep duration no other process on the machine uses, so a stray is found by its command line."""
    return f"{300 + next(_ids)}.{os.getpid()}{int(time.time() * 1000) % 100_000:05d}"


def recorded(pidfile: Path) -> list[int]:
    return [int(x) for x in pidfile.read_text().split()] if pidfile.exists() else []


def wait_recorded(pidfile: Path, n: int, limit: float = 20.0) -> list[int]:
    """The pids in ``pidfile`` once it holds ``n`` (the server's and its daemon's)."""
    deadline = time.monotonic() + limit
    while len(recorded(pidfile)) < n and time.monotonic() < deadline:
        time.sleep(0.02)
    return recorded(pidfile)


def left_running(pidfile: Path, duration: str, limit: float = 10.0) -> list[int]:
    """What is still running of a ``--daemon`` server after ``limit`` seconds: recorded pids, and any process
    whose command line carries ``duration``. Strays are killed, so a failure leaves nothing for other tests."""
    import psutil

    deadline = time.monotonic() + limit
    while True:
        strays = [p for p in psutil.process_iter(["cmdline", "status"])
                  if duration in (p.info["cmdline"] or []) and p.info["status"] != psutil.STATUS_ZOMBIE]
        left = sorted({*(p for p in recorded(pidfile) if alive(p)), *(p.pid for p in strays)})
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return left
