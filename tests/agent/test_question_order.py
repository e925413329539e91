"""Questions come in call order: a call that asks something while it runs (``ask_user``'s question, a further
approval such as ``fetch_url``'s redirect) never asks it before an earlier call of the same response has had
its approval settled, whether it started early (while the response streamed) or an earlier call was slow to
reach its question (a before_tool hook).

Through the real loop, over real HTTP on loopback (the httpx lane and litellm's Anthropic lane). The order is
read from what the approver was asked, in sequence; no wall-clock bound decides a test.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.agent import (
    Agent,
    ApprovalRequest,
    ApprovalRequested,
    Conversation,
    Decision,
    LoopLimits,
    ToolCallFinished,
    ToolCallRunning,
    ToolCallStarted,
    ToolCallWaiting,
    TurnFinished,
)
from swebash_ai.agent.decide import Gate
from swebash_ai.agent.hooks import Opinion
from swebash_ai.agent.question_order import QuestionLine
from swebash_ai.config.hooks import Hook
from swebash_ai.config.settings import load_settings
from swebash_ai.providers.base import Provider
from swebash_ai.providers.http_provider import HttpProvider
from swebash_ai.providers.litellm_provider import LiteLLMProvider
from swebash_ai.safety.verdict import Verdict
from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from swebash_ai.tools.ask import Answer, Question, ask_user
from swebash_ai.tools.registry import ToolContext, ToolRegistry, ToolResult, tool

SERVER: list[FakeLLMServer] = []
STARTED: list[str] = []


@tool("fs")
async def mark(ctx: ToolContext, name: str, resume: bool = False) -> ToolResult:
    """Allowed by its policy; records that it ran.

    Args:
        name: Which call this is.
        resume: End the server's stall: the rest of the response is sent only once this call has started.
    """
    STARTED.append(name)
    if resume:
        SERVER[0].resume()
    return ToolResult.success(f"mark {name}")


@tool("exec", policy=lambda ctx, a: Verdict.ask(f"would do {a.name}", rule="test.ask"),
      describe=lambda a: f"gated {a.name}")
async def gated(ctx: ToolContext, name: str) -> ToolResult:
    """Needs approval before it runs.

    Args:
        name: Which call this is.
    """
    STARTED.append(name)
    return ToolResult.success(f"gated {name}")


@tool("web")
async def probe(ctx: ToolContext, name: str) -> ToolResult:
    """Allowed by its policy, then asks about a further step while it runs (as fetch_url does for a redirect).

    Args:
        name: Which call this is.
    """
    STARTED.append(name)
    assert ctx.ask is not None
    refusal = await ctx.ask(Verdict.ask("a further step", rule="test.more"), f"{name} further", "detail", None)
    return ToolResult.success(f"probe {name}: {refusal or 'approved'}")


class Person:
    """Answers every approval and question, recording them in the order they were put."""

    interactive = True

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.asked.append(f"approve {request.summary}")
        await asyncio.sleep(0)  # a person takes a moment: anything that could jump the queue gets its chance
        return Decision.ALLOW_ONCE

    async def ask(self, question: Question) -> Answer:
        self.asked.append(f"question {question.question}")
        await asyncio.sleep(0)
        return Answer("yes")


def _http(server: FakeLLMServer) -> Provider:
    return HttpProvider("openai/fake-model", api_base=server.base_url, api_key="sk-x", retries=0, timeout=30)


def _litellm(server: FakeLLMServer) -> Provider:
    return LiteLLMProvider("anthropic/claude-sonnet-4-5", api_base=server.base_url, api_key="sk-ant-x", retries=0,
                           timeout=30)


@pytest.fixture(params=[pytest.param(("openai", _http), id="httpx-sse"),
                        pytest.param(("anthropic", _litellm), id="litellm-anthropic")])
def lane(request: pytest.FixtureRequest) -> Iterator[tuple[FakeLLMServer, Provider]]:
    dialect, factory = request.param
    if factory is _litellm:
        request.getfixturevalue("litellm_loaded")
    STARTED.clear()
    with FakeLLMServer(dialect) as server:
        SERVER[:] = [server]
        yield server, factory(server)
    assert not server.violations, server.violations


def make_agent(provider: Provider, cwd: Path, person: Person, gate: Gate | None = None, **limits: Any) -> Agent:
    registry = ToolRegistry([mark, gated, probe, ask_user])
    return Agent(provider, registry, ToolContext(load_settings().settings, cwd), person, limits=LoopLimits(**limits),
                 gate=gate or Gate(workspace=cwd))


async def run(agent: Agent, conv: Conversation) -> list[Any]:
    events = [e async for e in agent.run_turn(conv, "go")]
    assert isinstance(events[-1], TurnFinished), events[-1]
    assert conv.is_valid()
    return events


def results(conv: Conversation) -> list[str]:
    return [m["content"] for m in conv.messages if m["role"] == "tool"]


async def test_a_question_asked_by_an_early_call_waits_for_the_earlier_approval(
    lane: tuple[FakeLLMServer, Provider], workspace: Path
) -> None:
    # ask_user's policy allows it alone, so it starts while the response streams; g1 before it needs approval
    # and waits for the end. "m" ends the stall (held after it), so ask_user is already waiting to ask when
    # the response ends.
    server, provider = lane
    server.enqueue(
        Reply.tool_calls([("gated", {"name": "g1"}), ("ask_user", {"question": "Which?"}),
                          ("mark", {"name": "m", "resume": True}), ("mark", {"name": "z"})], stall=(2, 30.0)),
        Reply.text("done"),
    )
    person = Person()
    conv = Conversation()
    await asyncio.wait_for(run(make_agent(provider, workspace, person), conv), 20)
    assert server.stalls == [True]  # early execution still ran "m" while the response streamed
    assert person.asked == ["approve gated g1", "question Which?"]
    assert results(conv) == ["gated g1", "The user answered: yes", "mark m", "mark z"]


async def test_a_further_approval_of_an_early_call_waits_for_the_earlier_approval(
    lane: tuple[FakeLLMServer, Provider], workspace: Path
) -> None:
    # "p" starts early (its policy allows it) and, while it runs, asks about a further step (fetch_url's
    # redirect): that question comes after g1's approval, which was put first.
    server, provider = lane
    server.enqueue(
        Reply.tool_calls([("gated", {"name": "g1"}), ("probe", {"name": "p"}),
                          ("mark", {"name": "m", "resume": True}), ("mark", {"name": "z"})], stall=(2, 30.0)),
        Reply.text("done"),
    )
    person = Person()
    conv = Conversation()
    await asyncio.wait_for(run(make_agent(provider, workspace, person), conv), 20)
    assert STARTED.index("p") < STARTED.index("g1")  # it did start early...
    assert person.asked == ["approve gated g1", "approve p further"]  # ...and still asked second
    assert results(conv) == ["gated g1", "probe p: approved", "mark m", "mark z"]


async def test_questions_keep_call_order_when_an_earlier_call_is_slow_to_ask(
    lane: tuple[FakeLLMServer, Provider], workspace: Path
) -> None:
    # No early execution at all: both calls start when the response has ended, but g1 first runs a
    # before_tool hook (a process, so it takes a while) and only then asks. ask_user must not overtake it.
    server, provider = lane
    server.enqueue(Reply.tool_calls([("gated", {"name": "g1"}), ("ask_user", {"question": "Which?"})]),
                   Reply.text("done"))

    async def slow_hook(hook: Hook, payload: dict[str, Any]) -> Opinion:
        for _ in range(20):
            await asyncio.sleep(0)
        return Opinion()

    gate = Gate(workspace=workspace, run_hook=slow_hook,
                hooks=(Hook(event="before_tool", tool="gated", command=("./check",)),))
    person = Person()
    conv = Conversation()
    await asyncio.wait_for(run(make_agent(provider, workspace, person, gate, early_tools=False), conv), 20)
    assert person.asked == ["approve gated g1", "question Which?"]
    assert results(conv) == ["gated g1", "The user answered: yes"]


async def test_a_waiting_question_does_not_hold_the_only_slot(
    lane: tuple[FakeLLMServer, Provider], workspace: Path
) -> None:
    # One call at a time: ask_user starts early and takes the only slot, then waits for g1's approval; g1
    # can only be asked once the waiting question has let the slot go.
    server, provider = lane
    server.enqueue(Reply.tool_calls([("gated", {"name": "g1"}), ("ask_user", {"question": "Which?"}),
                                     ("gated", {"name": "g2"})]),
                   Reply.text("done"))
    person = Person()
    conv = Conversation()
    await asyncio.wait_for(run(make_agent(provider, workspace, person, parallel=1), conv), 20)
    assert person.asked == ["approve gated g1", "question Which?", "approve gated g2"]
    assert results(conv) == ["gated g1", "The user answered: yes", "gated g2"]


async def test_a_question_with_nothing_pending_before_it_is_asked_when_the_response_ends(
    lane: tuple[FakeLLMServer, Provider], workspace: Path
) -> None:
    # The common case is unchanged: calls before the question were allowed outright, so nothing holds it back
    # beyond the end of the response, and the approval of a later call comes after it.
    server, provider = lane
    server.enqueue(Reply.tool_calls([("mark", {"name": "a"}), ("ask_user", {"question": "Which?"}),
                                     ("gated", {"name": "g2"})]),
                   Reply.text("done"))
    person = Person()
    conv = Conversation()
    await asyncio.wait_for(run(make_agent(provider, workspace, person), conv), 20)
    assert person.asked == ["question Which?", "approve gated g2"]
    assert results(conv) == ["mark a", "The user answered: yes", "gated g2"]


async def test_the_line_lets_an_earlier_call_ask_first_and_survives_a_cancelled_waiter() -> None:
    # The line alone: 0 and 1 are settled (running), 2 waits for the lock a question holds. 1 is cancelled
    # while it waits to ask; 0 then asks about a further step: it goes before 2, which was waiting longer.
    lock = asyncio.Lock()
    line = QuestionLine(lock)
    places = [line.place(line.add()) for _ in range(3)]
    places[0].settled()
    places[1].settled()
    order: list[int] = []

    async def ask(position: int) -> None:
        async with places[position].asking():
            order.append(position)

    await lock.acquire()  # a question on screen (or the response still streaming)
    later = asyncio.create_task(ask(2))
    cancelled = asyncio.create_task(ask(1))
    await asyncio.sleep(0)
    cancelled.cancel()
    await asyncio.gather(cancelled, return_exceptions=True)
    earlier = asyncio.create_task(ask(0))
    await asyncio.sleep(0)
    lock.release()
    await asyncio.wait_for(asyncio.gather(later, earlier), 5)
    assert order == [0, 2]
    assert not lock.locked()


def story(events: list[Any], call_id: str) -> list[str]:
    """What the events say about one call, in order (started, waiting: why, running, finished)."""
    told: list[str] = []
    for event in events:
        if getattr(event, "call_id", None) != call_id:
            continue
        if isinstance(event, ToolCallStarted):
            told.append("started")
        elif isinstance(event, ToolCallWaiting):
            told.append(f"waiting: {event.waiting_for}")
        elif isinstance(event, ToolCallRunning):
            told.append("running")
        elif isinstance(event, ToolCallFinished):
            told.append("finished")
    return told


def started(events: list[Any]) -> dict[str, ToolCallStarted]:
    return {e.arguments.get("name", e.name) if isinstance(e.arguments, dict) else e.name: e
            for e in events if isinstance(e, ToolCallStarted)}


async def test_a_call_waiting_its_turn_to_ask_is_told_as_waiting_then_running(
    lane: tuple[FakeLLMServer, Provider], workspace: Path
) -> None:
    # ask_user starts early (its policy allows it) but its question waits for g1's approval: the events say it
    # waits for earlier calls, and that it runs only once its turn has come, after g1 was approved.
    server, provider = lane
    server.enqueue(
        Reply.tool_calls([("gated", {"name": "g1"}), ("ask_user", {"question": "Which?"}),
                          ("mark", {"name": "m", "resume": True}), ("mark", {"name": "z"})], stall=(2, 30.0)),
        Reply.text("done"),
    )
    events = await asyncio.wait_for(run(make_agent(provider, workspace, Person()), Conversation()), 20)
    calls = started(events)
    question = calls["ask_user"].call_id
    assert story(events, question) == ["started", "waiting: earlier_calls", "running", "finished"]
    approval = next(i for i, e in enumerate(events) if isinstance(e, ApprovalRequested))
    assert events.index(next(e for e in events if isinstance(e, ToolCallRunning))) > approval
    assert story(events, calls["m"].call_id) == ["started", "finished"]  # nothing to ask: never waits
    # The model's order, whatever order they started in (ask_user and m before g1).
    assert {name: e.position for name, e in calls.items()} == {"g1": 0, "ask_user": 1, "m": 2, "z": 3}
    assert len({e.response_id for e in calls.values()}) == 1 and calls["g1"].response_id


async def test_a_question_held_by_the_streaming_response_is_told_so(
    lane: tuple[FakeLLMServer, Provider], workspace: Path
) -> None:
    # Nothing before ask_user: it waits only for the response, which streams until "m" (started early) resumes it.
    server, provider = lane
    server.enqueue(
        Reply.tool_calls([("ask_user", {"question": "Which?"}), ("mark", {"name": "m", "resume": True}),
                          ("mark", {"name": "z"})], stall=(1, 30.0)),
        Reply.text("done"),
    )
    events = await asyncio.wait_for(run(make_agent(provider, workspace, Person()), Conversation()), 20)
    assert server.stalls == [True]
    assert story(events, started(events)["ask_user"].call_id) == ["started", "waiting: response", "running",
                                                                   "finished"]


async def test_the_line_tells_a_waiting_place_and_not_one_that_asks_at_once() -> None:
    # 0 asks at once (nothing before it, the lock free): nothing is told. 1 waits behind it (an earlier call
    # asking), then behind a question on screen (the lock, held from outside), then its turn comes.
    lock = asyncio.Lock()
    line = QuestionLine(lock)
    places = [line.place(line.add()) for _ in range(2)]
    told: list[tuple[int, str | None]] = []
    for position, place in enumerate(places):
        place.tell = lambda why, position=position: told.append((position, why))
    places[0].settled()
    answer = asyncio.Event()
    order: list[int] = []

    async def ask(position: int, wait: asyncio.Event | None = None) -> None:
        async with places[position].asking():
            order.append(position)
            if wait is not None:
                await wait.wait()

    first = asyncio.create_task(ask(0, answer))
    while not order:
        await asyncio.sleep(0)
    second = asyncio.create_task(ask(1))
    while not told:
        await asyncio.sleep(0)
    assert told == [(1, "earlier_calls")]
    grab = asyncio.create_task(lock.acquire())  # another question, next for the lock when 0's ends
    await asyncio.sleep(0)
    answer.set()
    await asyncio.wait_for(asyncio.gather(first, grab), 5)
    while len(told) < 2:
        await asyncio.sleep(0)
    assert told == [(1, "earlier_calls"), (1, "question")]
    lock.release()
    await asyncio.wait_for(second, 5)
    assert order == [0, 1]
    assert told == [(1, "earlier_calls"), (1, "question"), (1, None)]
