"""OpenTelemetry export (opt-in: ``SWEBASH_AI_TELEMETRY=otlp``): traces and metrics of turns, model requests,
tool calls and approval decisions, over OTLP/HTTP with the official SDK.

Imported only when telemetry is on: a one-shot without it never loads OpenTelemetry. The observer builds its
own tracer and meter providers (it does not touch the process-wide globals a host application may own) and
reads the standard ``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_HEADERS`` / ``OTEL_SERVICE_NAME``.

Spans follow the GenAI semantic conventions where they apply: ``invoke_agent`` for a turn, ``chat {model}``
for each model request (``gen_ai.request.model``, ``gen_ai.usage.input_tokens``/``output_tokens``,
``gen_ai.usage.cache_read.input_tokens``), ``execute_tool {name}`` for each call (``gen_ai.tool.name``,
``gen_ai.tool.call.id``) with the tool's status and who decided (``swebash.decision.by``). Never exported:
prompt text, file contents, command output, tool arguments; a command line only with
``SWEBASH_AI_TELEMETRY_LOG_COMMANDS=true``, redacted like the audit log.

A collector that is down or slow must not slow the session: spans are batched on a background thread with a
bounded queue, each export has a 2 s timeout, exit waits at most a few seconds, and a failed export is
reported once (one warning), not per batch.
"""

from __future__ import annotations

import copy
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Span, Status, StatusCode

from swebash_ai import __version__
from swebash_ai.agent import events as ev
from swebash_ai.config.settings import Settings
from swebash_ai.safety.redact import redact_text

log = logging.getLogger(__name__)

EXPORT_TIMEOUT = 2.0
"""Seconds one export request may take (the exporters' own default is 10)."""
EXIT_BUDGET = 3.0
"""Seconds the end of a session may wait for the last batch."""


class _OnceWarning:
    """Turns the exporters' per-batch failures into one warning for the whole session."""

    def __init__(self) -> None:
        self.failed = False
        self._lock = threading.Lock()

    def note(self, what: str, result: object) -> None:
        with self._lock:
            if self.failed:
                return
            self.failed = True
        endpoint = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318")
        log.warning("telemetry: could not export %s to %s (%s); the session goes on without it", what, endpoint,
                    result)


class _WarnOnFailure(SpanExporter):
    def __init__(self, inner: SpanExporter, once: _OnceWarning) -> None:
        self.inner = inner
        self.once = once

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            result = self.inner.export(spans)
        except Exception as exc:  # an exporter bug must not reach the session's threads
            self.once.note("traces", exc)
            return SpanExportResult.FAILURE
        if result is not SpanExportResult.SUCCESS:
            self.once.note("traces", result.name)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


def _ns(monotonic_seconds_ago: float = 0.0) -> int:
    return time.time_ns() - int(monotonic_seconds_ago * 1e9)


