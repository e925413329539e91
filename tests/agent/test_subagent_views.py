"""A helper agent's work as each front end and observer shows it: nested under the ``task`` call."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.agent import events as ev
from swebash_ai.config.agents import parse_agent
from swebash_ai.frontends.oneshot_render import PlainRenderer, event_to_json
from swebash_ai.observe.recorder import TurnRecorder
from swebash_ai.tools.registry import ToolResult


def child_run(call_id: str = "t1", agent: str = "explore") -> list[ev.AgentEvent]:
    inner: list[ev.AgentEvent] = [
        ev.ToolCallStarted("c1", "read_file", {"path": "a.py"}, "read a.py"),
        ev.Usage(50, 5, 0.001),
        ev.ModelRequest("openai/small", 0.1, tool_calls=1),
        ev.ToolCallFinished("c1", "read_file", ToolResult.success("text"), "read-only"),
        ev.ToolCallStarted("c2", "write_file", {"path": "b.py"}, "write b.py"),
        ev.ToolCallFinished("c2", "write_file", ToolResult.error("Unknown tool 'write_file'."), "unknown_tool"),
        ev.Usage(70, 9, 0.002),
        ev.ModelRequest("openai/small", 0.1),
        ev.TurnFinished("found it", "answered"),
    ]
    return [
        ev.ToolCallStarted(call_id, "task", {"description": "look", "prompt": "p"}, f"{agent} agent: look"),
        *(ev.SubagentEvent(call_id, agent, e) for e in inner),
        ev.ToolCallFinished(call_id, "task", ToolResult.success("found it\n\n[explore agent: ...]"), "tool.no_policy"),
    ]


def test_json_nests_a_childs_events_under_its_task_call() -> None:
    lines = [event_to_json(e) for e in child_run()]
    nested = [x for x in lines if x is not None and x["type"] == "subagent"]
    assert {x["id"] for x in nested} == {"t1"} and {x["agent"] for x in nested} == {"explore"}
    kinds = [x["event"]["type"] for x in nested]
    assert kinds == ["tool_call", "usage", "tool_result", "tool_call", "tool_result", "usage", "final"]
    assert nested[2]["event"]["name"] == "read_file" and nested[-1]["event"]["text"] == "found it"
    failed = event_to_json(ev.SubagentEvent("t1", "general", ev.TurnFailed(__import__(
        "swebash_ai.errors", fromlist=["ProviderError"]).ProviderError("bad request"))))
    assert failed is not None and failed["event"]["type"] == "error" and failed["event"]["message"] == "bad request"
    json.dumps(lines)  # every line is JSON


def test_one_shot_prints_a_childs_progress_on_stderr_only() -> None:
    out, err = io.StringIO(), io.StringIO()
    renderer = PlainRenderer(out, err)
    for event in child_run():
        renderer.handle(event, None)  # type: ignore[arg-type]
    assert out.getvalue() == ""  # the child's answer is the parent's to use, not the person's
    lines = err.getvalue().splitlines()
    assert any(line.strip().startswith("[explore] ✓ read a.py") for line in lines), lines
    assert any("[explore] ✗ write b.py" in line for line in lines), lines
    assert lines[-1].startswith("✓ explore agent: look")


def test_turn_statistics_count_each_agent(tmp_path: Path) -> None:
    recorder = TurnRecorder(tmp_path / "turns.jsonl", "s1", "openai/big")
    for event in [*child_run(), ev.Usage(10, 1), ev.ModelRequest("openai/big", 0.2), ev.TurnFinished("ok")]:
        recorder.on_event(event)
    recorder.end_turn()
    line = json.loads((tmp_path / "turns.jsonl").read_text())
    assert line["agents"] == {"explore": {"runs": 1, "requests": 2, "tool_calls": 2, "prompt_tokens": 120,
                                          "completion_tokens": 14, "cost": pytest.approx(0.003)}}
    assert line["prompt_tokens"] == 130 and line["completion_tokens"] == 15  # the child's tokens are the turn's
    assert len(line["requests"]) == 1  # the turn's own requests


def test_telemetry_nests_a_childs_spans_under_the_turn() -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from swebash_ai.config.settings import Settings
    from swebash_ai.observe.otel import build_observer

    spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
    obs = build_observer(Settings(), "openai/big", span_processor=SimpleSpanProcessor(spans), metric_reader=reader)
    for event in [*child_run(), ev.ModelRequest("openai/big", 0.2), ev.TurnFinished("ok")]:
        obs.on_event(event)
    finished = spans.get_finished_spans()
    by_name: dict[str, Any] = {s.name: s for s in finished}
    turn, child = by_name["invoke_agent swebash-ai"], by_name["invoke_agent explore"]
    assert child.parent is not None and child.parent.span_id == turn.context.span_id
    inner = [s for s in finished if s.parent is not None and s.parent.span_id == child.context.span_id]
    assert sorted(s.name for s in inner) == ["chat openai/small", "chat openai/small", "execute_tool read_file",
                                             "execute_tool write_file"]
    assert (child.attributes or {})["gen_ai.usage.input_tokens"] == 120
    assert by_name["execute_tool task"].parent.span_id == turn.context.span_id
    data = reader.get_metrics_data()
    assert data is not None
    calls = [p for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics
             if m.name == "swebash.tool.calls" for p in m.data.data_points]
    by_agent: dict[str, float] = {}
    for point in calls:
        name = str(point.attributes["gen_ai.agent.name"])
        by_agent[name] = by_agent.get(name, 0) + point.value
    assert by_agent == {"explore": 2, "swebash-ai": 1}


@pytest.mark.parametrize(("text", "tools", "disallowed", "mode", "turns"), [
    ("---\nname: rev\ndescription: Reviews.\ntools: [Read, Grep, WebFetch]\ndisallowedTools: Bash\n"
     "permissionMode: plan\nmaxTurns: 4\n---\nBody", ("read_file", "search", "fetch_url"), ("run_command",), "plan", 4),
    ("---\ndescription: Reviews.\nmode: subagent\ntools:\n  write: false\n  bash: true\npermission:\n  edit: deny\n"
     "maxSteps: 7\n---\nBody", None, ("write_file", "edit_file"), None, 7),
])
def test_peer_formats_map_to_our_tools(text: str, tools: Any, disallowed: Any, mode: Any, turns: int) -> None:
    spec = parse_agent(text, Path("/x/rev.md"), "user", frozenset({"read_file", "search", "fetch_url", "run_command",
                                                                  "write_file", "edit_file"}))
    assert not isinstance(spec, str), spec
    assert spec.name == "rev" and spec.tools == tools and spec.disallowed == disallowed
    assert spec.mode == mode and spec.max_turns == turns and spec.prompt == "Body"


@pytest.mark.parametrize(("text", "why"), [
    ("no front matter", "no front matter"),
    ("---\nname: x\n---\nbody", "no description"),
    ("---\ndescription: [unclosed\n---\n", "not valid YAML"),
    ("---\ndescription: d\nmaxTurns: 0\n---\n", "max_turns"),
    ("---\nname: Bad Name!\ndescription: d\n---\n", "not a usable name"),
])
def test_a_bad_agent_file_says_why(text: str, why: str) -> None:
    got = parse_agent(text, Path("/x/a.md"), "user")
    assert isinstance(got, str) and why in got


def test_an_unknown_tool_name_is_reported_never_allowed() -> None:
    spec = parse_agent("---\ndescription: d\ntools: Read, Teleport\n---\n", Path("/x/a.md"), "user",
                       frozenset({"read_file"}))
    assert not isinstance(spec, str) and spec.tools == ("read_file",)
    assert spec.notes == ("unknown tool 'Teleport' ignored",)


def test_swebash_ai_agents_lists_each_agent_and_where_it_comes_from(workspace: Path) -> None:
    from swebash_ai.commands.agents import run_agents
    from swebash_ai.config.settings import load_settings

    user = Path.home() / ".config" / "swebash-ai" / "agents"
    mine = Path(__import__("os").environ["SWEBASH_AI_HOME"]) / "agents"
    for folder in (user, mine):
        folder.mkdir(parents=True, exist_ok=True)
    (mine / "tester.md").write_text("---\ndescription: Runs the tests.\ntools: run_command, read_file\n---\nRun.\n")
    project = workspace / ".claude" / "agents"
    project.mkdir(parents=True)
    (project / "helper.md").write_text("---\nname: helper\ndescription: Helps.\ntools: Read, Zap\n---\nHi\n")
    (project / "broken.md").write_text("no front matter here")
    out = io.StringIO()
    assert run_agents(load_settings(), workspace, out=out) == 0
    text = out.getvalue()
    assert "explore  [built-in]" in text and "general  [built-in]" in text
    assert f"tester  [user: {mine / 'tester.md'}]" in text and "tools: run_command, read_file" in text
    assert "helper  [project: " in text and "waits until the project is trusted" in text
    assert "note: unknown tool 'Zap' ignored" in text
    assert f"! Agent file {project / 'broken.md'} is not used: it has no front matter" in text
    out = io.StringIO()
    run_agents(load_settings(), workspace, as_json=True, out=out)
    listed = {a["name"]: a for a in json.loads(out.getvalue())["agents"]}
    assert listed["helper"]["in_force"] is False and listed["tester"]["in_force"] is True


def test_at_agent_name_asks_for_that_agent(llm_env: Any, workspace: Path) -> None:
    from swebash_ai.config.settings import load_settings
    from swebash_ai.session import Session

    session = Session(load_settings(), probe_ollama=False)
    prepared = session.prepare("@explore where is the parser?")
    assert prepared.text.startswith("@explore where is the parser?")
    assert 'asks for the agent "explore" by name' in prepared.text and not prepared.notices
    (workspace / "general").mkdir()  # a folder of that name: the mention is the folder, not the agent
    assert "asks for the agent" not in session.prepare("look in @general please").text
    assert "asks for the agent" not in session.prepare("mail me@explore.com").text


async def test_acp_sends_a_childs_calls_as_calls_under_the_task(tmp_path: Path) -> None:
    from swebash_ai.frontends.acp.updates import TurnUpdates

    sent: list[Any] = []

    async def send(update: Any) -> None:
        sent.append(update)

    updates = TurnUpdates(send, tmp_path)
    for event in child_run():
        await updates.handle(event)
    starts = [u for u in sent if getattr(u, "session_update", "") == "tool_call"]
    assert [(u.tool_call_id, u.title) for u in starts] == [
        ("t1", "explore agent: look"), ("t1/c1", "[explore] read a.py"), ("t1/c2", "[explore] write b.py")]
    ends = {u.tool_call_id: u.status for u in sent if getattr(u, "session_update", "") == "tool_call_update"}
    assert ends == {"t1/c1": "completed", "t1/c2": "failed", "t1": "completed"}
    assert not [u for u in sent if getattr(u, "session_update", "") == "agent_message_chunk"]  # not the answer
    assert not updates.open
