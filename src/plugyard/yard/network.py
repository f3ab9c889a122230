"""What reaches out of the yard: the one guarded HTTP client and the health checks of
external HTTP plugins.

Governance (host.http), the HTTP and MCP runtimes, the chat model and external
registrations all go out through the same guard, so it is built once, here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plugyard.deferred import part
from plugyard.registry.registry import Registry
from plugyard.yard.settings import Settings

if TYPE_CHECKING:
    from plugyard.runtimes.http import HealthChecker
    from plugyard.runtimes.outbound import OutboundClient


class Network:
    """The outbound client and the health checker, each built on first use."""

    def __init__(self, settings: Settings, registry: Registry) -> None:
        self.settings = settings
        self.registry = registry

    @part
    def outbound(self) -> OutboundClient:
        """The HTTP client every outbound request goes through (under the guard)."""
        from plugyard.runtimes.outbound import OutboundClient, OutboundGuard

        return OutboundClient(OutboundGuard.of(self.settings.outbound_allow))

    @part
    def health(self) -> HealthChecker | None:
        """Health checks of external HTTP plugins (run by the server)."""
        from plugyard.runtimes.http import HealthChecker

        s = self.settings
        return HealthChecker(self.registry, self.outbound, threshold=s.health_threshold,
                             interval_s=s.health_interval_s)  # fmt: skip
