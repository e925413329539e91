"""MCP servers in a real one-shot run (``python -m swebash_ai -c``): denial without a terminal exits 3,
``--yes`` allows, Ctrl-C during an MCP call exits 130 and leaves no server process behind, and neither does
a SIGKILL (nor the daemon the server started)."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from swebash_ai.tools.process import supervised
from tests.mcptools._support import alive, left_running, server_table, unique_duration, wait_recorded

from ._helpers import command

pytestmark = pytest.mark.timeout(90)


def write_config(cli_env: dict[str, str], text: str) -> None:
    path = Path(cli_env["SWEBASH_AI_HOME"]) / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_an_mcp_call_without_a_terminal_is_denied_exit_3_and_yes_allows(
    llm_env: FakeLLMServer, cli_env: dict[str, str], run_cli: Any
) -> None:
    write_config(cli_env, server_table("demo"))
    llm_env.enqueue(Reply.tool_calls([("mcp__demo__echo", {"text": "hi"})]), Reply.text("could not"))
    res = run_cli("-c", "echo hi")
    assert res.returncode == 3, res.stderr
    assert "demo: echo" in res.stderr
    llm_env.enqueue(Reply.tool_calls([("mcp__demo__echo", {"text": "hi"})]), Reply.text("it said hi"))
    res = run_cli("--yes", "-c", "echo hi")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "it said hi\n"
    assert llm_env.requests[-1]["body"]["messages"][-1]["content"] == "hi"


def test_a_server_that_cannot_start_is_a_warning_not_a_failure(
    llm_env: FakeLLMServer, cli_env: dict[str, str], run_cli: Any
) -> None:
    write_config(cli_env, '[mcp_servers.gone]\ncommand = "/nonexistent/server"\n')
    llm_env.enqueue(Reply.text("fine"))
    res = run_cli("-c", "hi")
    assert res.returncode == 0 and res.stdout == "fine\n"
    assert "MCP server gone: failed" in res.stderr


def test_ctrl_c_during_an_mcp_call_exits_130_and_leaves_no_process(
    llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path
) -> None:
    write_config(cli_env, server_table("demo", auto_approve=["pid", "hang"]))
    llm_env.enqueue(
        Reply.tool_calls([("mcp__demo__pid", {})]),
        Reply.tool_calls([("mcp__demo__hang", {"seconds": 60})]),
        Reply.text("never"),
    )
    proc = subprocess.Popen(command("-c", "go"), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=workspace, env=cli_env, start_new_session=True)
    try:
        deadline = time.monotonic() + 40
        while len(llm_env.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.7)  # the hang call is under way
        pid = int(llm_env.requests[1]["body"]["messages"][-1]["content"])
        assert alive(pid)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(pid)
    audit = [json.loads(x) for x in (Path(cli_env["SWEBASH_AI_HOME"]) / "audit.jsonl").read_text().splitlines()]
    assert audit[-1]["tool"] == "mcp__demo__hang" and audit[-1]["outcome"] == "cancelled"


@pytest.mark.skipif(not supervised(), reason="the subreaper supervisor is Linux-only")
def test_a_killed_oneshot_leaves_neither_the_server_nor_the_daemon_it_started(
    llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    # SIGKILL: no clean-up of ours runs; the server's supervisor sees its control pipe close and sweeps.
    pidfile, duration = tmp_path / "pids", unique_duration()
    write_config(cli_env, server_table("demo", "--daemon", str(pidfile), duration, auto_approve=["hang"]))
    llm_env.enqueue(Reply.tool_calls([("mcp__demo__hang", {"seconds": 60})]), Reply.text("never"))
    proc = subprocess.Popen(command("-c", "go"), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=workspace, env=cli_env, start_new_session=True)
    try:
        server, daemon = wait_recorded(pidfile, 2, limit=40)
        deadline = time.monotonic() + 40
        while not llm_env.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # the hang call is under way
        assert alive(server) and alive(daemon) and proc.poll() is None
    finally:
        proc.kill()
        proc.wait()
    assert left_running(pidfile, duration) == []
