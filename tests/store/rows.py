"""Plugin rows for the store's tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from plugyard.store.plugins import PluginRow

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def row(plugin_id: str, **changes: Any) -> PluginRow:
    fields: dict[str, Any] = {
        "id": plugin_id,
        "family": "tool",
        "source": "folder",
        "descriptor": {"id": plugin_id, "name": plugin_id.title(), "tags": ["a", "b"]},
        "content_hash": "0" * 64,
        "version": "1.0.0",
        "location": f"/plugins/tool/{plugin_id}",
        "manifest_path": f"/plugins/tool/{plugin_id}/plugin.yaml",
        "dialect": "olo",
    }
    fields.update(changes)
    return PluginRow(**fields)


def at(seconds: int) -> dict[str, datetime]:
    moment = EPOCH + timedelta(seconds=seconds)
    return {"registered_at": moment, "updated_at": moment}


class Clock:
    """A clock that moves one second each time it is read."""

    def __init__(self) -> None:
        self.ticks = 0

    def __call__(self) -> datetime:
        self.ticks += 1
        return EPOCH + timedelta(seconds=self.ticks)
