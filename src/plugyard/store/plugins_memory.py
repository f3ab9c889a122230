"""The plugin repository in process memory: same contract, no database.

For tests and for hosts that want a registry without persistence. Writes are
all-or-nothing like the SQL one: a batch is applied to a copy, which replaces the
table only when every row passed its check.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Sequence
from dataclasses import replace

from plugyard.store.plugins import Check, Clock, PluginRow, RemoveCheck, Written, utc_now


class MemoryPluginRepository:
    def __init__(self, *, clock: Clock = utc_now) -> None:
        self._rows: dict[str, PluginRow] = {}
        self._lock = threading.Lock()
        self._clock = clock

    def get(self, plugin_id: str) -> PluginRow | None:
        row = self._rows.get(plugin_id)
        return _copy(row) if row is not None else None

    def list(
        self, *, family: str | None = None, source: str | None = None, timestamps: bool = True
    ) -> tuple[PluginRow, ...]:
        rows = sorted(self._rows.values(), key=lambda r: r.id)
        return tuple(
            _copy(r)
            for r in rows
            if (family is None or r.family == family) and (source is None or r.source == source)
        )

    def upsert(self, row: PluginRow, *, check: Check | None = None) -> Written:
        return self.upsert_many([row], check=check)[0]

    def upsert_many(
        self, rows: Sequence[PluginRow], *, check: Check | None = None
    ) -> tuple[Written, ...]:
        with self._lock:
            table = dict(self._rows)
            results: list[Written] = []
            for row in rows:
                current = table.get(row.id)
                if check is not None and not check(_maybe_copy(current), _copy(row)):
                    results.append(Written(_maybe_copy(current), _maybe_copy(current), False))
                    continue
                now = self._clock()
                registered = current.registered_at if current is not None else now
                stored = replace(_copy(row), registered_at=registered, updated_at=now)
                table[row.id] = stored
                results.append(Written(_copy(stored), _maybe_copy(current), True))
            self._rows = table
            return tuple(results)

    def delete(self, plugin_id: str, *, check: RemoveCheck | None = None) -> PluginRow | None:
        with self._lock:
            current = self._rows.get(plugin_id)
            if current is None or (check is not None and not check(_copy(current))):
                return None
            table = dict(self._rows)
            del table[plugin_id]
            self._rows = table
            return current

    def set_availability(
        self, plugin_id: str, available: bool, reason: str | None
    ) -> Written | None:
        with self._lock:
            current = self._rows.get(plugin_id)
            if current is None:
                return None
            if current.available == available and current.unavailable_reason == reason:
                return Written(_copy(current), _copy(current), written=False)
            changed = replace(
                current, available=available, unavailable_reason=reason, updated_at=self._clock()
            )
            self._rows = {**self._rows, plugin_id: changed}
            return Written(_copy(changed), _copy(current), written=True)

    def restamp(self, rows: Sequence[tuple[str, str]], stamp: str) -> None:
        with self._lock:
            table = dict(self._rows)
            for plugin_id, digest in rows:
                current = table.get(plugin_id)
                if current is not None and current.content_hash == digest:
                    table[plugin_id] = replace(current, stamp=stamp)
            self._rows = table


def _copy(row: PluginRow) -> PluginRow:
    # Callers must not reach into the table through a shared descriptor dict.
    return replace(row, descriptor=copy.deepcopy(dict(row.descriptor)))


def _maybe_copy(row: PluginRow | None) -> PluginRow | None:
    return _copy(row) if row is not None else None
