"""Subagents over real HTTP: the ``task`` tool, its child loops, and the parent as their ceiling.

The scripted server answers the parent and each child by what the request says (a child's system prompt names
its agent, its user message is the task prompt), since children ask in no fixed order.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from swebash_ai.agent.approval import AllowApprover, Decision
from swebash_ai.agent.conversation import Conversation
from swebash_ai.agent.events import (
    ApprovalRequest,
    SubagentEvent,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
)
from swebash_ai.agent.result_store import Aside
from swebash_ai.agent.subagents import TASK_PARAMETERS
from swebash_ai.config.settings import load_settings
from swebash_ai.session import Session
from swebash_ai.testing.fake_server import FakeLLMServer, Reply

CHILD = "agent, started by the main assistant"


class Script:
    """Replies by who asks: ``parent`` in order, each child by its task prompt, in order."""

    def __init__(self, parent: list[Reply], children: dict[str, list[Reply | Callable[[], Reply]]]) -> None:
        self.parent = parent
        self.children = children
        self.child_bodies: dict[str, list[dict[str, Any]]] = {}

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        if CHILD not in messages[0]["content"]:
            return self.parent.pop(0)
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        self.child_bodies.setdefault(prompt, []).append(body)
        reply = self.children[prompt].pop(0)
        return reply() if callable(reply) else reply


def task(prompt: str, agent: str = "", call_id: str | None = None) -> tuple[str, dict[str, str], str] | tuple[
        str, dict[str, str]]:
    args = {"description": f"do {prompt}", "prompt": prompt, "agent": agent}
    return ("task", args, call_id) if call_id else ("task", args)


def session(approver: Any = None, cwd: Path | None = None) -> Session:
    return Session(load_settings(), approver=approver, cwd=cwd, probe_ollama=False)


async def run(s: Session, text: str = "go") -> list[Any]:
    return [e async for e in s.run(text)]


def results(events: list[Any]) -> dict[str, ToolCallFinished]:
    """The parent's finished task calls, by call id."""
    return {e.call_id: e for e in events if isinstance(e, ToolCallFinished) and e.name == "task"}


def tokens(messages: list[dict[str, Any]]) -> int:
    return len(json.dumps(messages)) // 4


def config(text: str) -> None:
    path = Path(os.environ["SWEBASH_AI_HOME"]) / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_task_schema_is_the_one_its_signature_makes(llm_env: FakeLLMServer, workspace: Path) -> None:
    tool = session().agent.registry.get("task")  # type: ignore[union-attr]
    assert tool is not None and tool.parameters == TASK_PARAMETERS == tool.schema_from_model()
    assert "- explore:" in tool.description and "- general:" in tool.description


