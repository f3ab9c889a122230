"""Token buckets kept in the store, so ``host.rate_limit`` holds across replicas.

Each take is one short write transaction on the bucket's row: read the tokens, refill
them for the time since, take ``cost`` if there are enough. Replicas serialise on the
row (PostgreSQL ``FOR UPDATE``; SQLite's single writer), so N per minute admits N in
the fleet. Times are wall-clock epoch seconds: monotonic clocks differ per process.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from plugyard.store.schema import rate_buckets as table

if TYPE_CHECKING:
    from plugyard.store.store import Store


class RateBuckets(Protocol):
    def take(
        self, plugin_id: str, bucket: str, cost: float, capacity: float, per_second: float
    ) -> bool:
        """Take ``cost`` tokens from a bucket of ``capacity`` refilled at ``per_second``
        (a new bucket starts full); ``False`` when too few are left."""
        ...


def _refill(tokens: float, then: float, now: float, capacity: float, rate: float) -> float:
    return min(capacity, tokens + max(0.0, now - then) * rate)


class SqlRateBuckets:
    def __init__(self, store: Store, clock: Callable[[], float] = time.time) -> None:
        self._store, self._clock = store, clock

    def take(
        self, plugin_id: str, bucket: str, cost: float, capacity: float, per_second: float
    ) -> bool:
        key = (table.c.plugin_id == plugin_id) & (table.c.bucket == bucket)
        with self._store.writing() as connection:
            now = self._clock()
            # A new bucket starts full; two replicas creating it at once both succeed.
            insert = pg_insert if connection.dialect.name == "postgresql" else sqlite_insert
            connection.execute(
                insert(table)
                .values(plugin_id=plugin_id, bucket=bucket, tokens=capacity, at=now)
                .on_conflict_do_nothing()
            )
            query = select(table.c.tokens, table.c.at).where(key)
            if connection.dialect.name == "postgresql":
                query = query.with_for_update()
            found = connection.execute(query).one()
            tokens = _refill(float(found.tokens), float(found.at), now, capacity, per_second)
            ok = tokens >= cost
            connection.execute(
                update(table).where(key).values(tokens=tokens - cost if ok else tokens, at=now)
            )
            return ok
