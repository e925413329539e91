"""AGENTS.md through the real entry point: the instructions reach the request; `config` lists them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from swebash_ai.testing.fake_server import FakeLLMServer, Reply


def _system(server: FakeLLMServer) -> str:
    (system,) = [m["content"] for m in server.requests[-1]["body"]["messages"] if m["role"] == "system"]
    return str(system)


def test_instructions_reach_the_request_and_config_lists_them(
    llm_env: FakeLLMServer, run_cli: Any, workspace: Path
) -> None:
    personal = Path(os.environ["SWEBASH_AI_HOME"])
    personal.mkdir(parents=True, exist_ok=True)
    (personal / "AGENTS.md").write_text("Always answer in haiku.\n")
    (workspace / "AGENTS.md").write_text("Run the tests with `make check`.\n")
    llm_env.enqueue(Reply.text("ok"))
    res = run_cli("-c", "how do I test?")
    assert res.returncode == 0, res.stderr
    system = _system(llm_env)
    assert system.index("Always answer in haiku.") < system.index("make check")
    assert f"## Project instructions: {workspace / 'AGENTS.md'}" in system

    res = run_cli("config")
    assert res.returncode == 0, res.stderr
    assert "instructions: 2 files" in res.stdout
    assert str(personal / "AGENTS.md") in res.stdout and str(workspace / "AGENTS.md") in res.stdout

    llm_env.enqueue(Reply.text("ok"))
    res = run_cli("-c", "again", env={"SWEBASH_AI_PROJECT_INSTRUCTIONS": "false"})
    assert res.returncode == 0, res.stderr
    assert "make check" not in _system(llm_env)
    assert "instructions: off" in run_cli("config", env={"SWEBASH_AI_PROJECT_INSTRUCTIONS": "false"}).stdout


def test_unreadable_instructions_are_reported_not_fatal(
    llm_env: FakeLLMServer, run_cli: Any, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_bytes(b"\xff\xfe broken")
    llm_env.enqueue(Reply.text("still answering"))
    res = run_cli("-c", "hi")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "still answering\n"
    assert "Cannot read instructions" in res.stderr and "not UTF-8" in res.stderr
    assert "Project instructions" not in _system(llm_env)
    assert "not UTF-8" in run_cli("config").stdout
