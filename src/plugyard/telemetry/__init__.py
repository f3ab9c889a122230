"""OpenTelemetry traces and metrics for plugyard (docs/telemetry.md).

Off unless configured: with export off, every hook is one check and nothing of
OpenTelemetry is imported. :func:`configure` sets up OTLP export from
:class:`TelemetrySettings`; :func:`install` puts an application's own providers in force.
"""

from plugyard.telemetry.core import (
    OTHER,
    SCOPE,
    CallStart,
    CallTracer,
    Telemetry,
    active,
    call_tracer,
    configure,
    flow_span,
    install,
    record_tokens,
    traced,
)
from plugyard.telemetry.settings import TelemetrySettings

__all__ = [
    "OTHER",
    "SCOPE",
    "CallStart",
    "CallTracer",
    "Telemetry",
    "TelemetrySettings",
    "active",
    "call_tracer",
    "configure",
    "flow_span",
    "install",
    "record_tokens",
    "traced",
]
