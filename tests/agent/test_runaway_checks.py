"""``Budget.runaway`` keeps a running size of the streaming answer: it looks at the answer exactly where summing
the pieces would (every 500 characters of each answer), with the whole text so far, and stops the same way."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swebash_ai.agent import Agent, Conversation, TurnFinished, limits
from swebash_ai.agent.limits import Budget, LoopLimits
from swebash_ai.config.settings import load_settings
from swebash_ai.providers.http_provider import HttpProvider
from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from swebash_ai.tools.registry import ToolContext, ToolRegistry, ToolResult, tool


def expected_checks(pieces: list[str]) -> list[str]:
    """Where the definition says the answer is looked at: whenever it has grown by 500 characters or more
    since the last look (summing every piece each time), with the whole text so far."""
    looked: list[str] = []
    checked = 0
    for n in range(1, len(pieces) + 1):
        size = sum(map(len, pieces[:n]))
        if size - checked >= 500:
            checked = size
            looked.append("".join(pieces[:n]))
    return looked


def stream(budget: Budget, pieces: list[str]) -> list[bool]:
    """Feed ``pieces`` to ``runaway`` one at a time, as the loop does (one list per answer)."""
    answer: list[str] = []
    verdicts = []
    for piece in pieces:
        answer.append(piece)
        verdicts.append(budget.runaway(answer))
        assert "".join(answer) == "".join(pieces[:len(verdicts)])  # joined in place, nothing lost
    return verdicts


# Pieces of any length up to 400 (a server may send a delta of any size, an empty one too), up to 16,000 characters.
piece_lists = st.lists(st.integers(0, 400).map(lambda n: ("ab c\n" * 80)[:n]), max_size=40)


@settings(max_examples=200, deadline=None)
@given(piece_lists, piece_lists)
def test_each_answer_is_looked_at_every_500_characters_with_its_whole_text(first: list[str],
                                                                          second: list[str]) -> None:
    looked: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(limits, "repeating_tail", lambda text: looked.append(text))  # records; finds nothing
        budget = Budget(LoopLimits())
        stream(budget, first)
        assert looked == expected_checks(first)
        looked.clear()
        stream(budget, second)  # the next answer of the turn (a new list): counted from its own start
        assert looked == expected_checks(second)


def test_a_repeating_answer_is_stopped_at_the_first_look_that_sees_it() -> None:
    pieces = ["Here is the plan. "] + ["and then we check it again "] * 200
    verdicts = stream(Budget(LoopLimits()), pieces)
    stopped_at = verdicts.index(True)
    size = sum(map(len, pieces[:stopped_at + 1]))
    assert 1200 <= size < 1200 + 500 + 27  # TEXT_TAIL_MIN seen, at the first look past it


def test_a_runaway_in_a_later_answer_is_found_as_soon_as_in_the_first() -> None:
    budget = Budget(LoopLimits())
    honest = [f"Reading file {i} of 900. " for i in range(600)]
    assert not any(stream(budget, honest))  # 14,000 characters of honest work
    verdicts = stream(budget, ["and then we check it again "] * 200)
    assert verdicts.index(True) < 80  # within its first 2,000 characters, not after 14,000 more


def test_the_detector_off_never_looks() -> None:
    budget = Budget(LoopLimits(loop_repeats=0))
    assert not any(stream(budget, ["and then we check it again "] * 200))


@tool("fs")
async def look(ctx: ToolContext, path: str) -> ToolResult:
    """Read a file of the working directory.

    Args:
        path: The file.
    """
    return ToolResult.success((ctx.cwd / path).read_text())


async def test_a_runaway_second_answer_is_cut_off_while_it_streams(tmp_path: Path) -> None:
    """Through the loop: the first answer calls a tool after 20,000 characters of prose, the second runs away."""
    (tmp_path / "a.txt").write_text("text")
    honest = "".join(f"Step {i}: look. " for i in range(1500))
    with FakeLLMServer("openai") as server:
        server.enqueue(Reply.tool_calls([("look", {"path": "a.txt"})], text=honest, chunk_size=50),
                       Reply.text("Here is the plan. " + "and then we check it again " * 2000, chunk_size=50))
        provider = HttpProvider("openai/fake-model", api_base=server.base_url, api_key="sk-x", retries=0, timeout=30)
        settings = load_settings().settings
        agent = Agent(provider, ToolRegistry([look]), ToolContext(settings, tmp_path),
                      limits=LoopLimits.from_settings(settings))
        conv = Conversation()
        events = [e async for e in agent.run_turn(conv, "go")]
    final = events[-1]
    assert isinstance(final, TurnFinished) and final.reason == "loop"
    assert len(final.text) < 5000  # cut within its first few looks, as a first answer is
    assert conv.is_valid()
