"""Budgets and the loop detector, through the real HTTP lane against the scripted server: long work finishes
with the defaults, budgets stop where set, a model that repeats itself stops within the detector's window."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.agent import Agent, Conversation, LoopLimits, Notice, ToolCallFinished, TurnFinished
from swebash_ai.agent.events import BudgetUsed, ModelRequest
from swebash_ai.config.settings import load_settings
from swebash_ai.providers.http_provider import HttpProvider
from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from swebash_ai.tools.registry import ToolContext, ToolRegistry, ToolResult, tool

FAILS = itertools.count()


@tool("fs")
async def look(ctx: ToolContext, path: str) -> ToolResult:
    """Read a file of the working directory.

    Args:
        path: The file.
    """
    return ToolResult.success((ctx.cwd / path).read_text())


@tool("fs")
async def step(ctx: ToolContext, n: int) -> ToolResult:
    """One step of a long task.

    Args:
        n: The step's number.
    """
    return ToolResult.success(f"step {n} done")


@tool("fs")
async def flaky(ctx: ToolContext, target: str) -> ToolResult:
    """Always fails, each time with another message (a counter, as a timestamp would).

    Args:
        target: What to build.
    """
    return ToolResult.error(f"build of {target} failed (attempt {next(FAILS)})")


@tool("fs")
async def child(ctx: ToolContext, task: str) -> ToolResult:
    """Stands for a child agent: reports the tokens and cost it spent.

    Args:
        task: What the child does.
    """
    return ToolResult.success(f"{task}: done", metadata={"usage": {"prompt_tokens": 4000, "completion_tokens": 500,
                                                                   "cost": 0.25}})


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer("openai") as fake:
        yield fake
    assert not fake.violations, fake.violations


def agent_for(server: FakeLLMServer, cwd: Path, model: str = "openai/fake-model", **limits: Any) -> Agent:
    provider = HttpProvider(model, api_base=server.base_url, api_key="sk-x", retries=0, timeout=30)
    settings = load_settings().settings
    base = LoopLimits.from_settings(settings)  # the defaults a user gets
    fields = {k: getattr(base, k) for k in base.__dataclass_fields__} | limits
    return Agent(provider, ToolRegistry([look, step, flaky, child]), ToolContext(settings, cwd),
                 limits=LoopLimits(**fields))


def respond(make: Callable[[int], Reply]) -> Callable[[dict[str, Any]], Reply]:
    count = itertools.count(1)
    return lambda body: make(next(count))


async def run(agent: Agent, conv: Conversation | None = None, text: str = "go") -> list[Any]:
    return [e async for e in agent.run_turn(conv if conv is not None else Conversation(), text)]


def requests(events: list[Any]) -> int:
    return sum(isinstance(e, ModelRequest) for e in events)


async def test_a_150_step_task_finishes_with_the_defaults(server: FakeLLMServer, tmp_path: Path) -> None:
    server.responder = respond(lambda i: Reply.tool_calls([("step", {"n": i})]) if i <= 150 else Reply.text("all done"))
    conv = Conversation()
    events = await run(agent_for(server, tmp_path), conv)
    final = events[-1]
    assert isinstance(final, TurnFinished) and (final.reason, final.text) == ("answered", "all done")
    assert sum(isinstance(e, ToolCallFinished) and e.result.ok for e in events) == 150
    budgets = [e for e in events if isinstance(e, BudgetUsed)]
    assert [b.requests for b in budgets] == list(range(1, 151))  # shown as the turn runs, once a round
    assert budgets[-1].tool_calls == 150 and budgets[-1].max_requests == load_settings().settings.tools_max_iter
    assert conv.is_valid() and requests(events) == 151


async def test_the_same_call_with_the_same_result_stops_within_the_window(server: FakeLLMServer,
                                                                          tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("unchanged\n")
    server.responder = respond(lambda i: Reply.tool_calls([("look", {"path": "a.txt"})]))
    conv = Conversation()
    events = await run(agent_for(server, tmp_path, loop_repeats=5), conv)
    final = events[-1]
    assert isinstance(final, TurnFinished) and final.reason == "loop"
    assert 'look {"path": "a.txt"} was called 5 times in a row with the same result' in final.detail
    assert "loop_repeats" in final.detail
    assert requests(events) == 5  # stopped at once: no further request to a model going round
    assert any(isinstance(e, Notice) and "a.txt" in e.text for e in events)
    assert conv.is_valid()


async def test_rereading_a_file_that_changed_is_not_a_loop(server: FakeLLMServer, tmp_path: Path) -> None:
    target = tmp_path / "log.txt"

    def make(i: int) -> Reply:
        target.write_text(f"line {i}\n")  # the file changes between two reads (a build writing its log)
        return Reply.tool_calls([("look", {"path": "log.txt"})]) if i <= 12 else Reply.text("the build finished")

    server.responder = respond(make)
    events = await run(agent_for(server, tmp_path, loop_repeats=5))
    assert isinstance(events[-1], TurnFinished) and events[-1].reason == "answered"
    assert sum(isinstance(e, ToolCallFinished) for e in events) == 12


async def test_the_same_call_spelled_differently_is_the_same_call(server: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    spellings = ['{"path": "a.txt"}', '{"path":"a.txt"}', '{ "path" : "a.txt" }']
    server.responder = respond(lambda i: Reply.tool_calls([("look", spellings[i % 3])]))
    events = await run(agent_for(server, tmp_path, loop_repeats=3))
    assert isinstance(events[-1], TurnFinished) and events[-1].reason == "loop" and requests(events) == 3


async def test_a_failing_call_retried_without_change_stops(server: FakeLLMServer, tmp_path: Path) -> None:
    server.responder = respond(lambda i: Reply.tool_calls([("flaky", {"target": "app"})]))
    events = await run(agent_for(server, tmp_path, loop_repeats=5))
    final = events[-1]
    assert isinstance(final, TurnFinished) and final.reason == "loop"
    assert 'flaky {"target": "app"} failed 3 times in a row' in final.detail
    assert requests(events) == 3  # each error said another thing; the call itself never changed


async def test_a_failing_call_that_changes_goes_on(server: FakeLLMServer, tmp_path: Path) -> None:
    server.responder = respond(lambda i: Reply.tool_calls([("flaky", {"target": f"app{i}"})]) if i <= 8
                               else Reply.text("gave up"))
    events = await run(agent_for(server, tmp_path, loop_repeats=5))
    assert isinstance(events[-1], TurnFinished) and events[-1].reason == "answered"


async def test_text_going_round_a_cycle_stops(server: FakeLLMServer, tmp_path: Path) -> None:
    said = ["Let me look at the configuration once more.", "Now the tests again, to be sure."]
    server.responder = respond(lambda i: Reply.tool_calls([("step", {"n": i})], text=said[i % 2]))
    events = await run(agent_for(server, tmp_path, loop_repeats=3))
    final = events[-1]
    assert isinstance(final, TurnFinished) and final.reason == "loop"
    assert "a cycle of 2 texts 6 times in a row" in final.detail and "the tests again" in final.detail
    assert requests(events) == 12  # round the cycle twice the window: the calls differed, the texts alone decide


async def test_a_runaway_answer_is_cut_off_while_it_streams(server: FakeLLMServer, tmp_path: Path) -> None:
    runaway = "Here is the plan. " + "and then we check it again " * 2000
    server.enqueue(Reply.text(runaway, chunk_size=50))
    conv = Conversation()
    events = await run(agent_for(server, tmp_path), conv)
    final = events[-1]
    assert isinstance(final, TurnFinished) and final.reason == "loop"
    assert "the model's answer kept repeating “and then we check it again”" in final.detail
    assert len(final.text) < 5000  # cut soon after the repetition was evident, not at its 54,000th character
    assert conv.messages[-1]["role"] == "assistant" and conv.is_valid()


async def test_the_detector_can_be_turned_off(server: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("same")
    server.responder = respond(lambda i: Reply.tool_calls([("look", {"path": "a.txt"})]) if i <= 8
                               else Reply.text("read it eight times"))
    events = await run(agent_for(server, tmp_path, loop_repeats=0))
    assert isinstance(events[-1], TurnFinished) and events[-1].reason == "answered"


async def test_a_token_budget_stops_the_turn_between_requests(server: FakeLLMServer, tmp_path: Path) -> None:
    server.responder = respond(lambda i: Reply.tool_calls([("step", {"n": i})], usage=(1000, 100)))
    conv = Conversation()
    events = await run(agent_for(server, tmp_path, max_turn_tokens=3000), conv)
    final = events[-1]
    assert isinstance(final, TurnFinished) and final.reason == "max_turn_tokens"
    assert requests(events) == 3  # 1100, 2200, 3300: stops once spent, and pays for no last answer
    assert "3.3k tokens" in final.detail and "max_turn_tokens, SWEBASH_AI_MAX_TURN_TOKENS = 3000" in final.detail
    assert [b.tokens for b in events if isinstance(b, BudgetUsed)] == [1100, 2200, 3300]
    assert conv.is_valid()


async def test_a_cost_budget_stops_where_prices_are_known(server: FakeLLMServer, tmp_path: Path) -> None:
    server.responder = respond(lambda i: Reply.tool_calls([("step", {"n": i})], usage=(100_000, 1000)))
    events = await run(agent_for(server, tmp_path, model="openai/gpt-4o-mini", max_turn_cost=0.04))
    final = events[-1]
    assert isinstance(final, TurnFinished) and final.reason == "max_turn_cost"
    spent = [b.cost for b in events if isinstance(b, BudgetUsed)]
    assert all(c is not None for c in spent) and spent[-1] >= 0.04 > spent[-2]  # type: ignore[operator]
    assert "max_turn_cost" in final.detail


async def test_a_cost_budget_without_a_price_says_so(server: FakeLLMServer, tmp_path: Path) -> None:
    server.responder = respond(lambda i: Reply.tool_calls([("step", {"n": i})]) if i <= 2 else Reply.text("ok"))
    events = await run(agent_for(server, tmp_path, max_turn_cost=0.01))
    assert isinstance(events[-1], TurnFinished) and events[-1].reason == "answered"
    assert any(isinstance(e, Notice) and "price of openai/fake-model is not known" in e.text for e in events)


async def test_what_a_child_spent_counts_against_the_turn(server: FakeLLMServer, tmp_path: Path) -> None:
    server.responder = respond(lambda i: Reply.tool_calls([("child", {"task": f"part {i}"})], usage=(100, 10)))
    events = await run(agent_for(server, tmp_path, max_turn_tokens=10_000))
    final = events[-1]
    assert isinstance(final, TurnFinished) and final.reason == "max_turn_tokens"
    assert requests(events) == 3  # 4610 tokens a round, the child's 4500 with them
    assert final.usage is not None and final.usage.prompt_tokens == 300  # the turn's own requests


async def test_a_call_count_still_applies_when_set(server: FakeLLMServer, tmp_path: Path) -> None:
    server.responder = respond(lambda i: Reply.tool_calls([("step", {"n": 2 * i}), ("step", {"n": 2 * i + 1})])
                               if i <= 2 else Reply.text("summary"))
    events = await run(agent_for(server, tmp_path, max_tool_calls=3))
    final = events[-1]
    assert isinstance(final, TurnFinished) and final.reason == "max_tool_calls" and final.text == "summary"
    assert "max_tool_calls_per_turn, SWEBASH_AI_MAX_TOOL_CALLS_PER_TURN = 3" in final.detail
    results = [e.result.text for e in events if isinstance(e, ToolCallFinished)]
    assert results == ["step 2 done", "step 3 done", "step 4 done",
                       "Not run: the limit of 3 tool calls per turn is reached."]


async def test_the_request_ceiling_asks_for_a_last_answer(server: FakeLLMServer, tmp_path: Path) -> None:
    server.responder = respond(lambda i: Reply.tool_calls([("step", {"n": i})]) if i <= 4 else Reply.text("so far"))
    events = await run(agent_for(server, tmp_path, max_iterations=4))
    final = events[-1]
    assert isinstance(final, TurnFinished) and (final.reason, final.text) == ("max_iterations", "so far")
    assert "tools_max_iter, SWEBASH_AI_TOOLS_MAX_ITER = 4" in final.detail
    last = server.requests[-1]["body"]
    assert last["tool_choice"] == "none" and "Tool use stopped" in last["messages"][-1]["content"]
