"""Early tool execution: a call the policy allows starts while the rest of the response still streams.

Through the real loop, over real HTTP on loopback: the httpx lane (OpenAI format) and litellm (Anthropic
Messages, translated by litellm). The scripted server stalls the stream once a call is complete
(``Reply.tool_calls(stall=...)``) until the tool itself resumes it (``server.stalls == [True]``), so "the
tool started before the response ended" holds by construction and is checked on two recorded timestamps
(the tool's start, the end of the provider's stream), never against a wall-clock bound.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator, Sequence
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
    ToolCallStarted,
    ToolOutput,
    TurnFailed,
    TurnFinished,
)
from swebash_ai.agent.conversation import BROKE_OFF, INCOMPLETE, STOPPED
from swebash_ai.agent.decide import Gate
from swebash_ai.agent.events import ModelRequest
from swebash_ai.agent.hooks import Opinion
from swebash_ai.config.hooks import Hook
from swebash_ai.config.rules import parse_rule_list
from swebash_ai.config.settings import load_settings
from swebash_ai.providers.base import Chunk, Message, Provider
from swebash_ai.providers.http_provider import HttpProvider
from swebash_ai.providers.litellm_provider import LiteLLMProvider
from swebash_ai.safety.verdict import Verdict
from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from swebash_ai.tools.registry import ToolContext, ToolRegistry, ToolResult, tool

LOG: list[tuple[str, str, float]] = []
"""(``start`` | ``end``, the call's name argument, time.monotonic())."""
SERVER: list[FakeLLMServer] = []


@tool("fs")
async def mark(ctx: ToolContext, name: str, seconds: float = 0.0, resume: bool = False) -> ToolResult:
    """Record when it runs, then wait.

    Args:
        name: Which call this is.
        seconds: How long to wait.
        resume: End the server's stall: the rest of the response is sent only once this call has started.
    """
    LOG.append(("start", name, time.monotonic()))
    if resume:
        SERVER[0].resume()
    ctx.on_output("started\n")
    await asyncio.sleep(seconds)
    LOG.append(("end", name, time.monotonic()))
    return ToolResult.success(f"mark {name}")


@tool("exec", policy=lambda ctx, a: Verdict.ask(f"would do {a.name}", rule="test.ask"))
async def gated(ctx: ToolContext, name: str, resume: bool = False) -> ToolResult:
    """Needs approval.

    Args:
        name: Which call this is.
        resume: End the server's stall (see ``mark``).
    """
    LOG.append(("start", name, time.monotonic()))
    if resume:
        SERVER[0].resume()
    return ToolResult.success(f"gated {name}")


class Timed:
    """Wraps a provider and records when each of its streams ended."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.model = inner.model
        self.ended: list[float] = []

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, tool_choice: str = "auto"
    ) -> AsyncIterator[Chunk]:
        try:
            async for chunk in self.inner.stream(messages, tools, tool_choice):
                yield chunk
        finally:
            self.ended.append(time.monotonic())


class Approver:
    interactive = True

    def __init__(self) -> None:
        self.asked: list[tuple[str, float]] = []

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.asked.append((str(request.arguments["name"]), time.monotonic()))
        return Decision.ALLOW_ONCE


def _http(server: FakeLLMServer) -> Provider:
    return HttpProvider("openai/fake-model", api_base=server.base_url, api_key="sk-x", retries=0, timeout=30)


def _litellm(server: FakeLLMServer) -> Provider:
    return LiteLLMProvider("anthropic/claude-sonnet-4-5", api_base=server.base_url, api_key="sk-ant-x", retries=0,
                           timeout=30)


@pytest.fixture(params=[pytest.param(("openai", _http), id="httpx-sse"),
                        pytest.param(("anthropic", _litellm), id="litellm-anthropic")])
def lane(request: pytest.FixtureRequest) -> Iterator[tuple[FakeLLMServer, Timed]]:
    dialect, factory = request.param
    if factory is _litellm:
        request.getfixturevalue("litellm_loaded")
    LOG.clear()
    with FakeLLMServer(dialect) as server:
        SERVER[:] = [server]
        yield server, Timed(factory(server))
    assert not server.violations, server.violations


def make_agent(provider: Timed, cwd: Path, approver: Any = None, gate: Gate | None = None, **limits: Any) -> Agent:
    registry = ToolRegistry([mark, gated])
    return Agent(provider, registry, ToolContext(load_settings().settings, cwd), approver, limits=LoopLimits(**limits),
                 gate=gate)


def when(kind: str, name: str) -> float:
    return next(t for k, n, t in LOG if k == kind and n == name)


def position(events: list[Any], match: Any) -> int:
    return next(i for i, e in enumerate(events) if match(e))


def started(name: str) -> Any:
    return lambda e: isinstance(e, ToolCallStarted) and e.arguments.get("name") == name


def first_request(e: Any) -> bool:
    return isinstance(e, ModelRequest)


def tool_results(conv: Conversation) -> list[tuple[str, str]]:
    return [(m["tool_call_id"], m["content"]) for m in conv.messages if m["role"] == "tool"]


def call_ids(conv: Conversation) -> list[str]:
    calls = next(m for m in conv.messages if m["role"] == "assistant" and m.get("tool_calls"))["tool_calls"]
    return [c["id"] for c in calls]


async def run(agent: Agent, conv: Conversation) -> list[Any]:
    return [e async for e in agent.run_turn(conv, "go")]


async def test_an_allowed_call_starts_before_the_response_ends(
    lane: tuple[FakeLLMServer, Timed], workspace: Path
) -> None:
    server, provider = lane
    server.enqueue(
        Reply.tool_calls([("mark", {"name": "a", "resume": True}, "call_a"), ("mark", {"name": "b"}, "call_b")],
                         split=5, stall=(0, 30.0)),
        Reply.text("done"),
    )
    conv = Conversation()
    events = await run(make_agent(provider, workspace), conv)
    assert isinstance(events[-1], TurnFinished) and events[-1].text == "done"
    # The first call ran inside the stall (it ended it): started, and even finished, before the response ended.
    assert server.stalls == [True]
    assert when("start", "a") < when("end", "a") < provider.ended[0]
    assert position(events, started("a")) < position(events, first_request)
    request = next(e for e in events if isinstance(e, ModelRequest))
    assert request.ok and request.tool_calls == 2  # the request's figures are the stream's, as before
    assert conv.is_valid()
    assert [text for _, text in tool_results(conv)] == ["mark a", "mark b"]


async def test_with_early_execution_off_calls_wait_for_the_end(
    lane: tuple[FakeLLMServer, Timed], workspace: Path
) -> None:
    server, provider = lane
    server.enqueue(Reply.tool_calls([("mark", {"name": "a"}), ("mark", {"name": "b"})], stall=(0, 0.5)),
                   Reply.text("done"))
    events = await run(make_agent(provider, workspace, early_tools=False), Conversation())
    assert server.stalls == [False]  # nothing could end the stall: no call ran while the response streamed
    assert provider.ended[0] < when("start", "a")
    assert position(events, first_request) < position(events, started("a"))


async def test_results_go_back_in_call_order_whatever_finishes_first(
    lane: tuple[FakeLLMServer, Timed], workspace: Path
) -> None:
    server, provider = lane
    server.enqueue(
        Reply.tool_calls([("mark", {"name": "slow", "seconds": 1.5, "resume": True}, "call_slow"),
                          ("mark", {"name": "fast"}, "call_fast")], stall=(0, 30.0)),
        Reply.text("done"),
    )
    conv = Conversation()
    events = await run(make_agent(provider, workspace), conv)
    finished = [e.call_id for e in events if isinstance(e, ToolCallFinished)]
    ids = call_ids(conv)
    assert when("start", "slow") < provider.ended[0]
    assert finished == [ids[1], ids[0]]  # the later call finished first...
    assert [cid for cid, _ in tool_results(conv)] == ids  # ...and its result still comes second
    assert [text for _, text in tool_results(conv)] == ["mark slow", "mark fast"]
    second = server.requests[1]["body"]["messages"]
    assert "mark slow" in str(second) and str(second).index("mark slow") < str(second).index("mark fast")


async def test_calls_that_need_approval_wait_for_the_end_and_are_asked_in_order(
    lane: tuple[FakeLLMServer, Timed], workspace: Path
) -> None:
    server, provider = lane
    server.enqueue(
        Reply.tool_calls([("mark", {"name": "a", "resume": True}), ("gated", {"name": "g1"}),
                          ("gated", {"name": "g2"}), ("mark", {"name": "c"})], stall=(2, 30.0)),
        Reply.text("done"),
    )
    approver = Approver()
    conv = Conversation()
    events = await run(make_agent(provider, workspace, approver), conv)
    end = provider.ended[0]
    assert when("start", "a") < end  # early execution is on in this turn...
    assert position(events, first_request) < position(events, started("g1"))  # ...but not for asks
    assert position(events, first_request) < position(events, started("g2"))
    assert [name for name, _ in approver.asked] == ["g1", "g2"]
    assert all(t > end for _, t in approver.asked)
    assert position(events, first_request) < position(events, lambda e: isinstance(e, ApprovalRequested))
    assert end < when("start", "g1")
    assert [text for _, text in tool_results(conv)] == ["mark a", "gated g1", "gated g2", "mark c"]


async def test_a_rule_that_asks_about_an_allowed_tool_asks_after_the_response(
    lane: tuple[FakeLLMServer, Timed], workspace: Path
) -> None:
    # The tool's own policy allows ``mark``, so the call starts early; the user's rule asks about it, so the
    # question (the same decision path as any call) waits until the response has ended, and the tool only
    # runs once the person said yes.
    server, provider = lane
    rules = parse_rule_list([{"tool": "mark", "arguments": {"name": "asked"}, "decision": "ask"}], "test", "rules",
                            "config")
    server.enqueue(Reply.tool_calls([("mark", {"name": "asked"}), ("mark", {"name": "b"})], stall=(0, 1.0)),
                   Reply.text("done"))
    approver = Approver()
    conv = Conversation()
    events = await run(make_agent(provider, workspace, approver, Gate(rules=rules, workspace=workspace)), conv)
    assert [name for name, _ in approver.asked] == ["asked"]
    assert provider.ended[0] < approver.asked[0][1] < when("start", "asked")
    assert position(events, first_request) < position(events, lambda e: isinstance(e, ApprovalRequested))
    assert [text for _, text in tool_results(conv)] == ["mark asked", "mark b"]


async def test_questions_keep_call_order_when_a_rule_asks_about_a_later_call(
    lane: tuple[FakeLLMServer, Timed], workspace: Path
) -> None:
    # g1 needs approval by its tool's own policy; the later "mark asked" is allowed by its tool but a user
    # rule asks. Neither may start while the response streams, so the questions come in call order.
    server, provider = lane
    rules = parse_rule_list([{"tool": "mark", "arguments": {"name": "asked"}, "decision": "ask"}], "test", "rules",
                            "config")
    server.enqueue(Reply.tool_calls([("gated", {"name": "g1"}), ("mark", {"name": "free"}),
                                     ("mark", {"name": "asked"}), ("mark", {"name": "z"})], stall=(2, 1.0)),
                   Reply.text("done"))
    approver = Approver()
    conv = Conversation()
    await run(make_agent(provider, workspace, approver, Gate(rules=rules, workspace=workspace)), conv)
    assert [name for name, _ in approver.asked] == ["g1", "asked"]
    assert when("start", "free") < provider.ended[0]  # the call no rule covers still started early
    assert provider.ended[0] < when("start", "asked")
    assert [text for _, text in tool_results(conv)] == ["gated g1", "mark free", "mark asked", "mark z"]


async def test_cancel_mid_stream_stops_a_started_call_and_keeps_the_conversation_valid(
    lane: tuple[FakeLLMServer, Timed], workspace: Path
) -> None:
    server, provider = lane
    server.enqueue(Reply.tool_calls([("mark", {"name": "a"}), ("mark", {"name": "slow", "seconds": 30}),
                                     ("mark", {"name": "c"})], stall=(1, 8.0)))
    agent = make_agent(provider, workspace)
    conv = Conversation()
    events: list[Any] = []
    slow_id: list[str] = []

    async def consume() -> None:
        async for e in agent.run_turn(conv, "go"):
            events.append(e)
            if started("slow")(e):
                slow_id.append(e.call_id)
            if isinstance(e, ToolOutput) and e.call_id in slow_id:
                agent.cancel()  # the slow call is running; the response is still streaming

    await asyncio.wait_for(consume(), 6)
    assert isinstance(events[-1], TurnFinished) and events[-1].reason == "cancelled"
    assert not provider.ended or provider.ended[0] > when("start", "slow")
    assert not any(k == "end" and n == "slow" for k, n, _ in LOG)
    assert conv.is_valid()
    results = dict(tool_results(conv))
    ids = call_ids(conv)
    assert len(ids) == 2  # the calls received so far; the third never completed
    assert results[ids[0]] == "mark a"  # finished before the cancel: kept
    assert results[ids[1]].startswith("Cancelled")
    finished = next(e for e in events if isinstance(e, ToolCallFinished) and e.call_id == ids[1])
    assert finished.result.status == "cancelled"
    assert [m.get(INCOMPLETE) for m in conv.messages if m.get("tool_calls")] == [STOPPED]  # the user stopped it


async def test_a_stream_that_fails_after_a_call_started_leaves_every_call_answered(
    lane: tuple[FakeLLMServer, Timed], workspace: Path
) -> None:
    server, provider = lane
    server.enqueue(Reply.tool_calls([("mark", {"name": "a"}),
                                     ("mark", {"name": "slow", "seconds": 30, "resume": True}),
                                     ("mark", {"name": "c"})], stall=(1, 30.0), cut=1))
    conv = Conversation()
    events = await asyncio.wait_for(run(make_agent(provider, workspace), conv), 20)
    assert isinstance(events[-1], TurnFailed)
    assert server.stalls == [True]  # the connection dropped after the slow call had started
    assert when("start", "slow") < provider.ended[0]
    assert not any(k == "end" and n == "slow" for k, n, _ in LOG)
    assert conv.is_valid()
    ids = call_ids(conv)
    results = dict(tool_results(conv))
    assert len(ids) == 2
    assert results[ids[0]] == "mark a"
    assert results[ids[1]].startswith("Cancelled: the response broke off")
    assert [m.get(INCOMPLETE) for m in conv.messages if m.get("tool_calls")] == [BROKE_OFF]  # saved as cut
    # The next turn goes out with a well-formed history (the server checks every request).
    server.enqueue(Reply.text("ok"))
    events = await run(make_agent(provider, workspace), conv)
    assert isinstance(events[-1], TurnFinished) and events[-1].text == "ok"


async def test_calls_past_the_turn_budget_never_start_early(
    lane: tuple[FakeLLMServer, Timed], workspace: Path
) -> None:
    server, provider = lane
    server.enqueue(Reply.tool_calls([("mark", {"name": "a", "resume": True}), ("mark", {"name": "b"}),
                                     ("mark", {"name": "c"})], stall=(1, 30.0)),
                   Reply.text("stopped"))
    conv = Conversation()
    events = await run(make_agent(provider, workspace, max_tool_calls=1), conv)
    assert events[-1].reason == "max_tool_calls"
    assert [n for k, n, _ in LOG if k == "start"] == ["a"]
    assert when("start", "a") < provider.ended[0]
    texts = [text for _, text in tool_results(conv)]
    assert texts[0] == "mark a" and all("limit of 1 tool calls" in t for t in texts[1:])



def allow_rules(*names: tuple[str, str]) -> Gate:
    """A gate whose user rules allow each (tool, name argument) given."""
    bodies = [{"tool": t, "arguments": {"name": n}, "decision": "allow"} for t, n in names]
    return Gate(rules=parse_rule_list(bodies, "test", "rules", "config"))


def decided_by(events: list[Any], name: str) -> str:
    ids = [e.call_id for e in events if started(name)(e)]
    return next(e.decided_by for e in events if isinstance(e, ToolCallFinished) and e.call_id in ids)


async def test_a_call_a_rule_allows_starts_before_the_response_ends(
    lane: tuple[FakeLLMServer, Timed], workspace: Path
) -> None:
    # The tool's own policy asks about ``gated``; the user's rule allows this one, so nothing can end in a
    # question and it starts at once: it is the call that ends the stall.
    server, provider = lane
    server.enqueue(Reply.tool_calls([("gated", {"name": "ok", "resume": True}), ("mark", {"name": "b"})],
                                    stall=(0, 30.0)),
                   Reply.text("done"))
    approver = Approver()
    conv = Conversation()
    gate = allow_rules(("gated", "ok"))
    gate.workspace = workspace
    events = await run(make_agent(provider, workspace, approver, gate), conv)
    assert server.stalls == [True]
    assert when("start", "ok") < provider.ended[0]
    assert approver.asked == []
    assert decided_by(events, "ok") == "rule:config#1"  # the audit still says who let it run
    assert [text for _, text in tool_results(conv)] == ["gated ok", "mark b"]


async def test_a_call_its_policy_allows_and_a_rule_allows_too_starts_early(
    lane: tuple[FakeLLMServer, Timed], workspace: Path
) -> None:
    server, provider = lane
    server.enqueue(Reply.tool_calls([("mark", {"name": "covered", "resume": True}), ("mark", {"name": "b"})],
                                    stall=(0, 30.0)),
                   Reply.text("done"))
    gate = allow_rules(("mark", "covered"))
    gate.workspace = workspace
    await run(make_agent(provider, workspace, Approver(), gate), Conversation())
    assert server.stalls == [True] and when("start", "covered") < provider.ended[0]


async def test_a_rule_allowed_call_after_a_question_waits_so_questions_keep_call_order(
    lane: tuple[FakeLLMServer, Timed], workspace: Path
) -> None:
    # g1 will ask (its policy asks, no rule); "ok" after it is allowed by a rule. "ok" waits for the end of
    # the response, so even a decision that changed before it ran could not put a question before g1's; a
    # call only its own policy allows ("free") still starts early, as before.
    server, provider = lane
    server.enqueue(Reply.tool_calls([("gated", {"name": "g1"}), ("mark", {"name": "free"}),
                                     ("gated", {"name": "ok"}), ("mark", {"name": "z"})], stall=(2, 1.0)),
                   Reply.text("done"))
    approver = Approver()
    conv = Conversation()
    gate = allow_rules(("gated", "ok"))
    gate.workspace = workspace
    events = await run(make_agent(provider, workspace, approver, gate), conv)
    assert server.stalls == [False]  # nothing ended the stall: "ok" did not run while the response streamed
    assert when("start", "free") < provider.ended[0] < when("start", "ok")
    assert [name for name, _ in approver.asked] == ["g1"]
    assert decided_by(events, "ok") == "rule:config#1" and decided_by(events, "g1") == "user"
    assert [text for _, text in tool_results(conv)] == ["gated g1", "mark free", "gated ok", "mark z"]


async def test_a_rule_allowed_call_a_hook_may_speak_about_waits_for_the_end(
    lane: tuple[FakeLLMServer, Timed], workspace: Path
) -> None:
    # A before_tool hook's answer is known only by running it, and it may ask: the call waits, and the hook
    # (here without an opinion) is asked once, when the call really runs.
    server, provider = lane
    server.enqueue(Reply.tool_calls([("gated", {"name": "ok"}), ("mark", {"name": "b"})], stall=(0, 1.0)),
                   Reply.text("done"))
    asked_hook: list[float] = []

    async def run_hook(hook: Hook, payload: dict[str, Any]) -> Opinion:
        asked_hook.append(time.monotonic())
        return Opinion()

    gate = allow_rules(("gated", "ok"))
    gate.workspace, gate.run_hook = workspace, run_hook
    gate.hooks = (Hook(event="before_tool", tool="gated", command=("./check",)),)
    approver = Approver()
    conv = Conversation()
    events = await run(make_agent(provider, workspace, approver, gate), conv)
    assert server.stalls == [False]
    assert provider.ended[0] < asked_hook[0] < when("start", "ok") and len(asked_hook) == 1
    assert approver.asked == [] and decided_by(events, "ok") == "rule:config#1"
    assert [text for _, text in tool_results(conv)] == ["gated ok", "mark b"]
