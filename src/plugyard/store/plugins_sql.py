"""The plugin repository on SQLAlchemy Core (SQLite and PostgreSQL alike)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from sqlalchemy import Row, delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection

from plugyard.store.plugins import Check, PluginRow, RemoveCheck, Written
from plugyard.store.schema import plugins

if TYPE_CHECKING:
    from plugyard.store.store import Store


class SqlPluginRepository:
    def __init__(self, store: Store) -> None:
        self._store = store

    # reads --------------------------------------------------------------------------

    def get(self, plugin_id: str) -> PluginRow | None:
        with self._store.reading() as conn:
            return _select(conn, plugin_id, lock=False)

    def list(
        self, *, family: str | None = None, source: str | None = None, timestamps: bool = True
    ) -> tuple[PluginRow, ...]:
        # Parsing two timestamps per row is half the cost of reading 10,000 rows at a
        # start, which never looks at them.
        columns = plugins.c if timestamps else [c for c in plugins.c if c.name not in _STAMPS]
        query = select(*columns).order_by(plugins.c.id)
        if family is not None:
            query = query.where(plugins.c.family == family)
        if source is not None:
            query = query.where(plugins.c.source == source)
        with self._store.reading() as conn:
            return tuple(_row(r, timestamps=timestamps) for r in conn.execute(query))

    # writes -------------------------------------------------------------------------

    def upsert(self, row: PluginRow, *, check: Check | None = None) -> Written:
        return self.upsert_many([row], check=check)[0]

    def upsert_many(
        self, rows: Sequence[PluginRow], *, check: Check | None = None
    ) -> tuple[Written, ...]:
        with self._store.writing() as conn:
            return tuple(self._upsert(conn, row, check) for row in rows)

    def delete(self, plugin_id: str, *, check: RemoveCheck | None = None) -> PluginRow | None:
        with self._store.writing() as conn:
            current = _select(conn, plugin_id, lock=True)
            if current is None or (check is not None and not check(current)):
                return None
            conn.execute(delete(plugins).where(plugins.c.id == plugin_id))
            return current

    def set_availability(
        self, plugin_id: str, available: bool, reason: str | None
    ) -> Written | None:
        with self._store.writing() as conn:
            current = _select(conn, plugin_id, lock=True)
            if current is None:
                return None
            if current.available == available and current.unavailable_reason == reason:
                return Written(current, current, written=False)
            now = self._store.clock()
            conn.execute(
                update(plugins)
                .where(plugins.c.id == plugin_id)
                .values(available=available, unavailable_reason=reason, updated_at=now)
            )
            changed = replace(
                current, available=available, unavailable_reason=reason, updated_at=now
            )
            return Written(changed, current, written=True)

    def _upsert(self, conn: Connection, row: PluginRow, check: Check | None) -> Written:
        current = _select(conn, row.id, lock=True)
        if check is not None and not check(current, row):
            return Written(current, current, written=False)
        now = self._store.clock()
        if current is None:
            inserted = conn.execute(
                _insert(conn)
                .values(**row.values(), registered_at=now, updated_at=now)
                .on_conflict_do_nothing(index_elements=["id"])
                .returning(plugins.c.id)
            )
            if inserted.first() is not None:
                return Written(replace(row, registered_at=now, updated_at=now), None, True)
            # Another writer inserted the id since we looked: judge its row instead.
            current = _select(conn, row.id, lock=True)
            if current is None or (check is not None and not check(current, row)):
                return Written(current, current, written=False)
        conn.execute(
            update(plugins).where(plugins.c.id == row.id).values(**row.values(), updated_at=now)
        )
        stored = replace(row, registered_at=current.registered_at, updated_at=now)
        return Written(stored, current, written=True)


def _insert(conn: Connection) -> Any:
    # ON CONFLICT is spelled the same on both backends, but each dialect has its own insert.
    return pg_insert(plugins) if conn.dialect.name == "postgresql" else sqlite_insert(plugins)


def _select(conn: Connection, plugin_id: str, *, lock: bool) -> PluginRow | None:
    query = select(plugins).where(plugins.c.id == plugin_id)
    if lock and conn.dialect.name == "postgresql":
        # SQLite's BEGIN IMMEDIATE already holds the database's write lock.
        query = query.with_for_update()
    found = conn.execute(query).first()
    return _row(found) if found is not None else None


_STAMPS = frozenset({"registered_at", "updated_at"})


def _row(record: Row[Any], *, timestamps: bool = True) -> PluginRow:
    data = record._mapping
    return PluginRow(
        id=data["id"],
        family=data["family"],
        source=data["source"],
        descriptor=data["descriptor"],
        content_hash=data["content_hash"],
        version=data["version"],
        trust=data["trust"],
        location=data["location"],
        manifest_path=data["manifest_path"],
        dialect=data["dialect"],
        available=data["available"],
        unavailable_reason=data["unavailable_reason"],
        registered_at=data["registered_at"] if timestamps else None,
        updated_at=data["updated_at"] if timestamps else None,
    )
