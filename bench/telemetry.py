"""What tracing costs a call: the bare ``add(a, b)`` call of bench/call_overhead.py with
telemetry off, and on over the OpenTelemetry SDK as export runs it (a batch span
processor and a metric reader) with an exporter that drops what it is given —
so the figure is plugyard's hook plus the SDK, not a network.

    bash scripts/bench.sh telemetry            # prints a table
    bash scripts/bench.sh telemetry --json     # the same as JSON
    bash scripts/bench.sh telemetry --profile 15   # where the time goes (cProfile)

Off and on run in alternating rounds in one process, so the machine's noise falls on
both alike. Two kinds of row split the cost: the ``trace`` step over the API's no-op
providers (plugyard's own part) and the SDK timed alone, doing per call what the step
asks of it (a span with the call's attributes; one histogram measurement). Beside the
latency it checks what was emitted: one span per call made, and the call counter equal
to the calls made.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import functools
import json
import pstats
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from call_overhead import build_plugyard
from opentelemetry.context import Context, get_current
from opentelemetry.metrics import Histogram, NoOpMeterProvider
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    InMemoryMetricReader,
    MetricExporter,
    MetricExportResult,
    MetricsData,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased
from opentelemetry.trace import NoOpTracerProvider, Tracer

from plugyard.execution.executor import CallRequest, Executor
from plugyard.execution.result import Result
from plugyard.execution.steps import Call, Trace
from plugyard.telemetry import SCOPE, CallTracer, Telemetry

ROUNDS = 15


class DropSpans(SpanExporter):
    """The no-op exporter: counts what reaches it, sends nothing."""

    def __init__(self) -> None:
        self.spans = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans += len(spans)
        return SpanExportResult.SUCCESS


class DropMetrics(MetricExporter):
    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        return None


def traced_with(executor: Executor, tracer: CallTracer) -> None:
    """The call path as a yard builds it with telemetry on: the ``trace`` step first."""
    executor.steps = [Trace(tracer), *executor.steps]


async def round_us(call: Callable[[], Awaitable[object]], calls: int) -> tuple[float, float]:
    """µs per call: wall time, and the process's CPU time (all its threads, the span
    processor's too), which the machine's other load disturbs far less."""
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        await call()
    wall_us = (time.perf_counter() - start) / calls * 1e6
    return wall_us, (time.process_time() - cpu) / calls * 1e6


class SdkOnly:
    """A ``trace`` step that asks of the SDK what plugyard's does, with constant
    attributes and none of plugyard's code: the floor of the SDK's cost in the call
    path, where it runs slower than in a loop of its own (the call path's own work
    between spans, most likely through the CPU's caches: turning the garbage collector
    off changes nothing)."""

    name = "trace"

    def __init__(self, tracer: Tracer, histogram: Histogram | None) -> None:
        self.tracer, self.histogram = tracer, histogram

    def before(self, call: Call, /) -> None:
        call.state["trace"] = get_current()

    def after(self, call: Call, result: Result, /) -> Result:
        span_now(self.tracer, call.state["trace"], ATTRIBUTES)
        if self.histogram is not None:
            self.histogram.record(0.012, SERIES)
        return result


#: What the ``trace`` step puts on a successful call's span, and on its latency.
ATTRIBUTES = {
    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bench",
    "plugyard.status": "success", "plugyard.duration_ms": 0.012,
    "plugyard.operation": "add", "plugyard.runtime": "python",
    "gen_ai.tool.call.id": "0123456789abcdef0123456789abcdef",
}  # fmt: skip
SERIES = {"gen_ai.tool.name": "bench", "plugyard.operation": "add", "plugyard.status": "success"}


def span_now(tracer: Tracer, parent: Context, attributes: dict[str, Any] | None) -> None:
    tracer.start_span("execute_tool bench", parent, attributes=attributes,
                      start_time=time.time_ns()).end()  # fmt: skip


def sdk_alone(tracer: Tracer, histogram: Histogram) -> dict[str, Callable[[], Awaitable[None]]]:
    """The SDK's part timed in a loop of its own, with no plugyard code around it."""

    async def span() -> None:
        span_now(tracer, get_current(), ATTRIBUTES)

    async def bare_span() -> None:
        span_now(tracer, get_current(), None)

    async def record() -> None:
        histogram.record(0.012, SERIES)

    return {
        "SDK alone: span, 7 attributes (start_span + end)": span,
        "SDK alone: span, no attributes": bare_span,
        "SDK alone: one histogram measurement": record,
    }


