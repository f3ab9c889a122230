"""A pass-through observer: the payload goes on unchanged; what went by is logged."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from itertools import count
from typing import Any

LOG = logging.getLogger("plugyard.builtins.observer")


class PassThroughObserver:
    def __init__(self) -> None:
        self._sequence = count(1)

    def execute(self, params: dict[str, Any], context: Any = None, host: Any = None) -> Any:
        payload = params.get("payload")
        observation = {
            "label": params.get("label"),
            "keys": sorted(payload) if isinstance(payload, dict) else [],
            "bytes": len(json.dumps(payload, default=str).encode()),
            "at": datetime.now(UTC).isoformat(),
            "sequence": next(self._sequence),
        }
        request = context.get("request_id") if isinstance(context, dict) else None
        LOG.info("observed %s (request %s): %s", observation["label"], request, observation)
        return {"payload": payload, "observation": observation}

    execute.__plugyard_inline__ = True  # type: ignore[attr-defined]
