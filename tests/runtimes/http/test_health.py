"""Health checks flip availability only after N consecutive contrary results."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace

from plugyard.manifest.model import HttpRuntime, PluginDescriptor
from plugyard.runtimes.http.health import REASON_PREFIX, HealthChecker, Hysteresis
from plugyard.runtimes.outbound import OutboundClient, OutboundGuard

from .servers import PluginServer


def test_hysteresis_flips_after_threshold_contrary_results() -> None:
    switch = Hysteresis(3, healthy=True)
    assert [switch.observe(ok) for ok in (False, False, True, False, False)] == [False] * 5
    assert switch.observe(False) is True
    assert switch.healthy is False
    assert [switch.observe(ok) for ok in (True, True)] == [False, False]
    assert switch.observe(True) is True


@dataclass(frozen=True)
class _Plugin:
    descriptor: PluginDescriptor
    content_hash: str = "h"
    available: bool = True
    unavailable_reason: str | None = None

    @property
    def id(self) -> str:
        return self.descriptor.id


class _Registry:
    def __init__(self, plugin: _Plugin) -> None:
        self.plugin = plugin
        self.changes: list[tuple[bool, str | None]] = []

    def list(self) -> Sequence[_Plugin]:
        return [self.plugin]

    def set_availability(self, plugin_id: str, available: bool, reason: str | None) -> None:
        self.plugin = replace(self.plugin, available=available, unavailable_reason=reason)
        self.changes.append((available, reason))


def _setup(server: PluginServer) -> tuple[_Registry, HealthChecker]:
    runtime = HttpRuntime(base_url=server.url, health_check_url=f"{server.url}/health")
    registry = _Registry(_Plugin(PluginDescriptor(id="p", name="P", runtime=runtime)))
    client = OutboundClient(OutboundGuard.of([server.allow]))
    return registry, HealthChecker(registry, client, threshold=2, timeout_s=2)


def _set_healthy(server: PluginServer, healthy: bool) -> None:
    async def post() -> None:
        client = OutboundClient(OutboundGuard.of([server.allow]))
        body = b'{"healthy": true}' if healthy else b'{"healthy": false}'
        await client.request("POST", f"{server.url}/control", json_body=body)

    asyncio.run(post())


def test_a_flapping_plugin_changes_state_only_after_the_threshold(
    plugin_server: PluginServer,
) -> None:
    registry, checker = _setup(plugin_server)
    try:
        assert asyncio.run(checker.check_once()) == []
        _set_healthy(plugin_server, False)
        assert asyncio.run(checker.check_once()) == []  # one failure: not yet
        _set_healthy(plugin_server, True)
        assert asyncio.run(checker.check_once()) == []  # the streak is broken
        _set_healthy(plugin_server, False)
        assert asyncio.run(checker.check_once()) == []
        assert asyncio.run(checker.check_once()) == ["p"]  # two in a row
        assert registry.plugin.available is False
        assert (registry.plugin.unavailable_reason or "").startswith(REASON_PREFIX)
        health = checker.health("p")
        assert health is not None and health.state == "unhealthy"
        _set_healthy(plugin_server, True)
        assert asyncio.run(checker.check_once()) == []
        assert asyncio.run(checker.check_once()) == ["p"]
        assert registry.plugin.available is True
        assert len(registry.changes) == 2
    finally:
        _set_healthy(plugin_server, True)


def test_the_checker_never_lifts_an_unavailability_it_did_not_set(
    plugin_server: PluginServer,
) -> None:
    registry, checker = _setup(plugin_server)
    registry.plugin = replace(registry.plugin, available=False, unavailable_reason="no runtime")
    for _ in range(3):
        assert asyncio.run(checker.check_once()) == []
    assert registry.plugin.available is False
    assert registry.changes == []
