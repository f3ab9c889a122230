"""The plugin repository on SQLAlchemy Core (SQLite and PostgreSQL alike).

What a start reads (every row, without timestamps) is read on the driver's connection,
and SQLAlchemy is imported only by the other statements: a command that only reads
the registry never imports it (store/store.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from plugyard.store.plugins import Check, PluginRow, RemoveCheck, Written
from plugyard.store.rawdb import json_document, raw_db

if TYPE_CHECKING:
    from sqlalchemy import Row
    from sqlalchemy.engine import Connection

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
        if not timestamps:
            return self._list_plain(family, source)
        from sqlalchemy import select

        from plugyard.store.schema import plugins

        query = select(plugins).order_by(plugins.c.id)
        if family is not None:
            query = query.where(plugins.c.family == family)
        if source is not None:
            query = query.where(plugins.c.source == source)
        with self._store.reading() as conn:
            return tuple(_row(r) for r in conn.execute(query))

    def _list_plain(self, family: str | None, source: str | None) -> tuple[PluginRow, ...]:
        """The rows a start reads, on the driver's own connection: through SQLAlchemy's
        result rows and type processing, reading 10,000 rows took three times as long.
        Parsing the timestamps would be half of it, and a start never looks at them."""
        where = [f"{name} = :{name}" for name, value in (("family", family),
                 ("source", source)) if value is not None]  # fmt: skip
        sql = f"SELECT {_PLAIN_COLUMNS} FROM plugins"
        if where:
            sql += " WHERE " + " AND ".join(where)
        with raw_db(self._store).read() as tx:
            found = tx.all(sql + " ORDER BY id", {"family": family, "source": source})
        return tuple(
            PluginRow(
                id=i, family=f, source=s, descriptor=json_document(d), content_hash=h,
                version=v, trust=t, location=loc, manifest_path=m, dialect=dia,
                available=bool(a), unavailable_reason=why, stamp=stamp,
            )
            for i, f, s, d, h, v, t, loc, m, dia, a, why, stamp in found
        )  # fmt: skip

    # writes -------------------------------------------------------------------------

    def upsert(self, row: PluginRow, *, check: Check | None = None) -> Written:
        return self.upsert_many([row], check=check)[0]

    def upsert_many(
        self, rows: Sequence[PluginRow], *, check: Check | None = None
    ) -> tuple[Written, ...]:
        if not rows:  # a start with nothing new: no write lock, and no engine to make
            return ()
        with self._store.writing() as conn:
            return tuple(self._upsert(conn, row, check) for row in rows)

    def delete(self, plugin_id: str, *, check: RemoveCheck | None = None) -> PluginRow | None:
        from sqlalchemy import delete

        from plugyard.store.schema import plugins

        with self._store.writing() as conn:
            current = _select(conn, plugin_id, lock=True)
            if current is None or (check is not None and not check(current)):
                return None
            conn.execute(delete(plugins).where(plugins.c.id == plugin_id))
            return current

    def set_availability(
        self, plugin_id: str, available: bool, reason: str | None
    ) -> Written | None:
        from sqlalchemy import update

        from plugyard.store.schema import plugins

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

    def restamp(self, rows: Sequence[tuple[str, str]], stamp: str) -> None:
        if not rows:
            return
        with raw_db(self._store).write() as tx:
            tx.execute_many(
                "UPDATE plugins SET stamp = ? WHERE id = ? AND content_hash = ?",
                [(stamp, plugin_id, digest) for plugin_id, digest in rows],
            )

    def _upsert(self, conn: Connection, row: PluginRow, check: Check | None) -> Written:
        from sqlalchemy import update

        from plugyard.store.schema import plugins

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
    from sqlalchemy.dialects.postgresql import insert as pg_insert
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    from plugyard.store.schema import plugins

    # ON CONFLICT is spelled the same on both backends, but each dialect has its own insert.
    return pg_insert(plugins) if conn.dialect.name == "postgresql" else sqlite_insert(plugins)


def _select(conn: Connection, plugin_id: str, *, lock: bool) -> PluginRow | None:
    from sqlalchemy import select

    from plugyard.store.schema import plugins

    query = select(plugins).where(plugins.c.id == plugin_id)
    if lock and conn.dialect.name == "postgresql":
        # SQLite's BEGIN IMMEDIATE already holds the database's write lock.
        query = query.with_for_update()
    found = conn.execute(query).first()
    return _row(found) if found is not None else None


_PLAIN_COLUMNS = (
    "id, family, source, descriptor, content_hash, version, trust, location, "
    "manifest_path, dialect, available, unavailable_reason, stamp"
)


def _row(record: Row[Any]) -> PluginRow:
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
        registered_at=data["registered_at"],
        updated_at=data["updated_at"],
        stamp=data["stamp"],
    )
