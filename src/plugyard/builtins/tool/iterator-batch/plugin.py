"""An ITERATOR: a list in batches, one group run per batch."""

from __future__ import annotations

from typing import Any

DEFAULT_BATCH = 10
MAX_BATCH = 10_000


class InvalidInput(ValueError):
    code = "invalid_parameters"


class BatchIterator:
    def execute(self, params: dict[str, Any], context: Any = None, host: Any = None) -> Any:
        items = params.get("items")
        if items is None and isinstance(params.get("field"), str):
            items = _field(params.get("context"), str(params["field"]))
        if not isinstance(items, list):
            raise InvalidInput("give 'items', or a 'context' and the 'field' holding a list")
        size = params.get("batch_size", DEFAULT_BATCH)
        if not isinstance(size, int) or isinstance(size, bool) or not 1 <= size <= MAX_BATCH:
            raise InvalidInput(f"'batch_size' must be a whole number from 1 to {MAX_BATCH}")
        batches = [items[i : i + size] for i in range(0, len(items), size)]
        return {"items": batches, "batches": len(batches), "total": len(items)}

    execute.__plugyard_inline__ = True  # type: ignore[attr-defined]


def _field(scope: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(scope, dict):
            return None
        scope = scope.get(part)
    return scope
