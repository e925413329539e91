"""Compaction by summary from the command line (the mechanics are tested in tests/agent/test_compaction.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from swebash_ai.agent.compaction import SUMMARY_PREFIX
from swebash_ai.agent.conversation import Conversation
from swebash_ai.providers.base import ToolCall
from swebash_ai.testing.fake_server import FakeLLMServer, Reply


def test_resume_of_a_long_session_compacts(llm_env: FakeLLMServer, run_cli: Any, workspace: Path) -> None:
    """One-shot ``--resume`` of a session near the budget: the summary request first, then the turn."""
    conv = Conversation()
    for i in range(8):
        conv.add_user(f"question {i}")
        conv.add_assistant("", [ToolCall(f"call_{i}", "read_file", '{"path": "a.txt"}')])
        conv.add_tool_result(f"call_{i}", "read_file", "y" * 1500)
        conv.add_assistant(f"answer {i}")
    sessions = Path(run_cli("config", "--path").stdout.strip()).parent / "sessions"
    conv.save(sessions / f"{conv.id}.jsonl")
    llm_env.enqueue(Reply.text("Eight questions about a.txt."), Reply.text("Resumed fine."))
    res = run_cli("--resume", "-c", "next?", env={"SWEBASH_AI_CONTEXT_TOKENS": "2000"})
    assert res.returncode == 0, res.stderr
    assert res.stdout == "Resumed fine.\n"
    assert "Compacted the conversation" in res.stderr and "Eight questions about a.txt." in res.stderr
    sent = llm_env.requests[1]["body"]["messages"]
    assert sent[1]["content"].startswith(SUMMARY_PREFIX)
    assert Conversation.load(sessions / f"{conv.id}.jsonl").messages[0]["content"].startswith(SUMMARY_PREFIX)
