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

from plugyard.store.rawdb import RawDb, raw_db

if TYPE_CHECKING:
    from plugyard.store.store import Store


class Leases(Protocol):
    def try_hold(self, name: str, holder: str, ttl_s: float) -> bool:
        """Take or renew ``name`` for ``holder`` until now + ``ttl_s``; ``False`` while
        another holder's lease runs."""
        ...

    def release(self, name: str, holder: str) -> None: ...


#: Take a free or lapsed lease, or renew one's own, in one statement: the conflicting
#: row is locked while ``WHERE`` is judged (PostgreSQL re-reads it once a concurrent
#: taker commits; SQLite's BEGIN IMMEDIATE admits one writer at a time), so of any
#: number of takers one changes the row.
_HOLD = (
    "INSERT INTO leases (name, holder, until) VALUES (:name, :holder, :until) "
    "ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until "
    "WHERE leases.holder = excluded.holder OR leases.until <= :now"
)


class SqlLeases:
    def __init__(self, store: Store, clock: Callable[[], float] = time.time) -> None:
        self._db: RawDb = raw_db(store)
        self._clock = clock

    def try_hold(self, name: str, holder: str, ttl_s: float) -> bool:
        now = self._clock()
        with self._db.write() as tx:
            taken = tx.execute(
                _HOLD, {"name": name, "holder": holder, "until": now + ttl_s, "now": now}
            )
        return taken == 1

    def release(self, name: str, holder: str) -> None:
        with self._db.write() as tx:
            tx.execute(
                "DELETE FROM leases WHERE name = :name AND holder = :holder",
                {"name": name, "holder": holder},
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
