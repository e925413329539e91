"""Compaction by summary through the real loop and the loopback server: tool pairs stay valid, the request
fits the budget, the summary is saved, and a failed summary falls back to trimming."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from swebash_ai.agent import Notice, TurnFinished
from swebash_ai.agent.compaction import SUMMARY_PREFIX, SUMMARY_SYSTEM, plan_cut
from swebash_ai.agent.conversation import Conversation, estimate_tokens
from swebash_ai.config.settings import load_settings
from swebash_ai.providers.base import ToolCall
from swebash_ai.session import Session
from swebash_ai.testing.fake_server import FakeLLMServer, Reply, check_openai_messages
from swebash_ai.tools.registry import ToolContext, ToolResult, tool

BUDGET = 2000


@tool("fs")
async def shout(ctx: ToolContext, word: str) -> ToolResult:
    """Upper-case a word.

    Args:
        word: The word.
    """
    return ToolResult.success(word.upper())


def long_conversation(turns: int = 8) -> Conversation:
    """Turns that each call a tool with a large result (about 450 tokens a turn)."""
    conv = Conversation()
    for i in range(turns):
        conv.add_user(f"question {i}: shout the word of turn {i}")
        conv.add_assistant("", [ToolCall(f"call_{i}", "shout", f'{{"word": "w{i}"}}')])
        conv.add_tool_result(f"call_{i}", "shout", f"RESULT {i} " + "x" * 1500)
        conv.add_assistant(f"Turn {i} shouted.")
    assert conv.is_valid()
    return conv


@pytest.fixture
def small_budget(llm_env: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> FakeLLMServer:
    monkeypatch.setenv("SWEBASH_AI_CONTEXT_TOKENS", str(BUDGET))
    monkeypatch.setenv("SWEBASH_AI_PROVIDER_RETRIES", "0")
    return llm_env


def request_tokens(body: dict[str, Any]) -> int:
    return sum(estimate_tokens(m) for m in body["messages"])


async def run(session: Session, text: str) -> list[Any]:
    return [e async for e in session.run(text)]


def test_plan_cut_keeps_whole_recent_turns() -> None:
    conv = long_conversation()
    cut = plan_cut(conv, 1000)
    assert conv.messages[cut]["role"] == "user"  # a turn boundary: no call is parted from its result
    assert Conversation(messages=conv.messages[cut:]).is_valid()
    assert len(conv.messages) - cut == 8  # two turns of ~450 tokens fit in 1000
    assert plan_cut(Conversation(messages=conv.messages[-4:]), 10) == 0  # the last turn always stays


async def test_long_conversation_is_compacted_before_the_turn(small_budget: FakeLLMServer, workspace: Path) -> None:
    small_budget.enqueue(Reply.text("The user had eight words shouted; all done."), Reply.text("Next answer."))
    conv = long_conversation()
    session = Session(load_settings(), tools=[shout], probe_ollama=False, conversation=conv)
    events = await run(session, "and now?")
    summary_req, turn_req = (r["body"] for r in small_budget.requests)
    # the summary request: no tools, the old turns as a transcript
    assert "tools" not in summary_req and summary_req["messages"][0]["content"] == SUMMARY_SYSTEM
    assert "question 0" in summary_req["messages"][1]["content"]
    # the turn's request: system prompt kept, summary first, recent turns verbatim, tool pairs valid, in budget
    sent = turn_req["messages"]
    assert sent[0]["role"] == "system" and "shout" in sent[0]["content"]
    assert sent[1]["content"].startswith(SUMMARY_PREFIX) and "eight words shouted" in sent[1]["content"]
    assert check_openai_messages(sent) == []
    assert request_tokens(turn_req) < BUDGET
    assert sent[-1] == {"role": "user", "content": "and now?"}
    assert any(m.get("role") == "tool" and m["content"].startswith("RESULT 7") for m in sent)
    notice = next(e for e in events if isinstance(e, Notice))
    assert "Compacted" in notice.text and "eight words shouted" in notice.text
    assert isinstance(events[-1], TurnFinished)
    saved = Conversation.load(session.session_file)
    assert saved.messages[0]["content"].startswith(SUMMARY_PREFIX) and saved.is_valid()
    assert saved.meta["compactions"][0]["replaced_messages"] > 0


async def test_an_oversized_first_question_is_sent_not_a_crash(small_budget: FakeLLMServer, workspace: Path) -> None:
    """A fresh session whose first message alone is over the budget (a large pipe into ``-c -``): there is
    nothing to summarize, so the turn just runs (the provider says if it is too long)."""
    assert Conversation().turns() == []
    small_budget.enqueue(Reply.text("Read it."))
    session = Session(load_settings(), tools=[shout], probe_ollama=False)
    events = await run(session, "n\n" * (BUDGET * 4))
    assert isinstance(events[-1], TurnFinished) and events[-1].text == "Read it."
    assert not any(isinstance(e, Notice) for e in events) and len(small_budget.requests) == 1


async def test_failed_summary_falls_back_to_trimming_and_says_so(
    small_budget: FakeLLMServer, workspace: Path
) -> None:
    small_budget.enqueue(Reply.error(500, "summary exploded"), Reply.text("Answer anyway."))
    session = Session(load_settings(), tools=[shout], probe_ollama=False, conversation=long_conversation())
    events = await run(session, "and now?")
    warning = next(e for e in events if isinstance(e, Notice) and e.level == "warning")
    assert "Could not summarize" in warning.text and "left out" in warning.text
    assert isinstance(events[-1], TurnFinished) and events[-1].text == "Answer anyway."
    turn_req = small_budget.requests[-1]["body"]
    assert check_openai_messages(turn_req["messages"]) == []
    assert not any(str(m.get("content", "")).startswith(SUMMARY_PREFIX) for m in turn_req["messages"])
    assert len(session.conversation.messages) == 8 * 4 + 2  # nothing replaced on disk or in memory
    assert request_tokens(turn_req) < BUDGET + 200  # trimmed as before (the last turn always goes)


async def test_compact_on_demand_and_off_switch(llm_env: FakeLLMServer, workspace: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    session = Session(load_settings(), tools=[shout], probe_ollama=False,
                      conversation=Conversation(messages=long_conversation(1).messages))
    (nothing,) = await session.compact(force=True)
    assert "Nothing to compact" in nothing.text and not llm_env.requests
    monkeypatch.setenv("SWEBASH_AI_CONTEXT_TOKENS", str(BUDGET))
    monkeypatch.setenv("SWEBASH_AI_AUTO_COMPACT", "false")
    llm_env.enqueue(Reply.text("Plain answer."))
    session = Session(load_settings(), tools=[shout], probe_ollama=False, conversation=long_conversation())
    events = await run(session, "and now?")
    assert len(llm_env.requests) == 1 and not any(isinstance(e, Notice) for e in events)  # trimmed only
    llm_env.enqueue(Reply.text("Summary on demand."))
    (done,) = await session.compact(force=True)
    assert "Summary on demand." in done.text
    assert session.conversation.messages[0]["content"].startswith(SUMMARY_PREFIX)
    assert session.conversation.is_valid()
