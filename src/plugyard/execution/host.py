"""The host object a plugin receives: only the host capabilities its manifest declares.

A plugin asking for a capability it did not declare gets ``capability_not_granted``; one
it declared but this host does not offer yet gets ``capability_unavailable``. Governance
adds secrets, http, storage and the rest behind the same gate.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from plugyard.errors import PlugyardError
from plugyard.manifest.model import HOST_CAPABILITIES


class CapabilityError(PlugyardError):
    default_code = "capability_not_granted"


class MemoryCache:
    """``host.cache``: get/set with an optional time to live, per plugin (plain methods;
    a Shu plugin awaits them through :mod:`plugyard.runtimes.python.shuhost`)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._items: dict[str, tuple[Any, float | None]] = {}
        self._clock = clock

    def get(self, key: str, default: Any = None) -> Any:
        item = self._items.get(key)
        if item is None:
            return default
        value, expires = item
        if expires is not None and self._clock() >= expires:
            del self._items[key]
            return default
        return value

    def set(
        self, key: str, value: Any, ttl: float | None = None, *, ttl_seconds: float | None = None
    ) -> None:
        """``ttl`` in seconds; ``ttl_seconds`` is Shu's name for it."""
        if ttl is None:
            ttl = ttl_seconds
        expires = self._clock() + ttl if ttl is not None else None
        self._items[key] = (value, expires)

    def delete(self, key: str) -> None:
        self._items.pop(key, None)


class Host:
    """Attribute access is the gate: ``host.cache`` works only if ``cache`` was declared."""

    __slots__ = ("_granted", "_plugin_id", "_services")

    def __init__(
        self, plugin_id: str, granted: frozenset[str], services: Mapping[str, Any]
    ) -> None:
        self._plugin_id = plugin_id
        self._granted = granted
        self._services = services

    @property
    def capabilities(self) -> frozenset[str]:
        return self._granted

    def extended(self, services: Mapping[str, Any]) -> Host:
        """The same gate over more services (governance adds the per-call ones: secrets
        and identity for this caller). Undeclared capabilities stay closed."""
        return Host(self._plugin_id, self._granted, {**self._services, **services})

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._granted:
            known = name in HOST_CAPABILITIES
            raise CapabilityError(
                f"plugin {self._plugin_id!r} did not declare the host capability {name!r}"
                if known
                else f"no host capability {name!r}",
                code="capability_not_granted",
            )
        try:
            return self._services[name]
        except KeyError:
            raise CapabilityError(
                f"the host capability {name!r} is not offered by this host",
                code="capability_unavailable",
            ) from None


def make_host(plugin_id: str, declared: tuple[str, ...]) -> Host:
    """The host for one plugin, with the services this host offers today."""
    granted = frozenset(declared) | ({"logger"} if "log" in declared else frozenset())
    if "kb" in granted:  # Shu: host.query (reading the KB) and cursors come with kb
        granted |= {"query", "cursor"}
    services: dict[str, Any] = {}
    if "logger" in granted or "log" in granted:
        logger = logging.getLogger(f"plugyard.plugin.{plugin_id}")
        services["logger"] = logger
        services["log"] = logger
    if "cache" in granted:
        services["cache"] = MemoryCache()
    return Host(plugin_id, granted, services)