class OtelObserver:
    """Spans and metrics from a session's events (see the module docstring for what is and is not sent)."""

    def __init__(self, tracer: trace.Tracer, meter: Any, *, model: str = "", log_commands: bool = False,
                 shutdown: Callable[[], None] | None = None) -> None:
        self.tracer = tracer
        self.model = model
        self.log_commands = log_commands
        self._shutdown = shutdown
        self._turn: Span | None = None
        self._turn_tokens = [0, 0, 0]  # input, output, of the input read from the provider's cache
        self._usage: list[int] = [0, 0, 0]
        self._tools: dict[str, tuple[int, str, dict[str, Any] | str]] = {}
        self._agent = "swebash-ai"
        self._children: dict[str, OtelObserver] = {}
        """Helper agents running under this turn's ``task`` calls, by call id: each has its own span."""
        self.tool_calls = meter.create_counter("swebash.tool.calls", unit="{call}",
                                               description="Tool calls by tool, status and who decided")
        self.tool_duration = meter.create_histogram("swebash.tool.duration", unit="s",
                                                    description="Tool call duration")
        self.requests = meter.create_counter("swebash.model.requests", unit="{request}",
                                             description="Model requests by model and outcome")
        self.request_duration = meter.create_histogram("gen_ai.client.operation.duration", unit="s",
                                                       description="Model request duration")
        self.tokens = meter.create_histogram("gen_ai.client.token.usage", unit="{token}",
                                             description="Tokens per model request, by type")
        self.decisions = meter.create_counter("swebash.approval.decisions", unit="{decision}",
                                              description="Approval decisions by decision and who decided")

    # --- the Observer protocol -----------------------------------------------------------------------
    def on_retry(self) -> None:
        if self._turn is not None:
            self._turn.add_event("retry")

    def on_event(self, event: ev.AgentEvent) -> None:
        if isinstance(event, ev.SubagentEvent):
            self._nested(event)
            return
        if self._turn is None and not isinstance(event, ev.TurnFinished | ev.TurnFailed):
            self._open_turn()
        if isinstance(event, ev.Usage):
            got = (event.prompt_tokens, event.completion_tokens, event.cached_tokens)
            self._usage = [a + b for a, b in zip(self._usage, got, strict=True)]
        elif isinstance(event, ev.ModelRequest):
            self._model_request(event)
        elif isinstance(event, ev.ToolCallStarted):
            self._tools[event.call_id] = (_ns(), event.name, event.arguments)
        elif isinstance(event, ev.ToolCallFinished):
            self._tool_finished(event)
        elif isinstance(event, ev.TurnFinished):
            self._end_turn(event.reason, ok=True)
        elif isinstance(event, ev.TurnFailed):
            self._end_turn("failed", ok=False, error=event.error.title)

    def _open_turn(self) -> None:
        self._turn = self.tracer.start_span("invoke_agent swebash-ai", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "swebash-ai"})
        self._turn_tokens = [0, 0, 0]

    def _nested(self, event: ev.SubagentEvent) -> None:
        """A helper agent's event: its requests and calls are spans under an ``invoke_agent NAME`` span, itself
        under this turn's; its metrics carry its name (``gen_ai.agent.name``)."""
        if self._turn is None:
            self._open_turn()
        child = self._children.get(event.call_id)
        if child is None:
            child = copy.copy(self)  # the same tracer and instruments
            child._children, child._tools, child._usage, child._shutdown = {}, {}, [0, 0, 0], None
            child._agent, child._turn_tokens = event.agent, [0, 0, 0]
            child._turn = self.tracer.start_span(f"invoke_agent {event.agent}", context=self._context(), attributes={
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": event.agent})
            self._children[event.call_id] = child
        child.on_event(event.event)
        if child._turn is None:
            del self._children[event.call_id]

    def end_turn(self) -> None:
        if self._turn is not None:
            self._end_turn("cancelled", ok=True)

    def close(self) -> None:
        self.end_turn()
        if self._shutdown is None:
            return
        # The exporters may wait on a dead collector: give them a bounded time on a side thread, never more.
        worker = threading.Thread(target=self._shutdown, name="telemetry-shutdown", daemon=True)
        worker.start()
        worker.join(EXIT_BUDGET)
        self._shutdown = None

    # --- spans and metrics -----------------------------------------------------------------------------
    def _context(self) -> Any:
        return trace.set_span_in_context(self._turn) if self._turn is not None else None

    def _model_request(self, event: ev.ModelRequest) -> None:
        model = event.model or self.model
        attrs: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model,
                                 "gen_ai.provider.name": model.split("/", 1)[0] if "/" in model else "openai"}
        prompt, completion, cached = self._usage
        self._usage = [0, 0, 0]
        # gen_ai.usage.cache_read.input_tokens is part of input_tokens, as the GenAI conventions say
        span = self.tracer.start_span(f"chat {model}", context=self._context(), start_time=_ns(event.seconds),
                                      attributes={**attrs, "gen_ai.usage.input_tokens": prompt,
                                                  "gen_ai.usage.output_tokens": completion,
                                                  "gen_ai.usage.cache_read.input_tokens": cached,
                                                  "swebash.tool_calls": event.tool_calls})
        if not event.ok:
            span.set_status(Status(StatusCode.ERROR, "the request failed or was cut"))
        span.end()
        self._turn_tokens = [self._turn_tokens[0] + prompt, self._turn_tokens[1] + completion,
                             self._turn_tokens[2] + cached]
        metric_attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model,
                        "gen_ai.agent.name": self._agent}
        self.requests.add(1, {**metric_attrs, "ok": event.ok})
        self.request_duration.record(event.seconds, metric_attrs)
        if prompt or completion:
            self.tokens.record(prompt, {**metric_attrs, "gen_ai.token.type": "input"})
            self.tokens.record(completion, {**metric_attrs, "gen_ai.token.type": "output"})

    def _tool_finished(self, event: ev.ToolCallFinished) -> None:
        started, name, arguments = self._tools.pop(event.call_id, (_ns(event.result.duration), event.name, {}))
        result = event.result
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": event.call_id,
            "swebash.tool.status": result.status,
            "swebash.decision.by": event.decided_by or "policy",
        }
        if result.exit_code is not None:
            attrs["swebash.exit_code"] = result.exit_code
        if self.log_commands and name == "run_command" and isinstance(arguments, dict):
            attrs["swebash.command"] = redact_text(str(arguments.get("command", "")))
        span = self.tracer.start_span(f"execute_tool {name}", context=self._context(), start_time=started,
                                      attributes=attrs)
        if not result.ok:
            span.set_status(Status(StatusCode.ERROR, result.status))
        span.end()
        metric_attrs = {"gen_ai.tool.name": name, "swebash.tool.status": result.status,
                        "gen_ai.agent.name": self._agent}
        self.tool_calls.add(1, {**metric_attrs, "swebash.decision.by": event.decided_by or "policy"})
        self.tool_duration.record(result.duration, metric_attrs)
        self.decisions.add(1, {"swebash.decision.by": event.decided_by or "policy", "gen_ai.tool.name": name})

    def _end_turn(self, reason: str, *, ok: bool, error: str = "") -> None:
        for child in list(self._children.values()):  # a helper still open when the turn ends was cut short
            child._end_turn("cancelled", ok=True)
        self._children.clear()
        span, self._turn = self._turn, None
        if span is None:
            return
        span.set_attribute("swebash.turn.reason", reason)
        span.set_attribute("gen_ai.usage.input_tokens", self._turn_tokens[0])
        span.set_attribute("gen_ai.usage.output_tokens", self._turn_tokens[1])
        span.set_attribute("gen_ai.usage.cache_read.input_tokens", self._turn_tokens[2])
        if not ok:
            span.set_status(Status(StatusCode.ERROR, error))
        span.end()


