"""External plugins over HTTP: the runtime, registration checks and health checks."""

from plugyard.runtimes.http.health import HealthChecker, Hysteresis
from plugyard.runtimes.http.registration import check_registration
from plugyard.runtimes.http.runtime import HttpPluginRuntime

__all__ = ["HealthChecker", "HttpPluginRuntime", "Hysteresis", "check_registration"]
