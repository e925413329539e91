"""OpenTelemetry export: spans, attributes and metrics from a session's events, with the SDK's in-memory
exporters; nothing secret (prompts, contents, output, arguments) in what is exported."""

from __future__ import annotations

from typing import Any

import pytest

from swebash_ai.agent import events as ev
from swebash_ai.config.settings import Settings
from swebash_ai.errors import ProviderError
from swebash_ai.tools.registry import ToolResult

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from swebash_ai.observe.otel import build_observer

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


def _observer(**settings: Any) -> tuple[Any, InMemorySpanExporter, InMemoryMetricReader]:
    spans = InMemorySpanExporter()
    reader = InMemoryMetricReader()
    obs = build_observer(Settings(**settings), "openai/gpt-test", span_processor=SimpleSpanProcessor(spans),
                         metric_reader=reader)
    return obs, spans, reader


def _turn(obs: Any) -> None:
    for event in (
        ev.TextDelta(f"reading the file that holds {SECRET}"),
        ev.ToolCallStarted("c1", "read_file", {"path": "notes.txt"}, "read notes.txt"),
        ev.ToolCallStarted("c2", "run_command", {"command": f"curl -H 'Authorization: Bearer {SECRET}' x"}, "curl"),
        ev.Usage(120, 8),
        ev.ModelRequest("openai/gpt-test", 0.25, tool_calls=2, ok=True, first_token_seconds=0.05),
        ev.ToolCallFinished("c1", "read_file", ToolResult.success(f"contents {SECRET}").with_duration(0.01),
                            "read-only"),
        ev.ToolCallFinished("c2", "run_command", ToolResult.denied("no").with_duration(0.0), "user"),
        ev.Usage(300, 5, cached_tokens=256),
        ev.ModelRequest("openai/gpt-test", 0.5, tool_calls=0, ok=True),
        ev.TurnFinished(f"the answer mentions {SECRET}", "answered"),
    ):
        obs.on_event(event)


def _points(reader: InMemoryMetricReader) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    data = reader.get_metrics_data()
    assert data is not None
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                found.setdefault(metric.name, []).extend(metric.data.data_points)
    return found


def test_a_turn_is_a_span_with_model_and_tool_children() -> None:
    obs, spans, reader = _observer()
    _turn(obs)
    finished = {s.name: s for s in spans.get_finished_spans()}
    assert set(finished) == {"invoke_agent swebash-ai", "chat openai/gpt-test", "execute_tool read_file",
                             "execute_tool run_command"}
    turn = finished["invoke_agent swebash-ai"]
    assert turn.attributes is not None and turn.attributes["swebash.turn.reason"] == "answered"
    assert turn.attributes["gen_ai.usage.input_tokens"] == 420 and turn.attributes["gen_ai.usage.output_tokens"] == 13
    chats = [s for s in spans.get_finished_spans() if s.name.startswith("chat ")]
    assert [(c.attributes or {}).get("gen_ai.usage.input_tokens") for c in chats] == [120, 300]
    # the GenAI conventions' cache-read count, a part of the input tokens, per request and per turn
    assert [(c.attributes or {}).get("gen_ai.usage.cache_read.input_tokens") for c in chats] == [0, 256]
    assert turn.attributes["gen_ai.usage.cache_read.input_tokens"] == 256
    assert all((c.attributes or {})["gen_ai.request.model"] == "openai/gpt-test" for c in chats)
    assert all(c.parent is not None and c.parent.span_id == turn.context.span_id for c in chats)
    tool = finished["execute_tool run_command"]
    attrs = dict(tool.attributes or {})
    assert attrs["gen_ai.tool.name"] == "run_command" and attrs["gen_ai.tool.call.id"] == "c2"
    assert attrs["swebash.tool.status"] == "denied" and attrs["swebash.decision.by"] == "user"
    assert "swebash.command" not in attrs  # command lines only when asked for
    assert tool.status.status_code.name == "ERROR"
    assert finished["execute_tool read_file"].status.status_code.name == "UNSET"
    # Nothing the model, a file or a command said is exported, anywhere.
    for span in spans.get_finished_spans():
        assert SECRET not in repr(dict(span.attributes or {})) + span.name + repr(span.events)
    points = _points(reader)
    assert sum(p.value for p in points["swebash.tool.calls"]) == 2
    assert sum(p.value for p in points["swebash.model.requests"]) == 2
    tokens = {p.attributes["gen_ai.token.type"]: p.sum for p in points["gen_ai.client.token.usage"]}
    assert tokens == {"input": 420, "output": 13}
    by = {p.attributes["swebash.decision.by"]: p.value for p in points["swebash.approval.decisions"]}
    assert by == {"read-only": 1, "user": 1}


def test_command_lines_only_on_request_and_redacted() -> None:
    obs, spans, _ = _observer(telemetry_log_commands=True)
    _turn(obs)
    (tool,) = [s for s in spans.get_finished_spans() if s.name == "execute_tool run_command"]
    command = str((tool.attributes or {})["swebash.command"])
    assert command.startswith("curl -H") and SECRET not in command


def test_a_failed_turn_and_a_cut_turn_still_end_their_spans() -> None:
    obs, spans, _ = _observer()
    obs.on_event(ev.ModelRequest("openai/gpt-test", 0.1, ok=False))
    obs.on_event(ev.TurnFailed(ProviderError("the server went away", title="Provider unreachable")))
    obs.on_event(ev.TextDelta("half"))
    obs.end_turn()  # Ctrl-C: the generator closed before TurnFinished
    turns = [s for s in spans.get_finished_spans() if s.name.startswith("invoke_agent")]
    assert [(t.attributes or {})["swebash.turn.reason"] for t in turns] == ["failed", "cancelled"]
    assert turns[0].status.status_code.name == "ERROR"
    (chat,) = [s for s in spans.get_finished_spans() if s.name.startswith("chat ")]
    assert chat.status.status_code.name == "ERROR"
