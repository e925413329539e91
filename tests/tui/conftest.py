"""Fixtures for the TUI tests: an app wired to the loopback fake LLM server and small test tools.

The tools here stand in for the real exec tool so the tests are fast and deterministic: ``run_command``
understands ``touch FILE`` (the canary), ``echo TEXT``, ``sleep SECONDS`` (prints a line every 0.05 s)
and asks for approval for anything containing ``rm`` or ``danger``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from swebash_ai.config.settings import load_settings
from swebash_ai.frontends.tui.app import SwebashApp
from swebash_ai.safety.verdict import Verdict
from swebash_ai.tools.registry import Tool, ToolContext, ToolResult, tool


def _command_policy(ctx: ToolContext, args: BaseModel) -> Verdict:
    command = str(getattr(args, "command", ""))
    if "rm " in command or "danger" in command:
        return Verdict.ask("deletes files", rule="test.dangerous")
    return Verdict.allow(rule="test.safe")


def _describe(args: BaseModel) -> str:
    return f"$ {getattr(args, 'command', '')}"


@tool("exec", policy=_command_policy, describe=_describe)
async def run_command(ctx: ToolContext, command: str) -> ToolResult:
    """Run a shell command (test double).

    Args:
        command: The command line.
    """
    word, _, rest = command.partition(" ")
    if word in ("touch", "danger-touch") or command.startswith("rm "):
        target = rest.split()[-1] if rest else "canary"
        (ctx.cwd / target).write_text("ran\n")
        return ToolResult.success(f"created {target}", exit_code=0)
    if word == "sleep":
        end = time.monotonic() + float(rest or 1)
        n = 0
        while time.monotonic() < end:
            n += 1
            ctx.on_output(f"tick {n}\n")
            await asyncio.sleep(0.05)
        return ToolResult.success("slept", exit_code=0)
    if word == "echo":
        ctx.on_output(rest + "\n")
        return ToolResult.success(rest + "\n", exit_code=0)
    if word == "false":
        return ToolResult(False, "", "error", exit_code=1)
    return ToolResult.error(f"unknown test command {word!r}", exit_code=127)


@tool("fs")
async def read_file(ctx: ToolContext, path: str) -> str:
    """Read a text file (test double).

    Args:
        path: File to read.
    """
    return (ctx.cwd / path).read_text()


TEST_TOOLS: list[Tool] = [run_command, read_file]


AppFactory = Callable[..., SwebashApp]


@pytest.fixture
def make_app(workspace: Path) -> AppFactory:
    """Build the app with fresh settings from the environment (set ``llm_env`` first for a provider)."""

    def build(**kw: Any) -> SwebashApp:
        kw.setdefault("cwd", workspace)
        kw.setdefault("tools", TEST_TOOLS)
        kw.setdefault("probe_ollama", False)
        kw.setdefault("setup_on_start", False)  # tests/tui/test_setup_screen.py covers the setup screen
        return SwebashApp(load_settings(), **kw)

    return build


_SSL_CONTEXTS: dict[tuple[object, ...], Any] = {}


@pytest.fixture(autouse=True)
def _reuse_ssl_context(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every app builds a fresh openai client, and each loads the CA bundle (~0.3 s of CPU here) although
    the tests only ever talk plain HTTP to 127.0.0.1; share one context so the TUI tests stay fast."""
    try:
        import httpx._transports.default as transport
    except ImportError:  # pragma: no cover - httpx changed its layout; tests are just slower
        return
    real = transport.create_ssl_context

    def cached(verify: Any = True, cert: Any = None, trust_env: bool = True) -> Any:
        if verify is not True or cert is not None:
            return real(verify=verify, cert=cert, trust_env=trust_env)
        key = (verify, trust_env)
        if key not in _SSL_CONTEXTS:
            _SSL_CONTEXTS[key] = real(verify=verify, cert=cert, trust_env=trust_env)
        return _SSL_CONTEXTS[key]

    monkeypatch.setattr(transport, "create_ssl_context", cached)
