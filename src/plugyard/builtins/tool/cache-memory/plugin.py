"""A bounded in-memory cache with time to live, as an OLO CACHING stage.

The store belongs to the plugin instance (one per load, in this process): a cache that
several replicas must share is the host's ``cache`` capability, not this plugin.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

DEFAULT_TTL_S = 300
MAX_TTL_S = 86_400


class MemoryCache:
    def __init__(self, max_entries: int = 1024) -> None:
        self._entries: OrderedDict[str, tuple[Any, float]] = OrderedDict()
        self._max = max_entries

    def execute(self, params: dict[str, Any], context: Any = None, host: Any = None) -> Any:
        key = str(params["key"])
        now = time.monotonic()
        if params.get("forget"):
            self._entries.pop(key, None)
            return {"hit": False, "stored": False, "value": None}
        if "value" in params:
            ttl = params.get("ttl_s")
            ttl = DEFAULT_TTL_S if not isinstance(ttl, int) or ttl <= 0 else min(ttl, MAX_TTL_S)
            self._entries[key] = (params["value"], now + ttl)
            self._entries.move_to_end(key)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)  # least recently used
            return {"hit": False, "stored": True, "value": params["value"]}
        found = self._entries.get(key)
        if found is None or found[1] <= now:
            self._entries.pop(key, None)
            return {"hit": False, "stored": False, "value": None}
        self._entries.move_to_end(key)
        return {"hit": True, "stored": False, "value": found[0]}

    # a dictionary lookup: run on the event loop (the loop is also what keeps the store
    # free of races, since inline calls never overlap)
    execute.__plugyard_inline__ = True  # type: ignore[attr-defined]
