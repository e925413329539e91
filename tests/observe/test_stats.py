"""``swebash-ai stats``: figures computed from stored data, checked against data whose answers are known."""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path
from typing import Any

from swebash_ai.agent.conversation import Conversation
from swebash_ai.observe.stats import Window, collect, parse_since, percentile, render
from swebash_ai.storage.locations import locations


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")


def _audit(session: str, tool: str, outcome: str, duration: float, decision: str = "allow",
           decided_by: str = "read-only", when: float | None = None) -> dict[str, Any]:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(when if when is not None else time.time()))
    return {"time": stamp, "session": session, "tool": tool, "decision": decision, "decided_by": decided_by,
            "outcome": outcome, "duration": duration}


def test_percentile_is_nearest_rank() -> None:
    assert percentile([], 50) is None
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([float(i) for i in range(1, 101)], 95) == 95.0
    assert percentile([5.0], 95) == 5.0


def test_parse_since_accepts_units_and_refuses_the_rest() -> None:
    assert parse_since("7d") == 7 * 86400
    assert parse_since("30m") == 1800
    assert parse_since(" 2w ") == 14 * 86400
    for bad in ("7", "d", "7y", "-1d", ""):
        try:
            parse_since(bad)
        except ValueError as exc:
            assert "30m, 24h, 7d" in str(exc)
        else:
            raise AssertionError(f"{bad!r} was accepted")


def test_tool_decision_turn_and_token_figures(isolated_env: Path) -> None:
    where = locations()
    old = time.time() - 10 * 86400
    _write(where.audit_log, [
        _audit("s1", "read_file", "ok", 0.010),
        _audit("s1", "read_file", "ok", 0.030),
        _audit("s1", "read_file", "error", 0.020),
        _audit("s1", "run_command", "ok", 1.5, "ask", "user"),
        _audit("s1", "run_command", "denied", 0.0, "ask", "user"),
        _audit("s1", "run_command", "timeout", 30.0, "ask", "user-session"),
        _audit("s1", "run_command", "ok", 0.2, "ask", "session"),
        _audit("s2", "run_command", "denied", 0.0, "ask", "non-interactive"),
        _audit("s2", "read_file", "denied", 0.0, "deny", "protected-path"),
        _audit("s2", "mcp__tracker__open_issue", "ok", 0.4, "ask", "--yes"),
        _audit("s0", "list_dir", "ok", 0.001, when=old),
    ])
    _write(where.turns_log, [
        {"time": time.time(), "session": "s1", "model": "openai/m", "reason": "answered", "rounds": 2,
         "requests": [[1.0, 2, True, 0.2], [2.0, 1, True, 0.4], [3.0, 0, True, 0.1]], "retries": 1,
         "tool_calls": 3, "prompt_tokens": 1000, "completion_tokens": 100, "cached_tokens": 600, "cost": 0.01},
        {"time": time.time(), "session": "s2", "model": "openai/m", "reason": "answered", "rounds": 0,
         "requests": [[0.5, 0, True, 0.1]], "retries": 0, "tool_calls": 0, "prompt_tokens": 200,
         "completion_tokens": 20, "cost": None},
        {"time": time.time(), "session": "s2", "model": "openai/m", "reason": "failed", "rounds": 0,
         "requests": [[4.0, 0, False, None]], "retries": 2, "tool_calls": 0, "prompt_tokens": 0,
         "completion_tokens": 0, "cost": None},
    ])
    # A session saved before turns were recorded: two turns, one with two tool rounds.
    conv = Conversation(id="s0")
    conv.add_user("list")
    conv.messages.append({"role": "assistant", "content": "", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "list_dir", "arguments": "{}"}}]})
    conv.add_tool_result("a", "list_dir", "x")
    conv.messages.append({"role": "assistant", "content": "", "tool_calls": [
        {"id": "b", "type": "function", "function": {"name": "list_dir", "arguments": "{}"}}]})
    conv.add_tool_result("b", "list_dir", "x")
    conv.add_assistant("done")
    conv.add_user("thanks")
    conv.add_assistant("welcome")
    conv.save(where.sessions_dir / "s0.jsonl")

    stats = collect(where)
    tools = stats["tools"]
    assert list(tools)[:2] == ["run_command", "read_file"]  # most called first
    assert tools["read_file"] | {"p50": None, "p95": None, "server": None} == {
        "server": None, "calls": 4, "ok": 2, "error": 1, "denied": 1, "timeout": 0, "cancelled": 0,
        "p50": None, "p95": None}
    assert tools["read_file"]["p50"] == 0.010 and tools["read_file"]["p95"] == 0.030
    assert tools["run_command"]["timeout"] == 1 and tools["run_command"]["p95"] == 30.0
    assert tools["mcp__tracker__open_issue"]["server"] == "tracker"
    d = stats["decisions"]
    assert d["asked"] == 3
    assert (d["approved_once"], d["denied_by_user"], d["approved_for_session"], d["covered_by_session"]) == (1, 1, 1, 1)
    assert (d["denied_unattended"], d["denied_by_policy"], d["allowed_by_yes"], d["auto_allowed"]) == (1, 1, 1, 4)
    turns = stats["turns"]
    assert turns["count"] == 5 and turns["from_saved_sessions"] == 2
    assert turns["rounds"] == {"0": 3, "2": 2}
    req = stats["requests"]
    assert (req["count"], req["failed"], req["retries"]) == (5, 1, 3)
    assert req["p50"] == 2.0 and req["p95"] == 4.0
    assert stats["tokens"]["with_tools"] == {"turns": 1, "prompt": 1000, "cached": 600, "completion": 100}
    # lines written before cached tokens were recorded have none: they count as 0, not as an error
    assert stats["tokens"]["without_tools"] == {"turns": 2, "prompt": 200, "cached": 0, "completion": 20}
    assert stats["cost"] == {"usd": 0.01, "turns_without_price": 2}

    one = collect(where, Window(session="s2"))
    assert sum(t["calls"] for t in one["tools"].values()) == 3
    assert one["turns"]["count"] == 2
    os.utime(where.sessions_dir / "s0.jsonl", (old, old))
    recent = collect(where, Window(since=time.time() - 86400))
    assert "list_dir" not in recent["tools"]  # ten days old
    assert recent["turns"]["from_saved_sessions"] == 0 and recent["turns"]["count"] == 3

    text = render(stats)
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "MCP server tracker:" in text and "  open_issue" in text
    assert "asked, denied" in text and "$0.0100 (2 turns with no known price, not counted)" in text
    assert "cached prompt tokens: 600 (50% of the tokens in, read from the provider's cache)" in text  # 600/1200


def test_empty_install_says_so(isolated_env: Path) -> None:
    text = render(collect(locations()))
    assert "no tool calls recorded" in text and "0 turns" in text and "0 requests, 0 failed, 0 retries" in text


def test_window_edges_by_date_then_by_time() -> None:
    since = dt.datetime(2026, 6, 15, 12, 0, tzinfo=dt.UTC).timestamp()
    w = Window(since=since)
    assert w.after("2026-07-01T00:00:00+0000") and not w.after("2026-06-01T00:00:00+0000")  # decided by date
    assert w.after("2026-06-15T12:00:00+0000") and not w.after("2026-06-15T11:59:59+0000")  # parsed in full
    assert w.after("2026-06-15T14:00:00+0200") and not w.after("2026-06-15T13:59:59+0200")  # offsets count
    assert not w.after("garbage-on-the-edge") and not w.after("2026-06-15Tgarbage")
