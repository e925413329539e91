"""``swebash-ai -c`` when a turn stops at a budget or a loop: what stopped it, what it spent as it ran, and how
to go on, on stderr and in ``--json``; through the real entry point against the scripted server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from swebash_ai.testing.fake_server import FakeLLMServer, Reply


def test_a_loop_is_named_with_how_to_go_on(llm_env: FakeLLMServer, run_cli: Any, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("the same\n")
    llm_env.responder = lambda body: Reply.tool_calls([("read_file", {"path": "notes.txt"})])
    res = run_cli("-c", "read it", env={"SWEBASH_AI_LOOP_REPEATS": "4"})
    assert res.returncode == 0, res.stderr
    assert len(llm_env.requests) == 4
    assert 'Stopped: read_file {"path": "notes.txt"} was called 4 times in a row with the same result' in res.stderr
    assert "tell the model what to do differently: swebash-ai --resume -c '...'" in res.stderr
    assert "SWEBASH_AI_LOOP_REPEATS (now 4; 0 turns it off)" in res.stderr


def test_the_budget_is_shown_as_the_turn_runs(llm_env: FakeLLMServer, run_cli: Any, workspace: Path) -> None:
    count = iter(range(1, 100))

    def respond(body: dict[str, Any]) -> Reply:
        i = next(count)
        return Reply.tool_calls([("exists", {"path": f"f{i}"})], usage=(1000, 50)) if i <= 25 else Reply.text("ok")

    llm_env.responder = respond
    res = run_cli("-c", "look", env={"SWEBASH_AI_MAX_TURN_TOKENS": "1000000"})
    assert res.returncode == 0, res.stderr
    lines = [line for line in res.stderr.splitlines() if " tool calls · " in line]
    assert lines == ["swebash-ai: step 10 of 300 · 10 tool calls · 10.5k of 1.00M tokens",
                     "swebash-ai: step 20 of 300 · 20 tool calls · 21.0k of 1.00M tokens"]


def test_json_has_budget_events_and_the_detail(llm_env: FakeLLMServer, run_cli: Any, workspace: Path) -> None:
    count = iter(range(1, 100))
    llm_env.responder = lambda body: Reply.tool_calls([("exists", {"path": f"f{next(count)}"})], usage=(800, 40))
    res = run_cli("-c", "look", "--json", env={"SWEBASH_AI_MAX_TURN_TOKENS": "2000"})
    assert res.returncode == 0, res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]
    budgets = [e for e in events if e["type"] == "budget"]
    assert [(b["requests"], b["tokens"], b["max_tokens"]) for b in budgets] == [(1, 840, 2000), (2, 1680, 2000),
                                                                             (3, 2520, 2000)]
    final = next(e for e in events if e["type"] == "final")
    assert final["reason"] == "max_turn_tokens"
    assert final["detail"] == ("the turn used 2.5k tokens, its budget (max_turn_tokens, SWEBASH_AI_MAX_TURN_TOKENS "
                               "= 2000)")
    assert any(e["type"] == "notice" and "swebash-ai --resume -c 'go on'" in e["text"] for e in events)
