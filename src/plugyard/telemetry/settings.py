"""When telemetry is on, and where it goes (docs/telemetry.md).

OpenTelemetry's own variables are honoured as its SDKs read them: any of
``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``_TRACES_ENDPOINT`` / ``_METRICS_ENDPOINT`` turns
export on, ``OTEL_SDK_DISABLED=true`` turns it off whatever else is set,
``OTEL_SERVICE_NAME`` names the service and ``OTEL_EXPORTER_OTLP_PROTOCOL`` picks the
wire. ``PLUGYARD_OTEL_*`` say the same for plugyard alone (they win over ``OTEL_*``),
and ``PLUGYARD_OTEL_SUBJECT`` is plugyard's own: whether a call span names its caller.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

#: The wire when nothing names one: OTLP's default (the specification's, for every SDK).
HTTP_PROTOBUF = "http/protobuf"
GRPC = "grpc"
PROTOCOLS = (HTTP_PROTOBUF, GRPC)

_STANDARD_ENDPOINTS = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
)
_TRUE = {"1", "true", "yes", "on"}


@dataclass(frozen=True, slots=True)
class TelemetrySettings:
    """Off unless ``enabled``; the exporter reads the rest of ``OTEL_EXPORTER_OTLP_*``
    (headers, timeout, certificates) itself."""

    enabled: bool = False
    #: The collector's base URL (``/v1/traces`` and ``/v1/metrics`` are added for
    #: HTTP); ``None`` leaves the endpoint to the exporter's own ``OTEL_*`` variables.
    endpoint: str | None = None
    protocol: str = HTTP_PROTOBUF
    service_name: str = "plugyard"
    #: Put the caller's subject on call spans (``enduser.id``). Off: a subject names a
    #: person or a key, and a trace backend is often read by more people than the audit.
    record_subject: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> TelemetrySettings:
        env = os.environ if env is None else env
        endpoint = env.get("PLUGYARD_OTEL_ENDPOINT") or None
        configured = endpoint is not None or any(env.get(name) for name in _STANDARD_ENDPOINTS)
        disabled = env.get("OTEL_SDK_DISABLED", "").strip().lower() in _TRUE
        protocol = (
            env.get("PLUGYARD_OTEL_PROTOCOL")
            or env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
            or HTTP_PROTOBUF
        )
        return cls(
            enabled=configured and not disabled,
            endpoint=endpoint,
            protocol=protocol.strip().lower(),
            service_name=env.get("PLUGYARD_OTEL_SERVICE_NAME")
            or env.get("OTEL_SERVICE_NAME")
            or "plugyard",
            record_subject=env.get("PLUGYARD_OTEL_SUBJECT", "").strip().lower() in _TRUE,
        )
