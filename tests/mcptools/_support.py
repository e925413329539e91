"""Helpers for MCP tests (also used by tests/cli): ``[mcp_servers]`` tables running demo_server.py, a real SDK
server; whether a process is alive."""

from __future__ import annotations

import os
import sys
from pathlib import Path

DEMO = Path(__file__).with_name("demo_server.py")


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
