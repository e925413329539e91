"""Telemetry end to end: a one-shot with ``SWEBASH_AI_TELEMETRY=otlp`` sends OTLP/HTTP to a loopback receiver
that decodes what arrives with the official protobuf messages; a collector that is down costs one warning."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

pytest.importorskip("opentelemetry.proto")

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


class _Receiver(BaseHTTPRequestHandler):
    received: list[tuple[str, bytes]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        self.server.received.append((self.path, body))  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    server.received = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()


def _attrs(kvs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in kvs:
        value = kv.value
        out[kv.key] = getattr(value, value.WhichOneof("value")) if value.WhichOneof("value") else None
    return out


def test_spans_and_metrics_reach_the_collector(llm_env: FakeLLMServer, run_cli: Any, workspace: Path,
                                               collector: ThreadingHTTPServer) -> None:
    (workspace / "notes.txt").write_text("the launch code is 0000\n")
    llm_env.enqueue(
        Reply.tool_calls([("read_file", {"path": "notes.txt"})], usage=(100, 7)),
        Reply.text("It holds a code.", usage=(200, 4)),
    )
    endpoint = f"http://127.0.0.1:{collector.server_address[1]}"
    res = run_cli("-c", "what is in notes.txt?", env={
        "SWEBASH_AI_TELEMETRY": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_SERVICE_NAME": "sw-test"})
    assert res.returncode == 0, res.stderr
    received: list[tuple[str, bytes]] = collector.received  # type: ignore[attr-defined]
    traces = [body for path, body in received if path == "/v1/traces"]
    metrics = [body for path, body in received if path == "/v1/metrics"]
    assert traces and metrics, [path for path, _ in received]
    spans: dict[str, Any] = {}
    for body in traces:
        request = ExportTraceServiceRequest.FromString(body)
        for rs in request.resource_spans:
            assert _attrs(rs.resource.attributes)["service.name"] == "sw-test"
            for ss in rs.scope_spans:
                for span in ss.spans:
                    spans[span.name] = span
    assert {"invoke_agent swebash-ai", "chat openai/fake-model", "execute_tool read_file"} <= set(spans)
    tool = _attrs(spans["execute_tool read_file"].attributes)
    assert tool["gen_ai.tool.name"] == "read_file" and tool["swebash.tool.status"] == "ok"
    assert spans["execute_tool read_file"].parent_span_id == spans["invoke_agent swebash-ai"].span_id
    turn = _attrs(spans["invoke_agent swebash-ai"].attributes)
    assert (turn["gen_ai.usage.input_tokens"], turn["gen_ai.usage.output_tokens"]) == (300, 11)
    everything = b"".join(body for _, body in received)
    assert b"launch code" not in everything and b"notes.txt" not in everything  # no contents, no arguments
    names = set()
    for body in metrics:
        for rm in ExportMetricsServiceRequest.FromString(body).resource_metrics:
            for sm in rm.scope_metrics:
                names.update(m.name for m in sm.metrics)
    assert {"swebash.tool.calls", "swebash.model.requests", "gen_ai.client.token.usage"} <= names


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_down_collector_costs_one_warning_and_nothing_else(llm_env: FakeLLMServer, run_cli: Any) -> None:
    llm_env.enqueue(Reply.text("Fine."))
    res = run_cli("-c", "hi", env={"SWEBASH_AI_TELEMETRY": "otlp",
                                   "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{_closed_port()}"},
                  timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "Fine.\n"
    assert "Traceback" not in res.stderr
    assert res.stderr.count("telemetry: could not export") == 1, res.stderr  # one warning, not one per batch


def test_telemetry_off_loads_no_opentelemetry(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                              workspace: Path) -> None:
    llm_env.enqueue(Reply.text("Fine."))
    # The modules are listed by an exit handler: the entry leaves through os._exit once its handlers ran.
    code = ("import atexit, json, runpy, sys\n"
            "atexit.register(lambda: print(json.dumps(sorted(m for m in sys.modules if m.startswith('opentelemetry'))),"
            " file=sys.stderr))\n"
            "sys.argv = ['swebash-ai', '-c', 'hi']\n"
            "runpy.run_module('swebash_ai', run_name='__main__')\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=workspace, env=cli_env, stdin=subprocess.DEVNULL, timeout=60)
    assert res.stdout == "Fine.\n", res.stderr
    assert json.loads(res.stderr.strip().splitlines()[-1]) == []
