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

from plugyard.store.rawdb import RawDb, raw_db

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


_MAKE = (
    "INSERT INTO rate_buckets (plugin_id, bucket, tokens, at) VALUES (:p, :b, :tokens, :at) "
    "ON CONFLICT (plugin_id, bucket) DO NOTHING"
)
_READ = "SELECT tokens, at FROM rate_buckets WHERE plugin_id = :p AND bucket = :b"
_SET = "UPDATE rate_buckets SET tokens = :tokens, at = :at WHERE plugin_id = :p AND bucket = :b"


class SqlRateBuckets:
    def __init__(self, store: Store, clock: Callable[[], float] = time.time) -> None:
        self._db: RawDb = raw_db(store)
        self._clock = clock
        # SQLite's BEGIN IMMEDIATE already holds the database's write lock.
        self._read = _READ + " FOR UPDATE" if self._db.postgres else _READ

    def take(
        self, plugin_id: str, bucket: str, cost: float, capacity: float, per_second: float
    ) -> bool:
        key = {"p": plugin_id, "b": bucket}
        with self._db.write() as tx:
            now = self._clock()
            # A new bucket starts full; two replicas creating it at once both succeed.
            tx.execute(_MAKE, {**key, "tokens": capacity, "at": now})
            found = tx.one(self._read, key)
            assert found is not None  # made above when it was missing
            tokens = _refill(float(found[0]), float(found[1]), now, capacity, per_second)
            ok = tokens >= cost
            tx.execute(_SET, {**key, "tokens": tokens - cost if ok else tokens, "at": now})
        return ok
