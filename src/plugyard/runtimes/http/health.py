"""Health checks of external plugins, with hysteresis.

Each ``http`` plugin with a ``health_check_url`` is polled (GET, a 2xx answer is
healthy). Its state changes only after ``threshold`` consecutive results that disagree
with it, so one lost packet does not take a plugin out and one lucky answer does not
bring a dead one back. A change is written to the registry
(``set_availability(False, "health check: …")``), so the executor answers
``plugin_unavailable`` at once while a plugin is down — no call waits for its timeout.
A plugin made unavailable for another reason (its runtime refused it) is never marked
available by the checker.

The checker runs rounds: :meth:`HealthChecker.check_once` checks every plugin once (a
test drives it round by round); :meth:`HealthChecker.run` repeats it every
``interval_s`` until told to stop.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from plugyard.manifest.model import HttpRuntime, PluginDescriptor
from plugyard.runtimes.outbound.client import OutboundClient
from plugyard.runtimes.outbound.guard import OutboundError

#: The start of every unavailability reason the checker writes.
REASON_PREFIX = "health check: "
State = Literal["healthy", "unhealthy"]
#: How many of a plugin's latest checks are kept (memory only: a restart forgets them).
HISTORY = 50


class PluginView(Protocol):
    """What the checker reads of a registered plugin."""

    @property
    def id(self) -> str: ...

    @property
    def descriptor(self) -> PluginDescriptor: ...

    @property
    def content_hash(self) -> str: ...

    @property
    def available(self) -> bool: ...

    @property
    def unavailable_reason(self) -> str | None: ...


class Availability(Protocol):
    """Where plugins are listed and marked (un)available: the registry."""

    def list(self) -> Sequence[PluginView]: ...

    def set_availability(self, plugin_id: str, available: bool, reason: str | None) -> object: ...


class Hysteresis:
    """A two-state switch that flips after ``threshold`` consecutive contrary results."""

    def __init__(self, threshold: int, healthy: bool) -> None:
        if threshold < 1:
            raise ValueError("threshold must be at least 1")
        self.threshold = threshold
        self.healthy = healthy
        self.streak = 0  # consecutive results that disagree with the state

    def observe(self, ok: bool) -> bool:
        """Record one result; ``True`` when it flipped the state."""
        if ok == self.healthy:
            self.streak = 0
            return False
        self.streak += 1
        if self.streak < self.threshold:
            return False
        self.healthy, self.streak = ok, 0
        return True


@dataclass(slots=True)
class Health:
    """What the checker knows of one plugin (``GET /api/v1/plugins/{id}/health``)."""

    plugin_id: str
    url: str
    content_hash: str
    switch: Hysteresis
    checks: int = 0
    last_ok: bool | None = None
    last_error: str | None = None
    last_checked_at: float | None = None
    #: The latest checks, newest last: ``{"at", "ok", "error"}`` (the console shows them).
    history: deque[dict[str, object]] = field(default_factory=lambda: deque(maxlen=HISTORY))

    @property
    def state(self) -> State:
        return "healthy" if self.switch.healthy else "unhealthy"

    def to_dict(self) -> dict[str, object]:
        return {
            "state": self.state,
            "health_check_url": self.url,
            "checks": self.checks,
            "streak": self.switch.streak,
            "threshold": self.switch.threshold,
            "last_ok": self.last_ok,
            "last_error": self.last_error,
            "last_checked_at": self.last_checked_at,
        }


class HealthChecker:
    def __init__(
        self,
        plugins: Availability,
        client: OutboundClient,
        *,
        threshold: int = 3,
        interval_s: float = 10.0,
        timeout_s: float = 5.0,
        concurrency: int = 32,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._plugins = plugins
        self._client = client
        self.threshold = threshold
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self._limit = asyncio.Semaphore(concurrency)
        self._clock = clock
        self._health: dict[str, Health] = {}

    def health(self, plugin_id: str) -> Health | None:
        return self._health.get(plugin_id)

    async def check_once(self) -> list[str]:
        """Check every plugin once; answers the ids whose availability changed."""
        targets = [p for p in self._plugins.list() if _health_url(p.descriptor)]
        live = {p.id for p in targets}
        for gone in [i for i in self._health if i not in live]:
            del self._health[gone]
        changed = await asyncio.gather(*(self._check(p) for p in targets))
        return [p.id for p, flipped in zip(targets, changed, strict=True) if flipped]

    async def run(self, stop: asyncio.Event) -> None:
        """Check every ``interval_s`` until ``stop`` is set."""
        while not stop.is_set():
            await self.check_once()
            try:
                async with asyncio.timeout(self.interval_s):
                    await stop.wait()
            except TimeoutError:
                continue

    async def _check(self, plugin: PluginView) -> bool:
        url = _health_url(plugin.descriptor)
        assert url is not None
        health = self._health.get(plugin.id)
        if health is None or (health.url, health.content_hash) != (url, plugin.content_hash):
            health = Health(
                plugin.id, url, plugin.content_hash, Hysteresis(self.threshold, plugin.available)
            )
            self._health[plugin.id] = health
        async with self._limit:
            error = await self._probe(url)
        health.checks += 1
        health.last_ok = error is None
        health.last_error = error
        health.last_checked_at = self._clock()
        health.history.append({"at": health.last_checked_at, "ok": error is None, "error": error})
        if not health.switch.observe(error is None):
            return False
        return await self._apply(plugin, health)

    async def _probe(self, url: str) -> str | None:
        try:
            reply = await self._client.request(
                "GET", url, timeout_s=self.timeout_s, max_bytes=64 * 1024
            )
        except OutboundError as exc:
            return f"{exc.code}: {exc.message}"
        if 200 <= reply.status < 300:
            return None
        return f"HTTP {reply.status}"

    async def _apply(self, plugin: PluginView, health: Health) -> bool:
        if health.switch.healthy:
            if plugin.available or not (plugin.unavailable_reason or "").startswith(REASON_PREFIX):
                return False  # down for another reason: not the checker's to lift
            available, reason = True, None
        else:
            available = False
            reason = (
                f"{REASON_PREFIX}{self.threshold} consecutive failures; last: {health.last_error}"
            )
        try:
            await asyncio.to_thread(self._plugins.set_availability, plugin.id, available, reason)
        except Exception:
            # Unregistered meanwhile, or the store failed: the next round tries again.
            health.switch.healthy = not health.switch.healthy
            health.switch.streak = self.threshold - 1
            return False
        return True


def _health_url(descriptor: PluginDescriptor) -> str | None:
    runtime = descriptor.runtime
    return runtime.health_check_url if isinstance(runtime, HttpRuntime) else None