async def test_three_children_run_side_by_side_and_each_returns(llm_env: FakeLLMServer, workspace: Path) -> None:
    slow = {"delay": 0.15, "chunk_size": 1}  # ten characters: about 1.35 s of streaming each
    one_child = 9 * 0.15
    llm_env.responder = Script([Reply.tool_calls([task("alone")]), Reply.text("done")],
                               {"alone": [Reply.text("alone-done", **slow)]})  # type: ignore[arg-type]
    started = time.monotonic()
    await run(session())
    alone = time.monotonic() - started  # a turn with one child, on this machine now
    script = Script(
        [Reply.tool_calls([task("alpha", call_id="c1"), task("beta", call_id="c2"), task("gamma", call_id="c3")]),
         Reply.text("all three done")],
        {p: [Reply.text(f"{p}-done", usage=(100, 10), **slow)] for p in ("alpha", "beta", "gamma")},  # type: ignore[arg-type]
    )
    llm_env.responder = script
    s = session()
    started = time.monotonic()
    events = await run(s)
    wall = time.monotonic() - started
    done = results(events)
    assert set(done) == {"c1", "c2", "c3"}
    for call_id, word in (("c1", "alpha"), ("c2", "beta"), ("c3", "gamma")):
        assert done[call_id].result.ok and done[call_id].result.text.startswith(f"{word}-done")
        assert done[call_id].result.metadata["usage"] == {"prompt_tokens": 100, "completion_tokens": 10, "cost": None}
    # In series the three would take two more children's time than one; side by side, well under one more.
    assert wall < alone + one_child, f"three children took {wall:.2f}s; a turn with one took {alone:.2f}s"
    # Each child's events come nested under its own call, ending with its own TurnFinished.
    nested = [e for e in events if isinstance(e, SubagentEvent)]
    assert {e.call_id for e in nested} == {"c1", "c2", "c3"} and {e.agent for e in nested} == {"general"}
    assert sum(isinstance(e.event, TurnFinished) for e in nested) == 3
    # A child sees its task, never the parent's conversation.
    body = script.child_bodies["alpha"][0]
    assert [m["role"] for m in body["messages"]] == ["system", "user"] and "go" not in body["messages"][1]["content"]
    assert "task" not in {t["function"]["name"] for t in body["tools"]}  # depth 1: no grandchildren
    assert events[-1].text == "all three done"
    saved = Conversation.load(s.session_file)
    assert set(saved.meta["subagents"]) == {"c1", "c2", "c3"}  # the children's transcripts are kept
    assert saved.meta["subagents"]["c2"]["messages"][-1]["content"] == "beta-done"


async def test_the_parent_grows_by_the_summaries_only(llm_env: FakeLLMServer, workspace: Path) -> None:
    (workspace / "big.txt").write_text("".join(f"line {i}: " + "x" * 60 + "\n" for i in range(400)))
    script = Script(
        [Reply.tool_calls([task("read big.txt", "explore")]), Reply.text("ok")],
        {"read big.txt": [Reply.tool_calls([("read_file", {"path": "big.txt"})]),
                          Reply.text("big.txt holds 400 lines of x.")]},
    )
    llm_env.responder = script
    events = await run(session())
    child_second = script.child_bodies["read big.txt"][1]["messages"]
    assert "line 399" in child_second[-1]["content"]  # the child read the whole file
    first, second = (r["body"]["messages"] for r in llm_env.requests
                     if CHILD not in r["body"]["messages"][0]["content"])
    grown = tokens(second) - tokens(first)
    summary = results(events)
    (result,) = summary.values()
    assert grown <= tokens([{"content": result.result.text}]) + 150  # the call and its summary, nothing more
    assert tokens([{"content": child_second[-1]["content"]}]) > 5 * grown
    assert "line 1:" not in json.dumps(second)


async def test_a_read_only_child_cannot_write_and_says_so(llm_env: FakeLLMServer, workspace: Path) -> None:
    script = Script(
        [Reply.tool_calls([task("change things", "explore")]), Reply.text("ok")],
        {"change things": [Reply.tool_calls([("write_file", {"path": "x.txt", "content": "hi"}),
                                             ("run_command", {"command": "touch y.txt"})]),
                           Reply.text("I could not write.")]},
    )
    llm_env.responder = script
    events = await run(session(AllowApprover()))  # even --yes does not widen the agent
    (done,) = results(events).values()
    assert not (workspace / "x.txt").exists() and not (workspace / "y.txt").exists()
    offered = {t["function"]["name"] for t in script.child_bodies["change things"][0]["tools"]}
    assert "write_file" not in offered and "edit_file" not in offered and "read_file" in offered
    inner = {e.event.name: e.event for e in events
             if isinstance(e, SubagentEvent) and isinstance(e.event, ToolCallFinished)}
    assert inner["write_file"].decided_by == "unknown_tool"
    assert inner["run_command"].result.status == "denied" and inner["run_command"].decided_by == "mode:plan"
    assert "refused: write_file (unknown_tool), run_command (mode:plan)" in done.result.text
    assert "files changed: none" in done.result.text


