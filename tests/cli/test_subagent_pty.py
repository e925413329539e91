"""A helper agent's questions in a one-shot run on a real terminal (pexpect): they come through the same prompt,
name the agent, and are answered in turn (the run never waits on a question it did not print)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

from ._helpers import needs_exec

pexpect = pytest.importorskip("pexpect")

TASK = {"description": "clean up", "prompt": "delete canary.txt, then ask which database"}


@needs_exec
def test_a_helpers_questions_reach_the_terminal_naming_it(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                          workspace: Path) -> None:
    canary = workspace / "canary.txt"
    canary.write_text("x\n")
    llm_env.enqueue(
        Reply.tool_calls([("task", TASK)]),  # the parent
        Reply.tool_calls([("run_command", {"command": "rm canary.txt"})]),  # the helper
        Reply.tool_calls([("ask_user", {"question": "Which database?", "options": ["sqlite", "postgres"]})]),
        Reply.text("kept the canary; the user wants postgres"),  # the helper's answer
        Reply.text("All **done**."),  # the parent's
    )
    env = {**cli_env, "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1", "COLUMNS": "100", "LINES": "30"}
    child = pexpect.spawn(sys.executable, ["-m", "swebash_ai", "-c", "tidy up"], env=env, cwd=str(workspace),
                          encoding="utf-8", timeout=60, dimensions=(30, 100))
    try:
        child.expect(r"\[general agent\] \$ rm canary.txt")
        child.expect(r"Allow\? \[y/o/a/N/d\]")
        child.sendline("n")
        child.expect(r"\[general agent\] Which database\?")
        child.expect(r"Answer \[1-2")
        child.sendline("2")
        child.expect("All")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert canary.exists()
    helper = [r["body"]["messages"] for r in llm_env.requests if "general agent" in r["body"]["messages"][0]["content"]]
    results = [m["content"] for m in helper[-1] if m["role"] == "tool"]
    assert results[0].startswith("Denied: The user denied") and results[1].startswith("The user chose option 2")
