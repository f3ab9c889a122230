"""Checks shared by the registry tests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from plugyard.errors import StoreError
from plugyard.registry.model import RegistryEvent
from plugyard.registry.registry import Registry
from plugyard.registry.rows import to_row
from plugyard.store.plugins import Check, PluginRow, RemoveCheck, Written
from plugyard.store.plugins_sql import SqlPluginRepository
from plugyard.store.store import Store


def assert_in_step(registry: Registry) -> None:
    """The registry holds exactly what its store holds."""
    held = {p.id: to_row(p) for p in registry.list()}
    stored = {r.id: r for r in registry.repository.list()}
    assert sorted(held) == sorted(stored)
    for plugin_id, row in held.items():
        assert row.same_entry(stored[plugin_id]), plugin_id


@dataclass
class Recorder:
    events: list[RegistryEvent] = field(default_factory=list)

    def __call__(self, event: RegistryEvent) -> None:
        self.events.append(event)

    def kinds(self) -> list[tuple[str, str]]:
        return [(e.kind, e.plugin_id) for e in self.events]


class FlakyRepository(SqlPluginRepository):
    """An in-memory repository whose writes fail while ``broken`` is set, like a lost
    database."""

    def __init__(self) -> None:
        super().__init__(Store.open(":memory:"))
        self.broken = False

    def _fail(self) -> None:
        if self.broken:
            raise StoreError("store write failed: connection lost")

    def upsert_many(
        self, rows: Sequence[PluginRow], *, check: Check | None = None
    ) -> tuple[Written, ...]:
        self._fail()
        return super().upsert_many(rows, check=check)

    def delete(self, plugin_id: str, *, check: RemoveCheck | None = None) -> PluginRow | None:
        self._fail()
        return super().delete(plugin_id, check=check)

    def set_availability(
        self, plugin_id: str, available: bool, reason: str | None
    ) -> Written | None:
        self._fail()
        return super().set_availability(plugin_id, available, reason)
