"""Replicas on one store learn together: what one records, takes back or purges, the
others' memory follows from the change log — without embedding again, with the quorum
counting every replica's subjects — and a replica that fell behind the log's retention
reads everything again."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from plugyard.discovery.learning import Learning, LearningSettings
from plugyard.discovery.remembered import TOPIC, SqlRememberedRepository
from plugyard.discovery.service import DiscoveryService
from plugyard.store.changes import Retention, SqlChangeLog
from plugyard.store.store import Store
from plugyard.store.watch import ChangeWatcher, Polling

from .sample_catalog import CountingEmbedder
from .test_learning import top, wide_registry

QUERY = "is it going to snow in the Alps"


@dataclass
class Replica:
    store: Store
    svc: DiscoveryService
    embedder: CountingEmbedder
    watcher: ChangeWatcher

    def catch_up(self) -> int:
        return self.watcher.catch_up()

    def teach(self, subject: str, helpful: bool = True, query: str = QUERY) -> str:
        found = self.svc.search(query, subject=subject)
        return self.svc.feedback(
            found.search_id, "fitness", "run", helpful=helpful, subject=subject
        ).reason

    def held(self) -> int:
        return self.svc.remembered_count("fitness", "run")  # two examples and what it learned


@pytest.fixture
def replicas(database_url: str) -> Iterator[Any]:
    opened: list[Replica] = []

    def make(start: bool = True, **settings: Any) -> Replica:
        store = Store.open(database_url)
        embedder = CountingEmbedder()
        repository = SqlRememberedRepository(store, embedder.dim)
        learning = Learning(embedder, repository, LearningSettings(**settings))
        svc = DiscoveryService(wide_registry(), embedder, learning=learning)
        changes = SqlChangeLog(store)
        # Driven by hand (catch_up): the polling thread is never started.
        watcher = ChangeWatcher(
            changes,
            {TOPIC: svc.remembered_changed},
            lambda: Polling(threading.Event(), 60.0),
            start_seq=changes.latest(),
            resync=lambda: svc.remembered_changed(None),
        )
        if start:
            svc.start()
        replica = Replica(store, svc, embedder, watcher)
        opened.append(replica)
        return replica

    yield make
    for replica in opened:
        replica.svc.close()
        replica.store.close()


def test_a_request_learned_on_one_replica_lifts_on_the_other_once_it_catches_up(
    replicas: Any,
) -> None:
    a, b = replicas(quorum=1), replicas(quorum=1)
    rank = top(b.svc, QUERY, k=20).index("fitness")
    assert a.teach("ana") == "recorded"
    assert b.held() == 2  # not heard of yet
    embedded = b.embedder.texts
    assert b.catch_up() >= 1
    assert b.held() == 3
    assert b.embedder.texts == embedded  # the stored vector is this embedder's
    assert top(b.svc, QUERY, k=20).index("fitness") < rank
    # The replica that learned it hears its own change and holds it once.
    a.catch_up()
    assert a.held() == 3


def test_a_taken_back_or_purged_request_is_forgotten_on_the_other_replica(
    replicas: Any,
) -> None:
    a, b = replicas(quorum=1), replicas(quorum=1)
    rank = top(b.svc, QUERY, k=20).index("fitness")
    a.teach("ana")
    a.teach("bob")
    b.catch_up()
    assert b.held() == 4
    assert a.teach("ana", helpful=False) == "removed"
    b.catch_up()
    assert b.held() == 3
    assert a.svc.purge_memory("fitness") == 1
    b.catch_up()
    assert b.held() == 2
    assert top(b.svc, QUERY, k=20).index("fitness") == rank


def test_what_a_tool_keeps_is_kept_on_every_replica(replicas: Any) -> None:
    a, b = replicas(quorum=1, keep=1), replicas(quorum=1, keep=1)
    a.teach("ana")
    b.catch_up()
    assert b.teach("bob") == "recorded"  # the tool keeps one: ana's goes
    a.catch_up()
    assert a.held() == b.held() == 3
    assert [r.subject for r in a.svc.learning.remembered("fitness")] == ["bob"]


def test_the_quorum_counts_subjects_across_replicas(replicas: Any) -> None:
    a, b = replicas(quorum=3), replicas(quorum=3)
    a.teach("ana")
    b.teach("bob")
    a.catch_up()
    b.catch_up()
    assert a.held() == b.held() == 2  # two subjects: dormant everywhere
    a.teach("cy")
    assert a.held() == 5
    b.catch_up()
    assert b.held() == 5
    # One of them takes it back on the other replica: below quorum on both.
    assert b.teach("bob", helpful=False) == "removed"
    a.catch_up()
    assert a.held() == b.held() == 2


def test_a_replica_whose_catch_up_point_was_pruned_reads_every_row_again(
    replicas: Any,
) -> None:
    a, b = replicas(quorum=1), replicas(quorum=1)
    a.teach("ana")
    b.catch_up()
    assert b.held() == 3
    # B is away while A learns one request and takes another back, and the log of it
    # is pruned to its newest row.
    a.teach("bob")
    a.teach("ana", helpful=False)
    a.teach("cy", query="snowfall forecast for the Alps")
    assert SqlChangeLog(a.store).prune(Retention(keep_s=0, keep_last=1), time.time() + 1) >= 2
    b.catch_up()
    assert b.watcher.resyncs == 1
    assert b.held() == 4
    subjects = {r.subject for r in b.svc.learning.remembered("fitness")}
    assert subjects == {"bob", "cy"}


def test_a_replica_yet_to_build_its_index_reads_the_rows_then(replicas: Any) -> None:
    a, late = replicas(quorum=1), replicas(start=False, quorum=1)
    a.teach("ana")
    assert late.catch_up() >= 1  # nothing loaded yet: nothing to reconcile
    assert late.svc.learning.channel.count("fitness/run") == 0
    late.svc.start()
    assert late.held() == 3