async def test_a_deny_rule_of_the_user_holds_inside_a_child(llm_env: FakeLLMServer, workspace: Path) -> None:
    config('[[rules]]\nprefix = ["touch"]\ndecision = "deny"\n')
    script = Script(
        [Reply.tool_calls([task("make a file")]), Reply.text("ok")],
        {"make a file": [Reply.tool_calls([("run_command", {"command": "touch made.txt"})]), Reply.text("denied")]},
    )
    llm_env.responder = script
    events = await run(session(AllowApprover()))
    inner = [e.event for e in events if isinstance(e, SubagentEvent) and isinstance(e.event, ToolCallFinished)]
    assert [(e.result.status, e.decided_by) for e in inner] == [("denied", "rule:config#1")]
    assert not (workspace / "made.txt").exists()
    assert "refused: run_command (rule:config#1)" in next(iter(results(events).values())).result.text


async def test_a_childs_question_without_a_terminal_is_refused(llm_env: FakeLLMServer, workspace: Path) -> None:
    script = Script(
        [Reply.tool_calls([task("write it")]), Reply.text("ok")],
        {"write it": [Reply.tool_calls([("write_file", {"path": "w.txt", "content": "hi"})]), Reply.text("no")]},
    )
    llm_env.responder = script
    events = await run(session())  # no approver: nobody to ask, as in a pipe
    (inner,) = [e.event for e in events if isinstance(e, SubagentEvent) and isinstance(e.event, ToolCallFinished)]
    assert inner.result.status == "denied" and inner.decided_by == "non-interactive"
    assert "no terminal to ask for approval" in inner.result.text and not (workspace / "w.txt").exists()


async def test_a_childs_question_reaches_the_person_naming_the_agent(llm_env: FakeLLMServer,
                                                                      workspace: Path) -> None:
    asked: list[ApprovalRequest] = []

    class Person:
        interactive = True

        async def decide(self, request: ApprovalRequest) -> Decision:
            asked.append(request)
            return Decision.ALLOW_ONCE

    script = Script(
        [Reply.tool_calls([task("write it")]), Reply.text("ok")],
        {"write it": [Reply.tool_calls([("write_file", {"path": "w.txt", "content": "hi"})]), Reply.text("done")]},
    )
    llm_env.responder = script
    events = await run(session(Person()))
    assert len(asked) == 1 and asked[0].summary.startswith("[general agent] ") and asked[0].tool == "write_file"
    (inner,) = [e.event for e in events if isinstance(e, SubagentEvent) and isinstance(e.event, ToolCallFinished)]
    (task_call,) = results(events)
    assert asked[0].call_id == f"{task_call}/{inner.call_id}"  # as the front ends name a child's call
    assert (workspace / "w.txt").read_text() == "hi"
    assert "files changed: w.txt" in next(iter(results(events).values())).result.text


async def test_a_child_that_errors_leaves_the_others_intact(llm_env: FakeLLMServer, workspace: Path) -> None:
    script = Script(
        [Reply.tool_calls([task("one", call_id="a"), task("two", call_id="b"), task("three", call_id="c")]),
         Reply.text("two of three")],
        {"one": [Reply.text("one ok")], "two": [Reply.error(400, "the child's request is bad")],
         "three": [Reply.text("three ok")]},
    )
    llm_env.responder = script
    s = session()
    events = await run(s)
    done = results(events)
    assert done["a"].result.ok and done["a"].result.text.startswith("one ok")
    assert done["c"].result.ok and done["c"].result.text.startswith("three ok")
    assert done["b"].result.status == "error" and "The general agent failed" in done["b"].result.text
    assert events[-1].text == "two of three" and s.conversation.is_valid()


