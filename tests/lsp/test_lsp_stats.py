"""``stats`` counts the time edits spent waiting for language servers, from the turns the recorder wrote."""

from __future__ import annotations

from pathlib import Path

from swebash_ai.agent import events as ev
from swebash_ai.observe.recorder import TurnRecorder
from swebash_ai.observe.stats import collect, render
from swebash_ai.storage.locations import locations
from swebash_ai.tools.registry import ToolResult


def _edit(call_id: str, status: str, seconds: float) -> ev.ToolCallFinished:
    result = ToolResult.success("Wrote it.", metadata={"diagnostics": {"status": status, "seconds": seconds}})
    return ev.ToolCallFinished(call_id, "write_file", result)


def test_language_server_time_is_recorded_per_turn_and_summed(isolated_env: Path) -> None:
    where = locations()
    recorder = TurnRecorder(where.turns_log, "s1", "openai/m")
    for event in (ev.ToolCallStarted("c1", "write_file", {}, "w"), _edit("c1", "ok", 0.25),
                  ev.ToolCallStarted("c2", "write_file", {}, "w"), _edit("c2", "timeout", 5.0),
                  ev.ToolCallFinished("c3", "read_file", ToolResult.success("x")),
                  ev.ToolCallFinished("c4", "write_file", ToolResult.success("x", metadata={
                      "diagnostics": {"status": "none"}})),  # no server checks such files: not a check
                  ev.TurnFinished("done")):
        recorder.on_event(event)
    recorder.end_turn()
    stats = collect(where)
    assert stats["language_servers"] == {"checks": 2, "seconds": 5.25, "timeouts": 1}
    assert "language servers: 2 checks after edits, 5.2s waited, 1 timed out" in render(stats)


def test_no_line_without_checks(isolated_env: Path) -> None:
    assert "language servers" not in render(collect(locations()))
