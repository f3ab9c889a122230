"""Telemetry in force over the SDK's in-memory exporter and metric reader."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from plugyard import telemetry
from plugyard.telemetry import Telemetry


@dataclass
class Recorded:
    telemetry: Telemetry
    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader

    def spans(self, prefix: str = "") -> list[ReadableSpan]:
        return [s for s in self.exporter.get_finished_spans() if s.name.startswith(prefix)]

    def points(self, metric: str) -> list[tuple[dict[str, Any], Any]]:
        """Each data point of ``metric`` as (its attributes, the point)."""
        data = self.reader.get_metrics_data()
        found: list[tuple[dict[str, Any], Any]] = []
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for m in scope.metrics:
                    if m.name == metric:
                        found += [(dict(p.attributes or {}), p) for p in m.data.data_points]
        return found


def recording(*, record_subject: bool = False) -> Recorded:
    exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    meter_provider = MeterProvider(metric_readers=[reader])
    made = Telemetry(tracer_provider, meter_provider, record_subject=record_subject)
    return Recorded(made, exporter, reader)


@pytest.fixture
def otel() -> Iterator[Recorded]:
    """Telemetry in force for one test (the subject not recorded, as by default)."""
    recorded = recording()
    previous = telemetry.install(recorded.telemetry)
    try:
        yield recorded
    finally:
        telemetry.install(previous)