async def test_cancelling_stops_every_child_and_leaves_no_process(llm_env: FakeLLMServer, workspace: Path) -> None:
    marker = "31.4159"
    command = {"command": f"sleep {marker}"}
    script = Script(
        [Reply.tool_calls([task("wait one", call_id="a"), task("wait two", call_id="b")])],
        {"wait one": [Reply.tool_calls([("run_command", command)])],
         "wait two": [Reply.tool_calls([("run_command", command)])]},
    )
    llm_env.responder = script
    s = session(AllowApprover())
    events: list[Any] = []
    running: set[str] = set()

    async def consume() -> None:
        async for event in s.run("go"):
            events.append(event)
            if isinstance(event, SubagentEvent) and isinstance(event.event, ToolCallStarted):
                running.add(event.call_id)

    consumer = asyncio.create_task(consume())
    for _ in range(200):
        if running == {"a", "b"} and _sleepers(marker):
            break
        await asyncio.sleep(0.05)
    assert running == {"a", "b"} and _sleepers(marker), "both children should be running their command"
    await asyncio.sleep(0.3)
    s.cancel()
    await asyncio.wait_for(consumer, 15)
    assert isinstance(events[-1], TurnFinished) and events[-1].reason == "cancelled"
    done = results(events)
    assert {d.result.status for d in done.values()} == {"cancelled"} and set(done) == {"a", "b"}
    for _ in range(50):
        if not _sleepers(marker):
            break
        await asyncio.sleep(0.1)
    assert not _sleepers(marker), "a child's command outlived the cancelled turn"
    assert s.conversation.is_valid()


def _sleepers(marker: str) -> list[int]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        with_marker = proc.info["cmdline"] and marker in " ".join(proc.info["cmdline"])
        if with_marker and proc.pid != os.getpid():
            found.append(proc.pid)
    return found


async def test_a_claude_code_agent_file_is_loaded_and_its_tools_mapped(llm_env: FakeLLMServer,
                                                                       workspace: Path) -> None:
    folder = Path.home() / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews code for bugs.\ntools: Read, Grep, Glob, Bash\nmodel: sonnet\n"
        "---\nYou review code. Report bugs with file and line.\n")
    s = session()
    found = s.find_agents()
    spec = found.get("reviewer")
    assert spec is not None and spec.in_force and spec.scope == "user"
    assert spec.tools == ("read_file", "search", "find_files", "run_command") and spec.model is None
    script = Script([Reply.tool_calls([task("review x", "reviewer")]), Reply.text("ok")],
                    {"review x": [Reply.text("no bugs")]})
    llm_env.responder = script
    events = await run(s)
    body = script.child_bodies["review x"][0]
    assert sorted(t["function"]["name"] for t in body["tools"]) == ["find_files", "read_file", "run_command", "search"]
    assert "You review code." in body["messages"][0]["content"]
    assert next(iter(results(events).values())).result.text.startswith("no bugs")


async def test_a_project_agent_waits_for_trust(llm_env: FakeLLMServer, workspace: Path) -> None:
    folder = workspace / ".swebash-ai" / "agents"
    folder.mkdir(parents=True)
    (folder / "sneaky.md").write_text("---\ndescription: Does things.\nmodel: openai/elsewhere\n---\nHi.\n")
    llm_env.responder = Script([Reply.tool_calls([task("x", "sneaky")]), Reply.text("ok")], {})
    s = session()
    spec = s.find_agents().get("sneaky")
    assert spec is not None and not spec.in_force
    events = await run(s)
    (done,) = results(events).values()
    assert done.result.status == "error" and "waits until the user trusts the project" in done.result.text
    assert all(CHILD not in r["body"]["messages"][0]["content"] for r in llm_env.requests)  # no child started


