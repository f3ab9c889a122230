"""Leases: a named job held by one replica at a time, for a while.

A feed tick, a cleanup, anything that must run once per fleet rather than once per
replica: each replica asks :meth:`try_hold` before running it; the one that gets it
runs, the others skip this round. A lease lapses after ``ttl_s``, so a replica that
died (kill -9) frees its jobs without anyone's help; the holder renews by asking again.
A row rather than an advisory lock: it works on SQLite as well, and survives the
connection that took it — a lock would tie the job to one pooled connection.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from sqlalchemy import delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from plugyard.store.schema import leases

if TYPE_CHECKING:
    from plugyard.store.store import Store


class Leases(Protocol):
    def try_hold(self, name: str, holder: str, ttl_s: float) -> bool:
        """Take or renew ``name`` for ``holder`` until now + ``ttl_s``; ``False`` while
        another holder's lease runs."""
        ...

    def release(self, name: str, holder: str) -> None: ...


class SqlLeases:
    def __init__(self, store: Store, clock: Callable[[], float] = time.time) -> None:
        self._store, self._clock = store, clock

    def try_hold(self, name: str, holder: str, ttl_s: float) -> bool:
        now = self._clock()
        with self._store.writing() as connection:
            # The write transaction serialises takers: SQLite by BEGIN IMMEDIATE,
            # PostgreSQL by the row lock (FOR UPDATE) once the row exists.
            insert = pg_insert if connection.dialect.name == "postgresql" else sqlite_insert
            made = connection.execute(
                insert(leases)
                .values(name=name, holder=holder, until=now + ttl_s)
                .on_conflict_do_nothing()
                .returning(leases.c.name)
            )
            # The row coming back, not rowcount (psycopg answers -1 after ON CONFLICT).
            if made.first() is not None:
                return True
            query = select(leases.c.holder, leases.c.until).where(leases.c.name == name)
            if connection.dialect.name == "postgresql":
                query = query.with_for_update()
            found = connection.execute(query).one()
            if found.holder != holder and found.until > now:
                return False
            connection.execute(
                update(leases).where(leases.c.name == name).values(holder=holder, until=now + ttl_s)
            )
            return True

    def release(self, name: str, holder: str) -> None:
        with self._store.writing() as connection:
            connection.execute(
                delete(leases).where(leases.c.name == name, leases.c.holder == holder)
            )


def once_per_fleet(
    leases: Leases, name: str, holder: str, ttl_s: float, job: Callable[[], object]
) -> bool:
    """Run ``job`` if this replica holds ``name`` (a feed tick: ``ttl_s`` a little
    longer than the tick's period, so the holder renews before anyone else may take
    it); ``False`` when another replica holds it and nothing ran here."""
    if not leases.try_hold(name, holder, ttl_s):
        return False
    job()
    return True
