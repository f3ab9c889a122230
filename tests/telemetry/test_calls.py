"""A call is one ``execute_tool`` span with its outcome, and the call metrics count it."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from plugyard import telemetry
from plugyard.execution.executor import CallRequest, Executor
from plugyard.manifest.model import Operation
from plugyard.runtimes.base import CallContext, Outcome, Progress

from .conftest import Recorded, recording

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from execution.conftest import FunctionRuntime, Table, descriptor
from governance.governed import Governed, governed

POLICY = """
subjects: {bob: {roles: [reader]}}
grants:
  - {to: "role:reader", plugin: math, operation: add, effect: allow}
  - {to: "role:reader", plugin: math, operation: boom, effect: allow}
"""
ADD = Operation(id="add", parameters={"type": "object", "properties": {"a": {}, "b": {}}})


def math_yard() -> tuple[Table, FunctionRuntime]:
    table, runtime = Table(), FunctionRuntime()
    table.add(descriptor("math", ADD, Operation(id="boom")))
    runtime.functions[("math", "add")] = lambda a, b: a + b
    runtime.functions[("math", "boom")] = lambda: 1 / 0
    return table, runtime


@pytest.fixture
def gov(otel: Recorded) -> Governed:
    del otel  # in force before the executor is built: it takes the tracer then
    return governed(*math_yard(), POLICY)  # type: ignore[arg-type]


def test_a_governed_call_is_one_span_with_its_plugin_operation_runtime_and_outcome(
    otel: Recorded, gov: Governed
) -> None:
    result = gov.call("math", "add", {"a": 2, "b": 3}, roles=("reader",))
    assert result.status == "success"
    (span,) = otel.spans()
    assert span.name == "execute_tool math"
    assert span.kind == SpanKind.INTERNAL
    attributes = dict(span.attributes or {})
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["gen_ai.tool.name"] == "math"
    assert attributes["gen_ai.tool.call.id"] == "req"
    assert attributes["plugyard.operation"] == "add"
    assert attributes["plugyard.runtime"] == "python"
    assert attributes["plugyard.status"] == "success"
    # The result's cost rounds to the µs; the span keeps the same figure unrounded.
    assert abs(attributes["plugyard.duration_ms"] - result.cost["duration_ms"]) <= 0.0005
    assert "error.type" not in attributes
    assert "enduser.id" not in attributes  # the subject is off by default
    assert span.status.status_code == StatusCode.UNSET


def test_a_refused_call_carries_its_error_code_and_marks_the_span_failed(
    otel: Recorded, gov: Governed
) -> None:
    denied = gov.call("math", "add", {"a": 1, "b": 1}, subject="eve", roles=())
    assert denied.error is not None and denied.error.code == "permission_denied"
    failed = gov.call("math", "boom", roles=("reader",))
    assert failed.error is not None and failed.error.code == "plugin_error"
    first, second = otel.spans()
    assert first.attributes is not None and second.attributes is not None
    assert first.attributes["error.type"] == "permission_denied"
    assert second.attributes["error.type"] == "plugin_error"
    assert first.status.status_code == second.status.status_code == StatusCode.ERROR
    assert second.status.description == "plugin_error"


def test_the_subject_is_recorded_only_when_configured() -> None:
    for record_subject, expected in ((False, None), (True, "bob")):
        recorded = recording(record_subject=record_subject)
        previous = telemetry.install(recorded.telemetry)
        try:
            gov = governed(*math_yard(), POLICY)  # type: ignore[arg-type]
            assert gov.call("math", "add", {"a": 1, "b": 1}, roles=("reader",)).ok
        finally:
            telemetry.install(previous)
        (span,) = recorded.spans()
        assert (span.attributes or {}).get("enduser.id") == expected


def test_calls_errors_and_latency_are_counted_by_plugin_operation_status_and_code(
    otel: Recorded, gov: Governed
) -> None:
    for _ in range(3):
        gov.call("math", "add", {"a": 1, "b": 2}, roles=("reader",))
    gov.call("math", "boom", roles=("reader",))
    calls = {(a["gen_ai.tool.name"], a["plugyard.operation"], a["plugyard.status"]): p.value
             for a, p in otel.points("plugyard.calls")}  # fmt: skip
    assert calls == {("math", "add", "success"): 3, ("math", "boom", "error"): 1}
    errors = {(a["gen_ai.tool.name"], a["error.type"]): p.value
              for a, p in otel.points("plugyard.call.errors")}  # fmt: skip
    assert errors == {("math", "plugin_error"): 1}
    latency = {a["plugyard.operation"]: p for a, p in otel.points("plugyard.call.duration")}
    assert latency["add"].count == 3
    assert latency["add"].sum > 0
    assert latency["boom"].count == 1


def test_names_the_caller_made_up_never_become_metric_series(otel: Recorded, gov: Governed) -> None:
    for name in ("nope-1", "nope-2"):
        assert gov.call(name, "x", roles=("reader",)).error is not None
    unknown_op = gov.call("math", "nope", roles=("reader",))
    assert unknown_op.error is not None and unknown_op.error.code == "operation_not_found"
    calls = {(a["gen_ai.tool.name"], a["plugyard.operation"]): p.value
             for a, p in otel.points("plugyard.calls")}  # fmt: skip
    assert calls == {("_OTHER", "_OTHER"): 2, ("math", "_OTHER"): 1}
    # The span still says what was asked for: it is one call's record, not a series.
    assert [s.attributes["gen_ai.tool.name"] for s in otel.spans() if s.attributes] == [
        "nope-1", "nope-2", "math"]  # fmt: skip


def test_a_streamed_call_is_traced_like_a_plain_one(otel: Recorded) -> None:
    table, runtime = math_yard()

    async def counting(n: int) -> Any:
        for i in range(n):
            yield Progress(message=str(i))
        yield Outcome(data={"counted": n})

    table.add(descriptor("counter", Operation(id="count", streaming=True)))
    runtime.functions[("counter", "count")] = lambda n: counting(n)
    executor = Executor(table, {"python": runtime})

    async def drain() -> list[Any]:
        request = CallRequest("counter", "count", {"n": 2}, CallContext("s1"))
        return [item async for item in executor.stream(request)]

    items = asyncio.run(drain())
    assert len(items) == 3
    (span,) = otel.spans()
    assert span.attributes is not None
    assert span.attributes["plugyard.status"] == "success"
    assert span.attributes["gen_ai.tool.call.id"] == "s1"


def test_an_executor_built_while_telemetry_is_off_has_no_tracer() -> None:
    assert telemetry.active() is None
    table, runtime = math_yard()
    assert "trace" not in Executor(table, {"python": runtime}).step_names