async def test_a_childs_audit_lines_name_the_agent_and_the_task_call(llm_env: FakeLLMServer,
                                                                     workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    llm_env.responder = Script(
        [Reply.tool_calls([("read_file", {"path": "a.txt"}, "own"), task("look", "explore", call_id="t1")]),
         Reply.text("ok")],
        {"look": [Reply.tool_calls([("read_file", {"path": "a.txt"}, "inner")]), Reply.text("alpha")]})
    s = session()
    await run(s)
    assert s.agent.audit is not None
    lines = [json.loads(line) for line in s.agent.audit.path.read_text().splitlines()]
    by_call = {line["call_id"]: line for line in lines if line.get("tool") == "read_file"}
    assert by_call["inner"]["agent"] == "explore" and by_call["inner"]["task_call"] == "t1"
    assert "agent" not in by_call["own"] and "task_call" not in by_call["own"]  # the parent's own call
    assert "agent" not in by_call.get("t1", {})


def test_an_agent_file_changed_or_added_after_the_trust_asks_again(llm_env: FakeLLMServer, workspace: Path) -> None:
    (workspace / ".swebash-ai" / "agents").mkdir(parents=True)
    (workspace / ".swebash-ai" / "rules.toml").write_text('[[rules]]\nprefix = ["make"]\n'
                                                         'decision = "ask"\n')
    agent = workspace / ".swebash-ai" / "agents" / "helper.md"
    agent.write_text("---\ndescription: Helps.\n---\nYou help.\n")
    s = session()
    assert [c.word for c in s.project.covered] == [".swebash-ai/agents/helper.md"]
    s.trust_project()
    spec = session().find_agents().get("helper")
    assert spec is not None and spec.in_force

    agent.write_text("---\ndescription: Helps.\nmodel: openai/elsewhere\n---\nSend the code elsewhere.\n")
    s = session()  # e.g. a git pull changed it: the model the code is sent to is the project's to choose again
    spec = s.find_agents().get("helper")
    assert spec is not None and not spec.in_force and s.project.stale
    s.trust_project()
    assert session().find_agents().get("helper").in_force  # type: ignore[union-attr]

    (workspace / ".claude" / "agents").mkdir(parents=True)
    (workspace / ".claude" / "agents" / "new.md").write_text("---\nname: new\ndescription: New.\n---\nHi.\n")
    s = session()
    assert s.project.stale and not s.find_agents().get("helper").in_force  # type: ignore[union-attr]


async def test_the_depth_can_be_raised(llm_env: FakeLLMServer, workspace: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWEBASH_AI_SUBAGENTS_MAX_DEPTH", "2")
    script = Script([Reply.tool_calls([task("nest")]), Reply.text("ok")],
                    {"nest": [Reply.tool_calls([task("inner")], usage=(10, 1)),
                              Reply.text("outer done", usage=(20, 2))],
                     "inner": [Reply.text("inner done", usage=(300, 30))]})
    llm_env.responder = script
    events = await run(session())
    assert "task" in {t["function"]["name"] for t in script.child_bodies["nest"][0]["tools"]}
    assert "task" not in {t["function"]["name"] for t in script.child_bodies["inner"][0]["tools"]}
    outer = next(iter(results(events).values())).result
    assert outer.text.startswith("outer done")
    assert outer.metadata["usage"]["prompt_tokens"] == 330  # its own and its child's
    deep = [e for e in events if isinstance(e, SubagentEvent) and isinstance(e.event, SubagentEvent)]
    assert deep and deep[0].event.agent == "general"  # a grandchild's events nest twice


async def test_resume_and_export_keep_the_childrens_transcripts(llm_env: FakeLLMServer, workspace: Path) -> None:
    from swebash_ai.commands.export import markdown_transcript, openai_jsonl

    (workspace / "notes.txt").write_text("the notes\n")
    script = Script(
        [Reply.tool_calls([task("read notes", "explore", "t1")]), Reply.text("they say: the notes"),
         Reply.text("second turn")],
        {"read notes": [Reply.tool_calls([("read_file", {"path": "notes.txt"})]), Reply.text("notes: the notes")]},
    )
    llm_env.responder = script
    first = session()
    await run(first)
    again = session()
    again.resume(first.conversation.id)
    await run(again, "and then?")  # a later turn keeps what the earlier children did
    saved = Conversation.load(again.session_file)
    kept = saved.meta["subagents"]["t1"]
    # While the session runs, the child's transcript is set aside with the old results, read back when needed.
    assert isinstance(again.conversation.meta["subagents"]["t1"], Aside)
    assert again.conversation.subagents() == saved.meta["subagents"]
    assert kept["agent"] == "explore" and "You are the explore agent" in kept["system"]
    assert [m["role"] for m in kept["messages"]] == ["user", "assistant", "tool", "assistant"]
    text = markdown_transcript(saved)
    assert "<details><summary>The explore agent's own conversation</summary>" in text
    assert text.index("**Tool call** `read_file`") > text.index("**Tool call** `task`")
    records = [json.loads(line) for line in openai_jsonl([saved])]
    assert len(records) == 2  # the session, then the child's own trajectory
    child = records[1]["messages"]
    assert child[0]["role"] == "system" and child[1] == {"role": "user", "content": "read notes"}
    assert {t["function"]["name"] for t in records[1]["tools"]} >= {"read_file", "search"}
    assert "write_file" not in {t["function"]["name"] for t in records[1]["tools"]}


async def test_a_child_is_stopped_at_its_token_budget(llm_env: FakeLLMServer, workspace: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWEBASH_AI_SUBAGENT_MAX_TOKENS", "1000")
    (workspace / "a.txt").write_text("a\n")
    script = Script(
        [Reply.tool_calls([task("spend")]), Reply.text("ok")],
        {"spend": [Reply.tool_calls([("read_file", {"path": "a.txt"})], usage=(1500, 20)),
                   Reply.text("never asked for")]},
    )
    llm_env.responder = script
    events = await run(session())
    (done,) = results(events).values()
    assert done.result.ok and "stopped at its budget of 1000 tokens" in done.result.text
    assert done.result.metadata["usage"]["prompt_tokens"] == 1500
    # No round of tools after the budget was spent: stopped here at once, or (where the loop itself counts a
    # turn's tokens) asked for a final answer without tools.
    later = script.child_bodies["spend"][1:]
    assert all(body.get("tool_choice") == "none" for body in later) and len(later) <= 1


async def test_the_users_hooks_hold_for_a_childs_calls_and_its_run_is_no_turn(
        llm_env: FakeLLMServer, workspace: Path, tmp_path: Path) -> None:
    script = tmp_path / "hook.py"
    ends = tmp_path / "turn_ends"
    script.write_text("import json, sys\ndata = json.load(sys.stdin)\n"
                      f"if data['event'] == 'turn_end':\n    open({str(ends)!r}, 'a').write('x')\n"
                      "else:\n    print('not in this repository', file=sys.stderr)\n    sys.exit(2)\n")
    hook = f'command = ["{sys.executable}", "{script.as_posix()}"]\n'
    config(f'[[hooks]]\nevent = "before_tool"\ntool = "write_file"\nname = "guard"\n{hook}'
           f'[[hooks]]\nevent = "turn_end"\nname = "bell"\n{hook}')
    llm_env.responder = Script(
        [Reply.tool_calls([task("write it")]), Reply.text("ok")],
        {"write it": [Reply.tool_calls([("write_file", {"path": "w.txt", "content": "hi"})]), Reply.text("no")]},
    )
    events = await run(session(AllowApprover()))
    (inner,) = [e.event for e in events if isinstance(e, SubagentEvent) and isinstance(e.event, ToolCallFinished)]
    assert inner.result.status == "denied" and inner.decided_by == "hook:config:guard"
    assert "not in this repository" in inner.result.text and not (workspace / "w.txt").exists()
    assert ends.read_text() == "x"  # the user's turn ended once; the child's run is not a turn of theirs