async def run(calls: int) -> dict[str, Any]:
    spans = DropSpans()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(spans))
    # One reader, as export has: each reader keeps its own aggregation, so a second one
    # would double what a measurement costs. This one collects only when asked (at the
    # end, for the call counter); per measurement it costs what the periodic one does.
    counted = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[counted])
    on = Telemetry(tracer_provider, meter_provider)

    # Spans alone: a tracer like it, metrics to the API's no-op meter.
    lone = DropSpans()
    lone_provider = TracerProvider()
    lone_provider.add_span_processor(BatchSpanProcessor(lone))
    spans_only = Telemetry(lone_provider, NoOpMeterProvider())
    # Spans and metrics with one trace in ten kept, as OTEL_TRACES_SAMPLER=
    # parentbased_traceidratio with OTEL_TRACES_SAMPLER_ARG=0.1 sets it.
    kept = DropSpans()
    sampled_provider = TracerProvider(sampler=ParentBased(TraceIdRatioBased(0.1)))
    sampled_provider.add_span_processor(BatchSpanProcessor(kept))
    sampled_reader = PeriodicExportingMetricReader(DropMetrics(), export_interval_millis=60_000)
    sampled = Telemetry(sampled_provider, MeterProvider(metric_readers=[sampled_reader]))
    # plugyard's own part: the step and its hook over the API's no-op providers.
    api_only = Telemetry(NoOpTracerProvider(), NoOpMeterProvider())
    # The SDK's part, over providers like the ones above, with no plugyard code.
    floor_provider = TracerProvider()
    floor_provider.add_span_processor(BatchSpanProcessor(DropSpans()))
    floor_meter = MeterProvider(metric_readers=[InMemoryMetricReader()])
    floor_tracer = floor_provider.get_tracer(SCOPE)
    floor_histogram = floor_meter.get_meter(SCOPE).create_histogram("bench.duration", unit="ms")

    bare, traced, traced_spans, traced_sampled, traced_api, sdk_span, sdk_both = (
        build_plugyard() for _ in range(7)
    )
    assert "trace" not in bare.step_names
    traced_with(traced, on.call_tracer)
    traced_with(traced_spans, spans_only.call_tracer)
    traced_with(traced_sampled, sampled.call_tracer)
    traced_with(traced_api, api_only.call_tracer)
    sdk_span.steps = [SdkOnly(floor_tracer, None), *sdk_span.steps]
    sdk_both.steps = [SdkOnly(floor_tracer, floor_histogram), *sdk_both.steps]
    request = CallRequest("bench", "add", {"a": 1, "b": 2})
    paths = {
        "tracing off": bare,
        "trace step, API no-op providers": traced_api,
        "spans only (SDK, no-op exporter)": traced_spans,
        "spans and metrics (SDK, no-op exporters)": traced,
        "spans and metrics, 10 % of traces kept": traced_sampled,
        "SDK only in the call path: span": sdk_span,
        "SDK only in the call path: span and histogram": sdk_both,
    }
    rows: dict[str, Callable[[], Awaitable[object]]] = {}
    for name, executor in paths.items():
        check = await executor.call(request)
        assert check.data == 3, check
        rows[name] = functools.partial(executor.call, request)
    rows.update(sdk_alone(floor_tracer, floor_histogram))
    for row in rows.values():
        await round_us(row, min(calls, 500))  # warm
    rounds: dict[str, list[tuple[float, float]]] = {name: [] for name in rows}
    for _ in range(ROUNDS):
        for name, row in rows.items():
            rounds[name].append(await round_us(row, calls))
    made = 1 + min(calls, 500) + ROUNDS * calls
    for provider in (tracer_provider, lone_provider, sampled_provider, floor_provider):
        provider.force_flush()
    data = counted.get_metrics_data()
    counter = sum(
        p.value
        for r in (data.resource_metrics if data else ())
        for s in r.scope_metrics
        for m in s.metrics
        if m.name == "plugyard.calls"
        for p in m.data.data_points
    )
    for telemetry in (on, spans_only, sampled):
        telemetry.shutdown()
    floor_provider.shutdown()
    floor_meter.shutdown()
    medians = {n: statistics.median(w for w, _ in r) for n, r in rounds.items()}
    cpu = {n: statistics.median(c for _, c in r) for n, r in rounds.items()}
    off = cpu["tracing off"]
    emitted = {
        "calls made, each way": made,
        "spans exported (spans and metrics)": spans.spans,
        "spans exported (spans only)": lone.spans,
        "spans exported (10 % kept)": kept.spans,
        "plugyard.calls counted": counter,
    }
    added = {name: cpu[name] - off for name in list(paths)[1:]}
    return {"median_us": medians, "median_cpu_us": cpu, "added_cpu_us": added, "emitted": emitted}


