"""Leases and shared rate-limit buckets: once per fleet, N per fleet."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from plugyard.store.leases import SqlLeases, once_per_fleet
from plugyard.store.rate_buckets import SqlRateBuckets
from plugyard.store.store import Store


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_lease_has_one_holder_until_it_lapses(store: Store) -> None:
    clock = Clock()
    leases = SqlLeases(store, clock)
    clock.now = 1000.0
    assert leases.try_hold("feeds", "a", 30)
    assert not leases.try_hold("feeds", "b", 30)
    assert leases.try_hold("feeds", "a", 30)  # the holder renews
    clock.now += 31
    assert leases.try_hold("feeds", "b", 30)  # a died: its lease lapsed
    leases.release("feeds", "b")
    assert leases.try_hold("feeds", "a", 30)


def test_concurrent_takers_get_one_lease(database_url: str) -> None:
    stores = [Store.open(database_url) for _ in range(2)]
    try:
        takers = [SqlLeases(stores[i % 2]) for i in range(8)]
        with ThreadPoolExecutor(8) as pool:
            won = list(pool.map(lambda i: takers[i].try_hold("tick", f"r{i}", 60), range(8)))
    finally:
        for opened in stores:
            opened.close()
    assert won.count(True) == 1


def test_a_shared_bucket_admits_its_capacity_across_replicas(database_url: str) -> None:
    stores = [Store.open(database_url) for _ in range(2)]
    try:
        buckets = [SqlRateBuckets(s) for s in stores]
        with ThreadPoolExecutor(8) as pool:
            admitted = list(
                pool.map(lambda i: buckets[i % 2].take("p", "default", 1, 10, 0.0), range(30))
            )
    finally:
        for opened in stores:
            opened.close()
    assert admitted.count(True) == 10


def test_buckets_refill_with_time(store: Store) -> None:
    clock = Clock()
    buckets = SqlRateBuckets(store, clock)
    clock.now = 1000.0
    assert buckets.take("p", "b", 2, 2, 1.0)
    assert not buckets.take("p", "b", 1, 2, 1.0)
    clock.now += 1.0
    assert buckets.take("p", "b", 1, 2, 1.0)


def test_a_job_runs_once_per_fleet(store: Store) -> None:
    ran: list[str] = []
    replicas = [SqlLeases(store), SqlLeases(store)]
    for holder, leases in zip(("a", "b"), replicas, strict=True):
        once_per_fleet(leases, "feeds:tick", holder, 15, lambda h=holder: ran.append(h))
    assert ran == ["a"]
