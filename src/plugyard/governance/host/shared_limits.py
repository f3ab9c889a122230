"""``host.rate_limit`` over the store's buckets: the same object a plugin gets from
:class:`~plugyard.governance.host.services.RateLimit`, but a limit of N holds across
every replica on the database instead of N per replica."""

from __future__ import annotations

from plugyard.execution.host import CapabilityError
from plugyard.store.rate_buckets import RateBuckets


class SharedRateLimit:
    def __init__(
        self,
        buckets: RateBuckets,
        plugin_id: str,
        capacity: float = 60.0,
        per_second: float = 1.0,
    ) -> None:
        self._buckets, self._plugin = buckets, plugin_id
        self._capacity, self._rate = capacity, per_second

    def try_acquire(self, bucket: str = "default", cost: float = 1.0) -> bool:
        return self._buckets.take(self._plugin, bucket, cost, self._capacity, self._rate)

    def limit(self, bucket: str = "default", cost: float = 1.0) -> None:
        if not self.try_acquire(bucket, cost):
            raise CapabilityError(f"rate limit of bucket {bucket!r} reached", code="rate_limited")