async def profiled(calls: int, top: int) -> None:
    """Where a call with spans and metrics spends its time, by cProfile: the share of
    the parts of the ``trace`` step, then the functions that take most time of their
    own. The profiler inflates small functions most, so read shares, not µs."""
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(DropSpans()))
    on = Telemetry(tracer_provider, MeterProvider(metric_readers=[InMemoryMetricReader()]))
    executor = build_plugyard()
    traced_with(executor, on.call_tracer)
    request = CallRequest("bench", "add", {"a": 1, "b": 2})
    for _ in range(500):
        await executor.call(request)
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(calls):
        await executor.call(request)
    profile.disable()
    on.shutdown()
    stats = pstats.Stats(profile)
    table: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]
    total = max(row[3] for row in table.values())  # the outermost frame's cumulative time

    def cumulative(path: str, function: str) -> float:
        return sum(row[3] for (f, _, n), row in table.items() if f.endswith(path) and n == function)

    parts = {
        "the trace step's after (all of what follows)": cumulative("execution/steps.py", "after"),
        "  SDK: Tracer.start_span": cumulative("sdk/trace/__init__.py", "start_span"),
        "  SDK: Span.end (hands it to the processor)": cumulative("sdk/trace/__init__.py", "end"),
        "  SDK: Histogram.record": cumulative("sdk/metrics/_internal/instrument.py", "record"),
        "  plugyard: the counters": cumulative("telemetry/core.py", "counted"),
    }
    print(f"{calls:,} calls with spans and metrics under cProfile, share of the call's time:")
    for name, seconds in parts.items():
        print(f"{name:<52} {seconds / total:>6.1%}")
    stats.sort_stats("tottime").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per timed round")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--profile", type=int, metavar="TOP", help="profile instead, print TOP rows"
    )
    args = parser.parse_args()
    if args.profile:
        asyncio.run(profiled(20_000, args.profile))
        return
    report = asyncio.run(run(args.calls))
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
        return
    print(f"{'path':<52} {'wall µs/call':>13} {'CPU µs/call':>12}")
    for name, value in report["median_us"].items():
        print(f"{name:<52} {value:>13.2f} {report['median_cpu_us'][name]:>12.2f}")
    for name, value in report["added_cpu_us"].items():
        print(f"{'CPU added: ' + name:<52} {'':>13} {value:>12.2f}")
    for name, value in report["emitted"].items():
        print(f"{name:<52} {value:>13,}")


if __name__ == "__main__":
    main()
