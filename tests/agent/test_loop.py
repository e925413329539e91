"""The tool-calling loop on the scripted provider: what the model is sent, what the user sees."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import Field

from swebash_ai.agent import (
    Agent,
    AllowApprover,
    ApprovalRequest,
    ApprovalRequested,
    Conversation,
    Decision,
    LoopLimits,
    Notice,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutput,
    TurnFailed,
    TurnFinished,
)
from swebash_ai.agent.audit import AuditLog
from swebash_ai.config.settings import load_settings
from swebash_ai.errors import RateLimitError
from swebash_ai.providers import scripted
from swebash_ai.providers.scripted import ScriptedProvider
from swebash_ai.safety.verdict import Verdict
from swebash_ai.tools.registry import ToolContext, ToolRegistry, ToolResult, tool

RAN: list[str] = []


@tool("fs")
async def echo(ctx: ToolContext, text: str, times: Annotated[int, Field(ge=1, le=3)] = 1) -> ToolResult:
    """Echo text back.

    Args:
        text: What to echo.
        times: How often (1-3).
    """
    RAN.append(text)
    return ToolResult.success(text * times)


@tool("exec", policy=lambda ctx, a: Verdict.ask(f"would touch {a.target}", rule="test.ask"))
async def touch(ctx: ToolContext, target: str) -> ToolResult:
    """Create a file (needs approval).

    Args:
        target: The file to create.
    """
    (ctx.cwd / target).write_text("made")
    return ToolResult.success(f"created {target}")


@tool("exec", policy=lambda ctx, a: Verdict.deny("never", rule="test.deny"))
async def forbidden(ctx: ToolContext) -> ToolResult:
    """Never runs."""
    raise AssertionError("a denied tool ran")


@tool("exec")
async def slow(ctx: ToolContext, seconds: float, api_key: str = "") -> ToolResult:
    """Sleep, streaming output.

    Args:
        seconds: How long.
        api_key: A secret that must not reach the audit log.
    """
    ctx.on_output("starting\n")
    await asyncio.sleep(seconds)
    return ToolResult.success(f"slept {seconds}", exit_code=0)


APPROVED_SEEN: list[bool] = []


@tool("exec", policy=lambda ctx, a: Verdict.ask("asks", rule="test.ask") if a.ask else Verdict.allow(rule="test.ok"))
async def note_approval(ctx: ToolContext, ask: bool) -> ToolResult:
    """Record whether the call was approved.

    Args:
        ask: Whether the policy asks about this call.
    """
    APPROVED_SEEN.append(ctx.approved)
    return ToolResult.success("noted")


class ScriptedApprover:
    interactive = True

    def __init__(self, *answers: Decision, delay: float = 0.0) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []
        self.delay = delay

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.asked.append(request)
        if self.delay:
            await asyncio.sleep(self.delay)
        return self.answers.pop(0)


def make_agent(provider: ScriptedProvider, cwd: Path, approver: Any = None, **kw: Any) -> Agent:
    RAN.clear()
    settings = load_settings().settings
    registry = ToolRegistry([echo, touch, forbidden, slow, note_approval])
    return Agent(provider, registry, ToolContext(settings, cwd), approver, **kw)


async def run(agent: Agent, conv: Conversation, text: str = "go") -> list[Any]:
    return [e async for e in agent.run_turn(conv, text)]


def tool_messages(conv: Conversation) -> list[dict[str, Any]]:
    return [m for m in conv.messages if m["role"] == "tool"]


async def test_text_only_answer(workspace: Path) -> None:
    provider = ScriptedProvider([scripted.text("Hello there", pieces=4)])
    conv = Conversation()
    events = await run(make_agent(provider, workspace), conv, "hi")
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello there"
    assert isinstance(events[-1], TurnFinished) and events[-1].reason == "answered"
    assert conv.messages == [{"role": "user", "content": "hi", "typed": True},
                             {"role": "assistant", "content": "Hello there"}]
    sent = provider.requests[0]
    assert sent["messages"][-1] == {"role": "user", "content": "hi"}
    assert {t["function"]["name"] for t in sent["tools"]} == {"echo", "touch", "forbidden", "slow", "note_approval"}


async def test_tool_result_is_fed_back_and_loop_continues(workspace: Path) -> None:
    provider = ScriptedProvider([scripted.calls(("echo", {"text": "ab", "times": 2})), scripted.text("done")])
    conv = Conversation()
    events = await run(make_agent(provider, workspace), conv)
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished[0].result.ok and finished[0].result.content == "abab"
    second = provider.requests[1]["messages"]
    assert second[-1] == {"role": "tool", "tool_call_id": "call_0", "name": "echo", "content": "abab"}
    assert conv.is_valid()


async def test_parallel_calls_run_concurrently_and_results_keep_call_order(workspace: Path) -> None:
    provider = ScriptedProvider(
        [
            scripted.calls(("slow", {"seconds": 0.4}), ("slow", {"seconds": 0.1}), ("slow", {"seconds": 0.2})),
            scripted.text("ok"),
        ]
    )
    conv = Conversation()
    start = time.monotonic()
    events = await run(make_agent(provider, workspace), conv)
    elapsed = time.monotonic() - start
    assert elapsed < 0.65, f"calls ran one after another ({elapsed:.2f}s)"
    finish_order = [e.call_id for e in events if isinstance(e, ToolCallFinished)]
    assert finish_order == ["call_1", "call_2", "call_0"]  # finished by duration...
    assert [m["tool_call_id"] for m in tool_messages(conv)] == ["call_0", "call_1", "call_2"]  # ...sent in order
    assert any(isinstance(e, ToolOutput) and e.text == "starting\n" for e in events)


async def test_parallelism_is_bounded(workspace: Path) -> None:
    provider = ScriptedProvider([scripted.calls(*[("slow", {"seconds": 0.2}) for _ in range(4)]), scripted.text("ok")])
    start = time.monotonic()
    await run(make_agent(provider, workspace, limits=LoopLimits(parallel=2)), Conversation())
    assert time.monotonic() - start >= 0.39  # 4 calls, 2 at a time: two rounds


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"text": "a"', "not valid JSON"),  # truncated JSON
        ('["a"]', "must be a JSON object"),  # an array, not an object
        ("{}", "missing required argument 'text'"),  # required argument missing
        ('{"text": 5}', "'text': Input should be a valid string"),  # wrong type
        ('{"text": "a", "times": 9}', "less than or equal to 3"),  # out of range
        ('{"text": "a", "colour": "red"}', "unknown argument 'colour' (accepted: text, times)"),  # unknown argument
    ],
)
async def test_bad_arguments_become_results_the_model_can_act_on(
    workspace: Path, arguments: str, expected: str
) -> None:
    provider = ScriptedProvider([scripted.calls(("echo", arguments)), scripted.text("sorry")])
    conv = Conversation()
    events = await run(make_agent(provider, workspace), conv)
    result = next(e for e in events if isinstance(e, ToolCallFinished)).result
    assert not result.ok and expected in result.text
    assert RAN == []
    assert expected in tool_messages(conv)[0]["content"]
    assert isinstance(events[-1], TurnFinished)


async def test_unknown_tool_lists_the_available_ones(workspace: Path) -> None:
    provider = ScriptedProvider([scripted.calls(("delete_everything", {})), scripted.text("ok")])
    conv = Conversation()
    await run(make_agent(provider, workspace), conv)
    content = tool_messages(conv)[0]["content"]
    assert "Unknown tool 'delete_everything'" in content and "echo, touch, forbidden, slow" in content


async def test_max_iterations_tells_the_model_and_the_user(workspace: Path) -> None:
    provider = ScriptedProvider(
        [scripted.calls(("echo", {"text": str(i)}, f"c{i}")) for i in range(3)] + [scripted.text("partial")]
    )
    conv = Conversation()
    events = await run(make_agent(provider, workspace, limits=LoopLimits(max_iterations=3, max_tool_calls=50)), conv)
    final = events[-1]
    assert isinstance(final, TurnFinished) and final.reason == "max_iterations" and final.text == "partial"
    assert any(isinstance(e, Notice) and "TOOLS_MAX_ITER" in e.text for e in events)
    last_request = provider.requests[-1]
    assert last_request["tool_choice"] == "none"
    assert "Tool use stopped" in last_request["messages"][-1]["content"]
    assert RAN == ["0", "1", "2"]
    assert conv.is_valid()


async def test_max_tool_calls_per_turn_answers_the_excess(workspace: Path) -> None:
    provider = ScriptedProvider(
        [
            scripted.calls(*[("echo", {"text": str(i)}, f"c{i}") for i in range(5)]),
            scripted.text("enough"),
        ]
    )
    conv = Conversation()
    events = await run(make_agent(provider, workspace, limits=LoopLimits(max_tool_calls=3)), conv)
    assert RAN == ["0", "1", "2"]
    results = tool_messages(conv)
    assert len(results) == 5 and "limit of 3 tool calls" in results[4]["content"]
    assert isinstance(events[-1], TurnFinished) and events[-1].reason == "max_tool_calls"
    assert conv.is_valid()


async def test_policy_deny_never_runs_and_never_asks(workspace: Path) -> None:
    approver = ScriptedApprover()
    provider = ScriptedProvider([scripted.calls(("forbidden", {})), scripted.text("ok")])
    conv = Conversation()
    events = await run(make_agent(provider, workspace, approver), conv)
    finished = next(e for e in events if isinstance(e, ToolCallFinished))
    assert finished.result.status == "denied" and finished.decided_by == "test.deny"
    assert approver.asked == []


async def test_approval_denied_is_a_result_not_a_crash(workspace: Path) -> None:
    approver = ScriptedApprover(Decision.DENY)
    provider = ScriptedProvider([scripted.calls(("touch", {"target": "canary"})), scripted.text("understood")])
    conv = Conversation()
    events = await run(make_agent(provider, workspace, approver), conv)
    assert not (workspace / "canary").exists()
    assert any(isinstance(e, ApprovalRequested) and "would touch canary" in e.request.verdict.reasons for e in events)
    assert "The user denied" in tool_messages(conv)[0]["content"]
    final = events[-1]
    assert isinstance(final, TurnFinished) and final.denied == 1 and final.text == "understood"


async def test_non_interactive_denies_and_says_how_to_allow(workspace: Path) -> None:
    provider = ScriptedProvider([scripted.calls(("touch", {"target": "canary"})), scripted.text("ok")])
    conv = Conversation()
    await run(make_agent(provider, workspace), conv)  # default approver: nobody to ask
    assert not (workspace / "canary").exists()
    assert "--yes" in tool_messages(conv)[0]["content"]


async def test_yes_allows_asks(workspace: Path) -> None:
    provider = ScriptedProvider([scripted.calls(("touch", {"target": "canary"})), scripted.text("ok")])
    await run(make_agent(provider, workspace, AllowApprover()), Conversation())
    assert (workspace / "canary").read_text() == "made"


async def test_allow_for_session_covers_the_same_call_only(workspace: Path) -> None:
    approver = ScriptedApprover(Decision.ALLOW_SESSION, Decision.DENY)
    provider = ScriptedProvider(
        [
            scripted.calls(("touch", {"target": "a"}, "c1")),
            scripted.text("1"),
            scripted.calls(("touch", {"target": "a"}, "c2")),
            scripted.text("2"),
            scripted.calls(("touch", {"target": "b"}, "c3")),
            scripted.text("3"),
        ]
    )
    agent = make_agent(provider, workspace, approver)
    conv = Conversation()
    for _ in range(3):
        await run(agent, conv)
    assert [r.arguments["target"] for r in approver.asked] == ["a", "b"]  # the second "a" was not asked
    assert (workspace / "a").exists() and not (workspace / "b").exists()


async def test_confirm_off_runs_asks_but_not_denies(workspace: Path) -> None:
    provider = ScriptedProvider([scripted.calls(("touch", {"target": "x"}), ("forbidden", {})), scripted.text("ok")])
    approver = ScriptedApprover()
    conv = Conversation()
    await run(make_agent(provider, workspace, approver, confirm=False), conv)
    assert (workspace / "x").exists() and approver.asked == []
    assert tool_messages(conv)[1]["content"].startswith("Denied:")


async def test_cancel_mid_tool_keeps_the_conversation_valid(workspace: Path) -> None:
    provider = ScriptedProvider([scripted.calls(("slow", {"seconds": 5}), ("echo", {"text": "fast"}))])
    agent = make_agent(provider, workspace)
    conv = Conversation()
    events: list[Any] = []

    async def consume() -> None:
        async for e in agent.run_turn(conv, "go"):
            events.append(e)
            if isinstance(e, ToolOutput):
                agent.cancel()

    await asyncio.wait_for(consume(), 3)
    assert isinstance(events[-1], TurnFinished) and events[-1].reason == "cancelled"
    assert conv.is_valid()
    contents = {m["tool_call_id"]: m["content"] for m in tool_messages(conv)}
    assert contents["call_0"].startswith("Cancelled")
    assert contents["call_1"] == "fast"  # what finished before the cancel is kept


async def test_cancel_mid_stream_keeps_streamed_text(workspace: Path) -> None:
    provider = ScriptedProvider([scripted.text("one two three four five six", pieces=6)], delay=0.05)
    agent = make_agent(provider, workspace)
    conv = Conversation()
    task = asyncio.ensure_future(run(agent, conv))
    await asyncio.sleep(0.17)
    agent.cancel()
    events = await asyncio.wait_for(task, 2)
    assert events[-1].reason == "cancelled"
    kept = conv.messages[-1]
    assert kept["role"] == "assistant" and kept["content"] and "six" not in kept["content"]


async def test_cancel_while_waiting_for_approval(workspace: Path) -> None:
    approver = ScriptedApprover(Decision.ALLOW_ONCE, delay=10)
    provider = ScriptedProvider([scripted.calls(("touch", {"target": "never"}))])
    agent = make_agent(provider, workspace, approver)
    conv = Conversation()

    async def consume() -> list[Any]:
        out = []
        async for e in agent.run_turn(conv, "go"):
            out.append(e)
            if isinstance(e, ApprovalRequested):
                agent.cancel()
        return out

    events = await asyncio.wait_for(consume(), 3)
    assert events[-1].reason == "cancelled"
    assert not (workspace / "never").exists()
    assert conv.is_valid()


async def test_cancelling_the_consumer_task_also_repairs(workspace: Path) -> None:
    provider = ScriptedProvider([scripted.calls(("slow", {"seconds": 5}))])
    agent = make_agent(provider, workspace)
    conv = Conversation()
    task = asyncio.ensure_future(run(agent, conv))
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert conv.is_valid() and tool_messages(conv)[0]["content"].startswith("Cancelled")


async def test_provider_error_fails_the_turn_cleanly(workspace: Path) -> None:
    provider = ScriptedProvider([RateLimitError("slow down")])
    conv = Conversation()
    events = await run(make_agent(provider, workspace), conv)
    assert isinstance(events[-1], TurnFailed) and events[-1].error.title == "Rate limited"
    assert conv.messages == [{"role": "user", "content": "go", "typed": True}]


async def test_a_crashing_tool_is_an_error_result(workspace: Path) -> None:
    @tool("fs")
    async def boom(ctx: ToolContext) -> str:
        """Crash."""
        raise RuntimeError("disk on fire")

    provider = ScriptedProvider([scripted.calls(("boom", {})), scripted.text("ok")])
    agent = Agent(provider, ToolRegistry([boom]), ToolContext(load_settings().settings, workspace))
    conv = Conversation()
    await run(agent, conv)
    assert "boom failed: RuntimeError: disk on fire" in tool_messages(conv)[0]["content"]


async def test_audit_log_records_why_with_secrets_redacted(workspace: Path, tmp_path: Path) -> None:
    log_path = tmp_path / "audit.jsonl"
    provider = ScriptedProvider(
        [
            scripted.calls(
                ("slow", {"seconds": 0, "api_key": "sk-abcdefghijklmnopqrstuvwx"}),
                ("touch", {"target": "t"}),
                ("forbidden", {}),
            ),
            scripted.text("ok"),
        ]
    )
    agent = make_agent(provider, workspace, ScriptedApprover(Decision.ALLOW_ONCE), audit=AuditLog(log_path, "s1"))
    await run(agent, Conversation())
    text = log_path.read_text()
    assert "sk-abcdefghijklmnopqrstuvwx" not in text
    lines = {e["tool"]: e for e in map(json.loads, text.splitlines())}
    assert lines["slow"]["outcome"] == "ok" and lines["slow"]["arguments"]["api_key"] != "sk-abcdefghijklmnopqrstuvwx"
    assert lines["touch"]["decision"] == "ask" and lines["touch"]["decided_by"] == "user"
    assert lines["forbidden"]["decision"] == "deny" and lines["forbidden"]["decided_by"] == "test.deny"
    assert all(e["session"] == "s1" and "duration" in e for e in lines.values())


async def test_events_are_frozen(workspace: Path) -> None:
    provider = ScriptedProvider([scripted.text("x")])
    events = await run(make_agent(provider, workspace), Conversation())
    with pytest.raises(AttributeError):
        events[0].text = "changed"  # type: ignore[misc]


async def test_tool_call_started_carries_a_summary(workspace: Path) -> None:
    provider = ScriptedProvider([scripted.calls(("echo", {"text": "hi"})), scripted.text("ok")])
    events = await run(make_agent(provider, workspace), Conversation())
    started = next(e for e in events if isinstance(e, ToolCallStarted))
    assert started.arguments == {"text": "hi", "times": 1} and "echo" in started.summary


async def test_a_turn_closed_late_never_cancels_the_next_turn(workspace: Path) -> None:
    provider = ScriptedProvider([scripted.text("first"), scripted.text("second turn text", pieces=4)], delay=0.02)
    agent = make_agent(provider, workspace)
    conv = Conversation()
    first = agent.run_turn(conv, "one")
    async for event in first:  # stop reading at the final event, leaving the generator suspended
        if isinstance(event, TurnFinished):
            break
    second = agent.run_turn(conv, "two")
    events = [await second.__anext__()]
    await first.aclose()  # the first turn's cleanup runs while the second is streaming
    events += [e async for e in second]
    assert isinstance(events[-1], TurnFinished) and events[-1].reason == "answered"
    assert events[-1].text == "second turn text"


@tool("exec", policy=lambda ctx, a: Verdict("ask", ["DANGER: deletes your home"], "test.severe", severe=True))
async def wipe(ctx: ToolContext) -> ToolResult:
    """Pretend to wipe the home directory."""
    RAN.append("wipe")
    return ToolResult.success("wiped")


async def test_yes_never_covers_a_severe_call(workspace: Path) -> None:
    RAN.clear()
    provider = ScriptedProvider([scripted.calls(("wipe", {})), scripted.text("ok")])
    agent = Agent(provider, ToolRegistry([wipe]), ToolContext(load_settings().settings, workspace), AllowApprover())
    conv = Conversation()
    events = await run(agent, conv)
    assert RAN == [] and events[-1].denied == 1
    assert "--yes never covers that" in tool_messages(conv)[0]["content"]


async def test_confirm_off_still_asks_for_a_severe_call(workspace: Path) -> None:
    approver = ScriptedApprover(Decision.DENY)
    provider = ScriptedProvider([scripted.calls(("wipe", {})), scripted.text("ok")])
    agent = Agent(
        provider, ToolRegistry([wipe]), ToolContext(load_settings().settings, workspace), approver, confirm=False
    )
    RAN.clear()
    await run(agent, Conversation())
    assert len(approver.asked) == 1 and RAN == []


def test_severe_survives_combining_with_a_milder_verdict() -> None:
    severe = Verdict("ask", ["DANGER: x"], "r", severe=True)
    assert Verdict.allow().combine(severe).severe
    assert Verdict.strictest([severe, Verdict.ask("y")]).severe
    assert Verdict.deny("no").combine(severe).decision == "deny"


class ChangingApprover(ScriptedApprover):
    """Allows, but the file is edited by someone else while the question is on screen."""

    def __init__(self, target: Path) -> None:
        super().__init__(Decision.ALLOW_ONCE)
        self.target = target

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.target.write_text("alpha\nGAMMA\n")
        return await super().decide(request)


def edit_agent(workspace: Path, approver: Any) -> tuple[Agent, Path]:
    """An agent whose model asks to edit notes.txt ("alpha" -> "ALPHA") with the real edit_file tool."""
    from swebash_ai.tools.fs_write import edit_file

    target = workspace / "notes.txt"
    target.write_text("alpha\nbeta\n")
    provider = ScriptedProvider([
        scripted.calls(("edit_file", {"path": "notes.txt", "old": "alpha", "new": "ALPHA"})),
        scripted.text("ok"),
    ])
    ctx = ToolContext(load_settings().settings, workspace)
    return Agent(provider, ToolRegistry([edit_file]), ctx, approver), target


async def test_an_approval_covers_what_was_shown_not_a_change_made_meanwhile(workspace: Path) -> None:
    approver = ChangingApprover(workspace / "notes.txt")
    agent, target = edit_agent(workspace, approver)
    conv = Conversation()
    events = await run(agent, conv)
    shown = approver.asked[0].detail
    assert "\n beta" in shown and "GAMMA" not in shown  # the user saw the diff against the old content...
    assert target.read_text() == "alpha\nGAMMA\n"  # ...so the edit of the new content did not run
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished[0].decided_by == "stale-approval" and finished[0].result.status == "error"
    assert "changed while the user was deciding" in tool_messages(conv)[0]["content"]


async def test_an_unchanged_target_runs_once_approved(workspace: Path) -> None:
    agent, target = edit_agent(workspace, ScriptedApprover(Decision.ALLOW_ONCE))
    await run(agent, Conversation())
    assert target.read_text() == "ALPHA\nbeta\n"


async def test_a_tool_is_told_whether_its_call_was_approved_or_allowed_by_a_rule(workspace: Path) -> None:
    APPROVED_SEEN.clear()
    provider = ScriptedProvider([scripted.calls(("note_approval", {"ask": False}), ("note_approval", {"ask": True})),
                                 scripted.text("ok")])
    await run(make_agent(provider, workspace, ScriptedApprover(Decision.ALLOW_ONCE)), Conversation())
    assert sorted(APPROVED_SEEN) == [False, True]
