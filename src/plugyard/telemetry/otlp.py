"""The OpenTelemetry SDK exporting over OTLP: imported only when export is configured.

The SDK and the exporter are the ``otel`` extra (``pip install 'plugyard[otel]'``);
export configured without them is ``telemetry_unavailable`` at start, not a silent
nothing. OTLP over HTTP (protobuf) is the default wire; ``grpc`` needs the gRPC
exporter installed beside it (``opentelemetry-exporter-otlp-proto-grpc``).
"""

from __future__ import annotations

import importlib
from typing import Any

from plugyard.errors import PlugyardError
from plugyard.telemetry.core import Telemetry
from plugyard.telemetry.settings import GRPC, HTTP_PROTOBUF, PROTOCOLS, TelemetrySettings

_EXPORTERS = {
    HTTP_PROTOBUF: "opentelemetry.exporter.otlp.proto.http",
    GRPC: "opentelemetry.exporter.otlp.proto.grpc",
}
_PACKAGES = {
    HTTP_PROTOBUF: "opentelemetry-exporter-otlp-proto-http (pip install 'plugyard[otel]')",
    GRPC: "opentelemetry-exporter-otlp-proto-grpc",
}


def build(settings: TelemetrySettings) -> Telemetry:
    """A :class:`Telemetry` whose spans and metrics are batched and sent over OTLP."""
    if settings.protocol not in PROTOCOLS:
        raise PlugyardError(
            f"OTLP protocol {settings.protocol!r} is not one of {', '.join(PROTOCOLS)}",
            code="telemetry_unavailable",
        )
    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        raise PlugyardError(
            "telemetry export is configured but the OpenTelemetry SDK is not installed: "
            "pip install 'plugyard[otel]'",
            code="telemetry_unavailable",
        ) from None
    span_exporter, metric_exporter = _exporters(settings)
    # Resource.create also reads OTEL_RESOURCE_ATTRIBUTES; the name given here wins.
    resource = Resource.create({SERVICE_NAME: settings.service_name})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
    # The reader's interval is OTEL_METRIC_EXPORT_INTERVAL (60 s unless set).
    reader = PeriodicExportingMetricReader(metric_exporter)
    meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
    return Telemetry(tracer_provider, meter_provider, record_subject=settings.record_subject,
                     settings=settings)  # fmt: skip


def _exporters(settings: TelemetrySettings) -> tuple[Any, Any]:
    """The span and metric exporters for the settings' wire. Without a plugyard endpoint
    the exporters read ``OTEL_EXPORTER_OTLP_*`` themselves (as every SDK does)."""
    package = _EXPORTERS[settings.protocol]
    try:
        traces = importlib.import_module(f"{package}.trace_exporter")
        metrics = importlib.import_module(f"{package}.metric_exporter")
    except ImportError:
        raise PlugyardError(
            f"telemetry export over {settings.protocol} needs {_PACKAGES[settings.protocol]}",
            code="telemetry_unavailable",
        ) from None
    base = settings.endpoint
    if base is None:
        return traces.OTLPSpanExporter(), metrics.OTLPMetricExporter()
    if settings.protocol == GRPC:
        return traces.OTLPSpanExporter(endpoint=base), metrics.OTLPMetricExporter(endpoint=base)
    # OTLP/HTTP: the base URL plus each signal's path, as OTEL_EXPORTER_OTLP_ENDPOINT is.
    base = base.rstrip("/")
    return (
        traces.OTLPSpanExporter(endpoint=f"{base}/v1/traces"),
        metrics.OTLPMetricExporter(endpoint=f"{base}/v1/metrics"),
    )
