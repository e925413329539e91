"""MCP stdio servers run contained, like every command: a daemon a server leaves behind (double fork, a
session of its own) ends with the session, and with the server when it crashes. Checked by pid and by a
sleep duration no other process uses (tests/mcptools/_support.py); the one-shot killed by SIGKILL is in
tests/cli/test_mcp_oneshot.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from swebash_ai.testing.fake_server import FakeLLMServer
from swebash_ai.tools import process as process_mod
from tests.mcptools._support import alive, left_running, server_table, unique_duration, wait_recorded
from tests.mcptools.test_mcp_session import one_call, session_with

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(not process_mod.supervised(), reason="the subreaper supervisor is Linux-only"),
]


async def test_closing_the_session_stops_the_server_and_its_daemon(
    llm_env: FakeLLMServer, config_toml: Path, tmp_path: Path
) -> None:
    pidfile, duration = tmp_path / "pids", unique_duration()
    table = server_table("demo", "--daemon", str(pidfile), duration, auto_approve=["pid"])
    session, problems = await session_with(config_toml, table)
    try:
        assert problems == []
        server, daemon = await asyncio.to_thread(wait_recorded, pidfile, 2)
        assert alive(server) and alive(daemon)
        done = await one_call(session, llm_env, "mcp__demo__pid", {})
        assert int(str(done.result.content)) == server  # the server works as before, from within its supervisor
    finally:
        await session.aclose()
    assert await asyncio.to_thread(left_running, pidfile, duration) == []


async def test_a_server_that_crashes_mid_call_takes_its_daemon_along_and_the_call_says_so(
    llm_env: FakeLLMServer, config_toml: Path, tmp_path: Path
) -> None:
    pidfile, duration = tmp_path / "pids", unique_duration()
    table = server_table("demo", "--daemon", str(pidfile), duration, auto_approve=["crash", "echo"])
    session, _ = await session_with(config_toml, table)
    try:
        await asyncio.to_thread(wait_recorded, pidfile, 2)
        done = await one_call(session, llm_env, "mcp__demo__crash", {})
        assert done.result.status == "error"
        assert "MCP server demo stopped during the call to crash" in str(done.result.content)
        assert done.result.duration < 10
        # The server's exit ends its supervisor's run: the daemon is stopped before the session closes.
        assert await asyncio.to_thread(left_running, pidfile, duration) == []
        later = await one_call(session, llm_env, "mcp__demo__echo", {"text": "x"})
        assert "not running" in str(later.result.content)
    finally:
        await session.aclose()


@pytest.mark.parametrize(("command", "said"), [
    ("no-such-mcp-server-x", "cannot run the command: [Errno 2] No such file or directory: 'no-such-mcp-server-x'"),
    ("/nonexistent/mcp-server",
     "cannot run the command: [Errno 2] No such file or directory: '/nonexistent/mcp-server'"),
    ("{tmp}/not-a-program", "[Errno 13] Permission denied: '{tmp}/not-a-program'"),
])
async def test_a_server_that_cannot_run_fails_with_the_reason_not_a_closed_connection(
    config_toml: Path, tmp_path: Path, command: str, said: str
) -> None:
    (tmp_path / "not-a-program").write_text("data\n")  # no execute bit
    command, said = command.format(tmp=tmp_path), said.format(tmp=tmp_path)
    session, problems = await session_with(config_toml, f'[mcp_servers.gone]\ncommand = "{command}"\n')
    try:
        assert problems == [f"MCP server gone: failed: {said} (stdio: {command})"]
    finally:
        await session.aclose()
