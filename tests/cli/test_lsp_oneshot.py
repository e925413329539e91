"""Language servers in one-shot (``-c``), as a subprocess against the loopback fake LLM server and the in-repo
fake language server: ``--json`` carries an edit's diagnostics, the model reads them in the tool result, and
the end of the session, Ctrl-C and a killed swebash-ai leave no server process behind (checked by pid)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

from ._helpers import command

SLOW = 30.0


@pytest.fixture(autouse=True)
def _servers_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Diagnostics on; the server unconfined so that it can write its pid file into the workspace (the sandbox,
    which makes the workspace read-only for it, is tests/lsp/test_edit_tools.py's subject)."""
    monkeypatch.setenv("SWEBASH_AI_LSP_DIAGNOSTICS", "edit")
    monkeypatch.setenv("SWEBASH_AI_EXEC_SANDBOX", "none")


def _configure(isolated_env: Path, workspace: Path, **script: Any) -> Path:
    pid_file = workspace / "server.pids"
    script_file = workspace / "script.json"
    script_file.write_text(json.dumps({"pid_file": str(pid_file), "child": True, **script}))
    config = isolated_env / ".swebash-ai" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    command_line = json.dumps([sys.executable, "-m", "swebash_ai.testing.fake_lsp", str(script_file)])
    config.write_text(f'[lsp.fake]\ncommand = {command_line}\nextensions = [".fk"]\nlanguages = ["fake"]\n')
    return pid_file


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _pids(pid_file: Path) -> list[int]:
    deadline = time.monotonic() + SLOW
    while time.monotonic() < deadline:
        text = pid_file.read_text() if pid_file.exists() else ""
        if text.count("\n") >= 2:
            return [int(x) for x in text.split()]
        time.sleep(0.05)
    raise AssertionError("the language server never started")


def _gone(pids: list[int]) -> bool:
    deadline = time.monotonic() + SLOW
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not any(alive(p) for p in pids)


def test_json_carries_the_diagnostics_and_the_model_reads_them(
        llm_env: FakeLLMServer, run_cli: Any, isolated_env: Path, workspace: Path) -> None:
    pid_file = _configure(isolated_env, workspace)
    llm_env.enqueue(
        Reply.tool_calls([("write_file", {"path": "m.fk", "content": "ok\nx ERROR: name 'x' is not defined\n"})]),
        Reply.text("Written."),
    )
    res = run_cli("-c", "write it", "--yes", "--json", timeout=120)
    assert res.returncode == 0, res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]
    (result,) = [e for e in events if e["type"] == "tool_result"]
    diag = result["diagnostics"]
    assert diag["status"] == "ok" and diag["server"] == "fake" and diag["errors"] == 1
    assert diag["items"][0] == {"path": "m.fk", "line": 2, "col": 3, "severity": "error", "code": "fake-error",
                                "source": "fake", "message": "name 'x' is not defined"}
    told = [m["content"] for m in llm_env.requests[-1]["body"]["messages"] if m.get("role") == "tool"]
    assert "m.fk:2:3: error[fake-error] (fake) name 'x' is not defined" in told[0]
    assert _gone(_pids(pid_file))  # the one-shot ended: its server and the server's child are gone


@pytest.mark.parametrize("how", ["ctrl-c", "kill"])
def test_ctrl_c_or_a_killed_one_shot_leaves_no_server(
        how: str, cli_env: dict[str, str], llm_env: FakeLLMServer, isolated_env: Path, workspace: Path) -> None:
    pid_file = _configure(isolated_env, workspace, never=True)  # the edit waits for diagnostics that never come
    llm_env.enqueue(Reply.tool_calls([("write_file", {"path": "m.fk", "content": "x\n"})]), Reply.text("never"))
    env = {**cli_env, "SWEBASH_AI_LSP_WAIT": "60"}
    proc = subprocess.Popen(command("-c", "write it", "--yes", "--json"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=workspace, env=env, start_new_session=True)
    try:
        pids = _pids(pid_file)
        assert all(alive(p) for p in pids)
        time.sleep(0.3)  # the edit is waiting for the server
        if how == "ctrl-c":
            proc.send_signal(signal.SIGINT)
            proc.communicate(timeout=SLOW)
            assert proc.returncode == 130
        else:  # SIGKILL: no finally runs; the supervisor sees its control pipe close and stops the tree
            proc.kill()
            proc.communicate(timeout=SLOW)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert _gone(pids), f"a language server process outlived the one-shot ({how})"


def test_turn_mode_reports_at_the_end_of_the_turn_not_in_the_edit(
        llm_env: FakeLLMServer, run_cli: Any, isolated_env: Path, workspace: Path) -> None:
    _configure(isolated_env, workspace)
    llm_env.enqueue(
        Reply.tool_calls([("write_file", {"path": "m.fk", "content": "ERROR: half done\n"})]),
        Reply.tool_calls([("write_file", {"path": "ok.fk", "content": "fine\n"})]),
        Reply.text("Done."),
    )
    res = run_cli("-c", "write it", "--yes", "--json", env={"SWEBASH_AI_LSP_DIAGNOSTICS": "turn"}, timeout=120)
    assert res.returncode == 0, res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]
    results = [e for e in events if e["type"] == "tool_result"]
    assert all("Diagnostics" not in r["content"] and r["diagnostics"]["status"] == "pending" for r in results)
    notices = [e["text"] for e in events if e["type"] == "notice" and "Diagnostics" in e["text"]]
    assert len(notices) == 1
    assert "m.fk:1:1: error[fake-error] (fake) half done" in notices[0] and "ok.fk" not in notices[0]
