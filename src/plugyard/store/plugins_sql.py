"""The plugin repository, in plain SQL on the store's held connection (store/rawdb.py).

A command that only reads the registry never imports SQLAlchemy, and a start that finds
nothing new never makes an engine either.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from plugyard.store.plugins import Check, PluginRow, RemoveCheck, Written
from plugyard.store.rawdb import (
    RawDb,
    Tx,
    json_document,
    json_in,
    matching,
    raw_db,
    time_in,
    time_out,
)

if TYPE_CHECKING:
    from plugyard.store.store import Store

#: Every column but the timestamps: what a start reads.
_PLAIN_COLUMNS = (
    "id, family, source, descriptor, content_hash, version, trust, location, "
    "manifest_path, dialect, available, unavailable_reason, stamp"
)
_COLUMNS = f"{_PLAIN_COLUMNS}, registered_at, updated_at"
#: What a write sets from a :class:`PluginRow` (``PluginRow.values()``).
_WRITTEN = (
    "id", "family", "source", "descriptor", "content_hash", "version", "trust", "location",
    "manifest_path", "dialect", "available", "unavailable_reason", "stamp",
)  # fmt: skip
_INSERT = (
    f"INSERT INTO plugins ({', '.join(_WRITTEN)}, registered_at, updated_at) "
    f"VALUES ({', '.join(':' + name for name in _WRITTEN)}, :now, :now) "
    "ON CONFLICT (id) DO NOTHING"
)
_UPDATE = (
    f"UPDATE plugins SET {', '.join(f'{name} = :{name}' for name in _WRITTEN[1:])}, "
    "updated_at = :now WHERE id = :id"
)


class SqlPluginRepository:
    def __init__(self, store: Store) -> None:
        self._store = store
        self._db: RawDb = raw_db(store)
        select = f"SELECT {_COLUMNS} FROM plugins WHERE id = :id"
        self._select = select
        # SQLite's BEGIN IMMEDIATE already holds the database's write lock.
        self._select_locked = select + " FOR UPDATE" if self._db.postgres else select

    # reads --------------------------------------------------------------------------

    def get(self, plugin_id: str) -> PluginRow | None:
        with self._db.read() as tx:
            found = tx.one(self._select, {"id": plugin_id})
        return _row(found) if found is not None else None

    def list(
        self, *, family: str | None = None, source: str | None = None, timestamps: bool = True
    ) -> tuple[PluginRow, ...]:
        # What a start reads goes without the timestamps: parsing them would be half the
        # time of reading 10,000 rows, and a start never looks at them.
        where, values = matching(family=family, source=source)
        sql = f"SELECT {_COLUMNS if timestamps else _PLAIN_COLUMNS} FROM plugins{where}"
        with self._db.read() as tx:
            found = tx.all(sql + " ORDER BY id", values)
        return tuple(_row(r) for r in found)

    # writes -------------------------------------------------------------------------

    def upsert(self, row: PluginRow, *, check: Check | None = None) -> Written:
        return self.upsert_many([row], check=check)[0]

    def upsert_many(
        self, rows: Sequence[PluginRow], *, check: Check | None = None
    ) -> tuple[Written, ...]:
        if not rows:  # a start with nothing new: no write lock
            return ()
        with self._db.write() as tx:
            return tuple(self._upsert(tx, row, check) for row in rows)

    def delete(self, plugin_id: str, *, check: RemoveCheck | None = None) -> PluginRow | None:
        with self._db.write() as tx:
            current = self._locked(tx, plugin_id)
            if current is None or (check is not None and not check(current)):
                return None
            tx.execute("DELETE FROM plugins WHERE id = :id", {"id": plugin_id})
        return current

    def set_availability(
        self, plugin_id: str, available: bool, reason: str | None
    ) -> Written | None:
        with self._db.write() as tx:
            current = self._locked(tx, plugin_id)
            if current is None:
                return None
            if current.available == available and current.unavailable_reason == reason:
                return Written(current, current, written=False)
            now = self._store.clock()
            tx.execute(
                "UPDATE plugins SET available = :available, unavailable_reason = :reason, "
                "updated_at = :now WHERE id = :id",
                {"id": plugin_id, "available": available, "reason": reason, "now": self._utc(now)},
            )
        changed = replace(current, available=available, unavailable_reason=reason, updated_at=now)
        return Written(changed, current, written=True)

    def restamp(self, rows: Sequence[tuple[str, str]], stamp: str) -> None:
        if not rows:
            return
        with self._db.write() as tx:
            tx.execute_many(
                "UPDATE plugins SET stamp = ? WHERE id = ? AND content_hash = ?",
                [(stamp, plugin_id, digest) for plugin_id, digest in rows],
            )

    def _upsert(self, tx: Tx, row: PluginRow, check: Check | None) -> Written:
        current = self._locked(tx, row.id)
        if check is not None and not check(current, row):
            return Written(current, current, written=False)
        now = self._store.clock()
        values = {**row.values(), "descriptor": json_in(row.descriptor), "now": self._utc(now)}
        if current is None:
            if tx.execute(_INSERT, values) == 1:
                return Written(replace(row, registered_at=now, updated_at=now), None, True)
            # Another writer inserted the id since we looked: judge its row instead.
            current = self._locked(tx, row.id)
            if current is None or (check is not None and not check(current, row)):
                return Written(current, current, written=False)
        tx.execute(_UPDATE, values)
        stored = replace(row, registered_at=current.registered_at, updated_at=now)
        return Written(stored, current, written=True)

    def _locked(self, tx: Tx, plugin_id: str) -> PluginRow | None:
        found = tx.one(self._select_locked, {"id": plugin_id})
        return _row(found) if found is not None else None

    def _utc(self, value: datetime) -> Any:
        return time_in(value, self._db.postgres)


def _row(found: tuple[Any, ...]) -> PluginRow:
    """A row of ``_COLUMNS``, or of ``_PLAIN_COLUMNS`` (timestamps left ``None``)."""
    i, f, s, d, h, v, t, loc, m, dia, a, why, stamp, *times = found
    return PluginRow(
        id=i, family=f, source=s, descriptor=json_document(d), content_hash=h,
        version=v, trust=t, location=loc, manifest_path=m, dialect=dia,
        available=bool(a), unavailable_reason=why, stamp=stamp,
        registered_at=time_out(times[0]) if times else None,
        updated_at=time_out(times[1]) if times else None,
    )  # fmt: skip
