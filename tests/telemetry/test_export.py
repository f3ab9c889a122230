"""Configured, spans and metrics leave over OTLP; not configured, nothing of OpenTelemetry
is even imported; a model's answer counts its tokens."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from plugyard import CallRequest, Settings, Yard, telemetry
from plugyard.errors import PlugyardError
from plugyard.llm import wire
from plugyard.llm.types import ChatRequest, Message
from plugyard.telemetry import TelemetrySettings

from .conftest import Recorded
from .test_calls import POLICY, math_yard

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from governance.governed import governed

ROOT = Path(__file__).resolve().parents[2]


class Collector(ThreadingHTTPServer):
    """An OTLP/HTTP receiver on loopback: keeps each request body by path."""

    def __init__(self) -> None:
        self.bodies: dict[str, list[bytes]] = {}
        super().__init__(("127.0.0.1", 0), _Receive)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Receive(BaseHTTPRequestHandler):
    server: Collector

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.bodies.setdefault(self.path, []).append(body)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        del format, args


@pytest.fixture
def collector() -> Iterator[Collector]:
    server = Collector()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_configured_export_sends_spans_and_metrics_over_otlp_http(collector: Collector) -> None:
    settings = TelemetrySettings(enabled=True, endpoint=collector.url, service_name="yard-a")
    previous = telemetry.install(None)
    try:
        configured = telemetry.configure(settings)
        assert configured is not None and telemetry.configure(settings) is configured  # once
        gov = governed(*math_yard(), POLICY)  # type: ignore[arg-type]
        assert gov.call("math", "add", {"a": 1, "b": 2}, roles=("reader",)).ok
        configured.shutdown()  # flushes the batch and the last metrics
    finally:
        telemetry.install(previous)
    traces = ExportTraceServiceRequest.FromString(b"".join(collector.bodies["/v1/traces"]))
    (resource,) = traces.resource_spans
    service = {a.key: a.value.string_value for a in resource.resource.attributes}
    assert service["service.name"] == "yard-a"
    (scope,) = resource.scope_spans
    assert scope.scope.name == "plugyard"
    assert [s.name for s in scope.spans] == ["execute_tool math"]
    metrics = ExportMetricsServiceRequest.FromString(collector.bodies["/v1/metrics"][-1])
    names = {m.name for r in metrics.resource_metrics for s in r.scope_metrics for m in s.metrics}
    assert {"plugyard.calls", "plugyard.call.duration"} <= names


def test_a_yard_built_from_the_environment_exports_its_calls(collector: Collector) -> None:
    env = {"PLUGYARD_OTEL_ENDPOINT": collector.url, "OTEL_SERVICE_NAME": "yard-b"}
    settings = Settings.from_env(env, database=":memory:", builtins=False)
    previous = telemetry.install(None)
    try:
        with Yard.from_settings(settings) as yard:
            assert yard.executor.step_names[0] == "trace"
            result = asyncio.run(yard.executor.call(CallRequest("nope")))
            assert result.error is not None and result.error.code == "plugin_not_found"
        configured = telemetry.active()
        assert configured is not None and configured.settings == settings.telemetry
        configured.shutdown()
    finally:
        telemetry.install(previous)
    traces = ExportTraceServiceRequest.FromString(b"".join(collector.bodies["/v1/traces"]))
    spans = [s for r in traces.resource_spans for ss in r.scope_spans for s in ss.spans]
    assert [s.name for s in spans] == ["execute_tool nope"]
    error = {a.key: a.value.string_value for a in spans[0].attributes}["error.type"]
    assert error == "plugin_not_found"


def test_settings_off_leave_telemetry_installed_in_code_in_force(otel: Recorded) -> None:
    assert telemetry.configure(TelemetrySettings()) is otel.telemetry
    assert telemetry.active() is otel.telemetry


def test_an_unknown_otlp_protocol_is_refused_at_start() -> None:
    with pytest.raises(PlugyardError) as caught:
        telemetry.configure(TelemetrySettings(enabled=True, protocol="http/json"))
    assert caught.value.code == "telemetry_unavailable"
    assert telemetry.active() is None


@pytest.mark.parametrize(
    ("env", "enabled", "endpoint", "protocol", "service", "subject"),
    [
        ({}, False, None, "http/protobuf", "plugyard", False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SERVICE_NAME": "s"},
         True, None, "http/protobuf", "s", False),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces",
          "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, True, None, "grpc", "plugyard", False),
        ({"PLUGYARD_OTEL_ENDPOINT": "http://c:4318", "OTEL_SERVICE_NAME": "s",
          "PLUGYARD_OTEL_SERVICE_NAME": "p", "PLUGYARD_OTEL_SUBJECT": "1"},
         True, "http://c:4318", "http/protobuf", "p", True),
        ({"PLUGYARD_OTEL_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"},
         False, "http://c:4318", "http/protobuf", "plugyard", False),
    ],
)  # fmt: skip
def test_settings_follow_the_opentelemetry_variables(
    env: dict[str, str], enabled: bool, endpoint: str | None, protocol: str, service: str,
    subject: bool,
) -> None:  # fmt: skip
    settings = TelemetrySettings.from_env(env)
    assert (settings.enabled, settings.endpoint, settings.protocol) == (enabled, endpoint, protocol)
    assert (settings.service_name, settings.record_subject) == (service, subject)


def test_without_configuration_nothing_of_opentelemetry_is_imported() -> None:
    code = """
import asyncio, os, sys
for name in [n for n in os.environ if n.startswith(("OTEL_", "PLUGYARD_OTEL"))]:
    del os.environ[name]
from plugyard.yard import Settings, Yard
with Yard.from_settings(Settings(database=":memory:", builtins=False)) as yard:
    assert "trace" not in yard.executor.step_names
    asyncio.run(yard.executor.call(__import__("plugyard").CallRequest("nope")))
print(sorted(n for n in sys.modules if n.startswith("opentelemetry")))
"""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(Path.home())}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_model_answer_counts_its_input_and_output_tokens(otel: Recorded) -> None:
    request = ChatRequest((Message("user", "hi"),))
    payload = {"model": "m1", "choices": [{"message": {"content": "yo"}}],
               "usage": {"prompt_tokens": 7, "completion_tokens": 3}}  # fmt: skip
    wire.answer_from(payload, request, model="m1", duration_ms=1.0)
    wire.answer_from({**payload, "usage": None}, request, model="m1", duration_ms=1.0)
    chunk = {"model": "m1", "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}}
    assert wire.delta_from(chunk) is not None
    points = {a["gen_ai.token.type"]: p for a, p in otel.points("gen_ai.client.token.usage")}
    assert {a["gen_ai.request.model"] for a, _ in otel.points("gen_ai.client.token.usage")} == {
        "m1"
    }
    assert (points["input"].count, points["input"].sum) == (2, 12)  # the unreported one: none
    assert (points["output"].count, points["output"].sum) == (2, 5)
