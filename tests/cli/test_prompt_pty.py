"""The interactive confirmation prompt, in a real pseudo-terminal (pexpect): the answer decides, default is no."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

from ._helpers import needs_exec

pexpect = pytest.importorskip("pexpect")


@needs_exec
@pytest.mark.parametrize(("answer", "survives", "code"), [
    ("n", True, 3),  # the user says no: nothing runs, exit 3 (a needed action was denied)
    ("y", False, 0),  # the user says yes: it runs (in the sandbox, where the workspace is writable)
    ("o", False, 0),  # yes, outside the sandbox: it runs with the user's rights
    ("ctrl-c", True, 3),  # Ctrl-C at the question denies (it does not crash, and it never allows)
])
def test_prompt_answer_decides(answer: str, survives: bool, code: int, llm_env: FakeLLMServer,
                               cli_env: dict[str, str], workspace: Path) -> None:
    canary = workspace / "canary.txt"
    canary.write_text("x\n")
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "rm canary.txt"})]), Reply.text("All **done**."))
    env = {**cli_env, "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1", "COLUMNS": "100", "LINES": "30"}
    child = pexpect.spawn(sys.executable, ["-m", "swebash_ai", "-c", "delete canary.txt"], env=env,
                          cwd=str(workspace), encoding="utf-8", timeout=60, dimensions=(30, 100))
    try:
        child.expect("run_command needs your approval")
        child.expect("rm canary.txt")  # the full command is shown
        child.expect("why: ")  # with the policy's reasons
        child.expect("y runs it in the sandbox: ")  # the one sentence on where it runs, and what o does
        child.expect("o runs it outside the sandbox, with all of your rights")
        child.expect(r"Allow\? \[y/o/a/N/d\]")  # a yes keeps the command in the sandbox; o runs it outside
        if answer == "ctrl-c":
            child.sendcontrol("c")
        else:
            child.sendline(answer)
        child.expect("All")  # the answer, rendered as Markdown on a terminal
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == code, child.before
    assert canary.exists() is survives


@pytest.mark.parametrize(("typed", "result"), [
    ("2", "The user chose option 2: postgres"),
    ("mysql please", "The user answered: mysql please"),
    ("", "The user dismissed the question without answering."),
])
def test_a_question_is_asked_on_the_terminal(typed: str, result: str, llm_env: FakeLLMServer,
                                             cli_env: dict[str, str], workspace: Path) -> None:
    question = {"question": "Which database?", "options": ["sqlite", "postgres"]}
    llm_env.enqueue(Reply.tool_calls([("ask_user", question)]), Reply.text("Noted."))
    env = {**cli_env, "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1", "COLUMNS": "100", "LINES": "30"}
    child = pexpect.spawn(sys.executable, ["-m", "swebash_ai", "-c", "set up a database"], env=env,
                          cwd=str(workspace), encoding="utf-8", timeout=60, dimensions=(30, 100))
    try:
        child.expect("The assistant asks: Which database\\?")
        child.expect("1. sqlite")
        child.expect("2. postgres")
        child.expect(r"Answer \[1-2 or type an answer; Enter: no answer\]")
        child.sendline(typed)
        child.expect("Noted")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0, child.before
    sent = [m for m in llm_env.requests[-1]["body"]["messages"] if m["role"] == "tool"][-1]["content"]
    assert str(sent).startswith(result)
