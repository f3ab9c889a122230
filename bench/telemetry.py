"""What tracing costs a call: the bare ``add(a, b)`` call of bench/call_overhead.py with
telemetry off, and on over the OpenTelemetry SDK as export runs it (a batch span
processor and a metric reader) with an exporter that drops what it is given —
so the figure is plugyard's hook plus the SDK, not a network.

    bash scripts/bench.sh telemetry            # prints a table
    bash scripts/bench.sh telemetry --json     # the same as JSON

Off and on run in alternating rounds in one process, so the machine's noise falls on
both alike. Beside the latency it checks what was emitted: one span per call made, and
the call counter equal to the calls made.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

from call_overhead import build_plugyard
from opentelemetry.metrics import NoOpMeterProvider
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

from plugyard.execution.executor import CallRequest, Executor
from plugyard.telemetry import Telemetry

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


async def round_us(executor: Executor, request: CallRequest, calls: int) -> tuple[float, float]:
    """µs per call: wall time, and the process's CPU time (all its threads, the span
    processor's too), which the machine's other load disturbs far less."""
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        await executor.call(request)
    wall_us = (time.perf_counter() - start) / calls * 1e6
    return wall_us, (time.process_time() - cpu) / calls * 1e6


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

    bare, traced, traced_spans, traced_sampled = (build_plugyard() for _ in range(4))
    assert bare.tracer is None
    traced.tracer = on.call_tracer
    traced_spans.tracer = spans_only.call_tracer
    traced_sampled.tracer = sampled.call_tracer
    request = CallRequest("bench", "add", {"a": 1, "b": 2})
    for executor in (bare, traced, traced_spans, traced_sampled):
        check = await executor.call(request)
        assert check.data == 3, check
        await round_us(executor, request, min(calls, 500))  # warm
    off_rounds, on_rounds, span_rounds, sampled_rounds = [], [], [], []
    for _ in range(ROUNDS):
        off_rounds.append(await round_us(bare, request, calls))
        on_rounds.append(await round_us(traced, request, calls))
        span_rounds.append(await round_us(traced_spans, request, calls))
        sampled_rounds.append(await round_us(traced_sampled, request, calls))
    made = 1 + min(calls, 500) + ROUNDS * calls
    tracer_provider.force_flush()
    lone_provider.force_flush()
    sampled_provider.force_flush()
    data = counted.get_metrics_data()
    counter = sum(
        p.value
        for r in (data.resource_metrics if data else ())
        for s in r.scope_metrics
        for m in s.metrics
        if m.name == "plugyard.calls"
        for p in m.data.data_points
    )
    on.shutdown()
    spans_only.shutdown()
    sampled.shutdown()
    names = (
        "tracing off",
        "spans only (SDK, no-op exporter)",
        "spans and metrics (SDK, no-op exporters)",
        "spans and metrics, 10 % of traces kept",
    )
    rounds = (off_rounds, span_rounds, on_rounds, sampled_rounds)
    medians = {n: statistics.median(w for w, _ in r) for n, r in zip(names, rounds, strict=True)}
    cpu = {n: statistics.median(c for _, c in r) for n, r in zip(names, rounds, strict=True)}
    off, with_spans, with_sdk, with_sampled = cpu.values()
    emitted = {
        "calls made, each way": made,
        "spans exported (spans and metrics)": spans.spans,
        "spans exported (spans only)": lone.spans,
        "spans exported (10 % kept)": kept.spans,
        "plugyard.calls counted": counter,
    }
    added = {
        "spans only": with_spans - off,
        "spans and metrics": with_sdk - off,
        "spans and metrics, 10 % kept": with_sampled - off,
    }
    return {"median_us": medians, "median_cpu_us": cpu, "added_cpu_us": added, "emitted": emitted}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per timed round")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = asyncio.run(run(args.calls))
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
        return
    print(f"{'path':<42} {'wall µs/call':>13} {'CPU µs/call':>12}")
    for name, value in report["median_us"].items():
        print(f"{name:<42} {value:>13.2f} {report['median_cpu_us'][name]:>12.2f}")
    for name, value in report["added_cpu_us"].items():
        print(f"{'CPU added by ' + name:<42} {'':>13} {value:>12.2f}")
    for name, value in report["emitted"].items():
        print(f"{name:<42} {value:>13,}")


if __name__ == "__main__":
    main()