def build_observer(settings: Settings, model: str, *, span_processor: SpanProcessor | None = None,
                   metric_reader: MetricReader | None = None) -> OtelObserver:
    """An observer exporting over OTLP/HTTP, or to the given processor and reader (tests use in-memory ones)."""
    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME") or "swebash-ai",
                                "service.version": __version__})
    once = _OnceWarning()
    if span_processor is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        span_processor = BatchSpanProcessor(_WarnOnFailure(OTLPSpanExporter(timeout=EXPORT_TIMEOUT), once),
                                            max_queue_size=2048, schedule_delay_millis=2000,
                                            export_timeout_millis=int(EXPORT_TIMEOUT * 1000))
    if metric_reader is None:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

        metric_reader = PeriodicExportingMetricReader(OTLPMetricExporter(timeout=EXPORT_TIMEOUT),
                                                      export_interval_millis=30_000,
                                                      export_timeout_millis=int(EXPORT_TIMEOUT * 1000))
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(span_processor)
    meter_provider = MeterProvider(resource=resource, metric_readers=[metric_reader])
    # The exporters log every failed batch; the observer says it once (see _OnceWarning).
    for name in ("opentelemetry.exporter.otlp.proto.http", "opentelemetry.sdk"):
        logging.getLogger(name).setLevel(logging.CRITICAL)

    def shutdown() -> None:
        try:
            tracer_provider.shutdown()
        finally:
            meter_provider.shutdown(timeout_millis=int(EXPORT_TIMEOUT * 1000))

    return OtelObserver(tracer_provider.get_tracer("swebash_ai", __version__),
                        meter_provider.get_meter("swebash_ai", __version__), model=model,
                        log_commands=settings.telemetry_log_commands, shutdown=shutdown)


def telemetry_observer(settings: Settings, model: str) -> OtelObserver:
    """The session's telemetry observer, exporting over OTLP/HTTP."""
    return build_observer(settings, model)
