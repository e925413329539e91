"""update_plan and ask_user in one-shot (``-c``), as a subprocess against the loopback fake server: the plan
on stderr and as a ``--json`` event, and a question nobody can answer refused at once, not waited on."""

from __future__ import annotations

import json
import time
from typing import Any

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

STEPS = [{"step": "Read the code", "status": "completed"}, {"step": "Fix it", "status": "in_progress"}]


def test_json_emits_the_plan_as_an_event(llm_env: FakeLLMServer, run_cli: Any) -> None:
    llm_env.enqueue(Reply.tool_calls([("update_plan", {"plan": STEPS, "explanation": "one left"})]),
                    Reply.text("Done."))
    res = run_cli("-c", "fix it", "--json")
    assert res.returncode == 0, res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]
    plans = [e for e in events if e["type"] == "plan"]
    assert plans == [{"type": "plan", "steps": STEPS, "explanation": "one left"}]
    kinds = [e["type"] for e in events]
    assert kinds.index("tool_result") < kinds.index("plan") < kinds.index("final")


def test_plain_output_prints_the_plan_on_stderr_only(llm_env: FakeLLMServer, run_cli: Any) -> None:
    llm_env.enqueue(Reply.tool_calls([("update_plan", {"plan": STEPS})]), Reply.text("Done."))
    res = run_cli("-c", "fix it")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "Done.\n"
    assert "plan (1/2 done)\n  [x] Read the code\n  [>] Fix it\n" in res.stderr


def test_without_a_terminal_the_user_sees_a_short_line_not_the_models_instructions(
    llm_env: FakeLLMServer, run_cli: Any
) -> None:
    llm_env.enqueue(Reply.tool_calls([("ask_user", {"question": "Which one?", "options": ["a", "b"]})]),
                    Reply.text("I picked a."))
    res = run_cli("-c", "choose", timeout=30)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "I picked a.\n"
    line = "✗ ask: Which one?: no one to answer (no terminal to ask on); the model was told to go on"
    assert res.stderr.splitlines() == [line]
    assert "Do not ask again" not in res.stderr


def test_without_a_terminal_a_question_is_refused_at_once(llm_env: FakeLLMServer, run_cli: Any) -> None:
    llm_env.enqueue(Reply.tool_calls([("ask_user", {"question": "Which one?", "options": ["a", "b"]})]),
                    Reply.text("I picked a."))
    start = time.monotonic()
    res = run_cli("-c", "choose", "--json", timeout=30)
    elapsed = time.monotonic() - start
    assert res.returncode == 0, res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]
    (result,) = [e for e in events if e["type"] == "tool_result"]
    assert result["name"] == "ask_user" and result["status"] == "denied"
    assert result["content"].startswith("Nobody can answer questions here (no terminal to ask on)")
    assert "proceed" in result["content"]
    assert result["duration"] < 5  # answered at once: nobody is waited for (a wait lasts until the run's timeout)
    assert events[-1]["type"] == "final" and events[-1]["text"] == "I picked a."
    assert elapsed < 25  # the interpreter's start-up on a loaded machine, not the 30 s the run may last
