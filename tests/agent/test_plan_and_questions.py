"""update_plan and ask_user through a real session's loop on the scripted provider: plan events, the plan
saved and restored with the session, questions answered through the approver's seam or refused at once."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from swebash_ai.agent.approval import AllowApprover, Decision, DenyApprover
from swebash_ai.agent.events import AgentEvent, PlanUpdated, ToolCallFinished
from swebash_ai.config.settings import load_settings
from swebash_ai.providers import scripted
from swebash_ai.providers.scripted import ScriptedProvider
from swebash_ai.session import Session
from swebash_ai.tools.ask import Answer, Question
from swebash_ai.tools.plan import Plan

PLAN_A = [{"step": "Read the code", "status": "completed"}, {"step": "Fix the bug", "status": "in_progress"},
          {"step": "Run the tests", "status": "pending"}]


def session_with(provider: ScriptedProvider, cwd: Path, approver: Any = None) -> Session:
    return Session(load_settings(), provider=provider, cwd=cwd, approver=approver, probe_ollama=False)


async def run(session: Session, text: str = "go") -> list[AgentEvent]:
    return [e async for e in session.run(text)]


def results(events: list[AgentEvent]) -> list[ToolCallFinished]:
    return [e for e in events if isinstance(e, ToolCallFinished)]


async def test_plan_events_only_on_change_and_saved_with_the_session(workspace: Path) -> None:
    provider = ScriptedProvider([
        scripted.calls(("update_plan", {"plan": PLAN_A, "explanation": "found it"})),
        scripted.calls(("update_plan", {"plan": PLAN_A, "explanation": "found it"})),  # the same again
        scripted.calls(("update_plan", {"plan": [{"step": "a", "status": "in_progress"},
                                                 {"step": "b", "status": "in_progress"}]})),
        scripted.text("done"),
    ])
    session = session_with(provider, workspace)
    events = await run(session)
    plans = [e.plan for e in events if isinstance(e, PlanUpdated)]
    assert len(plans) == 1
    assert [(i.step, i.status) for i in plans[0].items] == [(s["step"], s["status"]) for s in PLAN_A]
    assert plans[0].explanation == "found it"
    first, second, third = results(events)
    assert first.result.ok and first.result.text == "Plan updated: 1 of 3 steps completed; in progress: Fix the bug."
    assert second.result.ok  # acknowledged, not shown twice
    assert not third.result.ok and "At most one step may be in_progress" in third.result.text
    # The refused plan changed nothing; the saved session holds the last good one.
    restored = session_with(ScriptedProvider(), workspace)
    restored.resume(session.conversation.id)
    assert Plan.from_json(restored.conversation.meta["plan"]) == plans[0]


async def test_the_system_prompt_says_when_a_plan_helps(workspace: Path) -> None:
    prompt = session_with(ScriptedProvider(), workspace).system_prompt()
    assert "update_plan" in prompt and "one-step request" in prompt and "ask_user only when" in prompt


class Answering:
    """An approver with a person behind it (the seam the TUI, the terminal and MCP provide)."""

    interactive = True

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.asked: list[Question] = []

    async def decide(self, request: Any) -> Decision:
        return Decision.DENY

    async def ask(self, question: Question) -> Answer:
        self.asked.append(question)
        return self.answer


ASK = ("ask_user", {"question": "Which database?", "options": ["sqlite", "postgres"]}, "call_ask")


async def test_the_answer_is_the_tool_result(workspace: Path) -> None:
    for answer, expected in (
        (Answer("postgres", option=2), "The user chose option 2: postgres"),
        (Answer("mysql, actually"), "The user answered: mysql, actually"),
        (Answer(None), "The user dismissed the question without answering."),
    ):
        provider = ScriptedProvider([scripted.calls(ASK), scripted.text("ok")])
        person = Answering(answer)
        events = await run(session_with(provider, workspace, person))
        assert person.asked == [Question("call_ask", "Which database?", ("sqlite", "postgres"), True)]
        (finished,) = results(events)
        assert finished.result.text.startswith(expected)
        sent = [m for m in provider.requests[1]["messages"] if m["role"] == "tool"][-1]["content"]
        assert sent.startswith(expected)


async def test_nobody_to_answer_returns_at_once(workspace: Path) -> None:
    for approver, why in ((DenyApprover(), "no terminal"), (AllowApprover(), "--yes")):
        provider = ScriptedProvider([scripted.calls(ASK), scripted.text("ok")])
        start = time.monotonic()
        events = await run(session_with(provider, workspace, approver))
        assert time.monotonic() - start < 2
        (finished,) = results(events)
        assert finished.result.status == "denied"
        assert "Nobody can answer" in finished.result.text and why in finished.result.text
        assert "proceed" in finished.result.text


async def test_a_question_without_options_or_free_text_is_a_clear_error(workspace: Path) -> None:
    provider = ScriptedProvider([scripted.calls(("ask_user", {"question": "?", "allow_free_text": False})),
                                 scripted.text("ok")])
    person = Answering(Answer("x"))
    (finished,) = results(await run(session_with(provider, workspace, person)))
    assert not finished.result.ok and "Give options" in finished.result.text and person.asked == []
