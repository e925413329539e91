"""Helpers of the language-server tests: the in-repo fake server (``swebash_ai/testing/fake_lsp.py``) as a table
entry, a contained launcher, and a check by pid that a process is gone."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil

from swebash_ai.lsp.client import Handle
from swebash_ai.lsp.servers import ServerSpec
from swebash_ai.lsp.service import LspService
from swebash_ai.tools.command_env import child_environment
from swebash_ai.tools.containment import MARKER_VAR
from swebash_ai.tools.process import start_contained


async def launch(argv: Sequence[str], root: Path) -> Handle:
    env = child_environment(os.environ)
    env[MARKER_VAR] = os.urandom(8).hex()
    return await start_contained(list(argv), cwd=root, env=env, stdin=True)


def fake_spec(folder: Path, name: str = "fake", **script: Any) -> ServerSpec:
    """A ``.fk`` server run by the fake, misbehaving as ``script`` says (see its module docstring)."""
    path = folder / f"{name}-script.json"
    path.write_text(json.dumps(script))
    return ServerSpec(name, ("fake",), (".fk",), (sys.executable, "-m", "swebash_ai.testing.fake_lsp", str(path)))


def fake_table(folder: Path, **script: Any) -> dict[str, dict[str, Any]]:
    """The same as an ``[lsp.fake]`` table (what a user's config file holds)."""
    spec = fake_spec(folder, **script)
    return {"fake": {"command": list(spec.command), "extensions": [".fk"], "languages": ["fake"]}}


def service(workspace: Path, *specs: ServerSpec, **kw: Any) -> LspService:
    kw.setdefault("wait", 5.0)
    return LspService(list(specs), workspace, launch, **kw)


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def gone_within(pids: Sequence[int], seconds: float = 5.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def pids_of(pid_file: Path, seconds: float = 10.0) -> list[int]:
    """The pids the fake wrote (its own, and its child's when it started one)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        text = pid_file.read_text() if pid_file.exists() else ""
        if text.count("\n") >= 2:  # written at once: "PID\nCHILD-PID-or-nothing\n"
            return [int(x) for x in text.split("\n") if x.strip()]
        time.sleep(0.02)
    raise AssertionError(f"{pid_file} was never written")
