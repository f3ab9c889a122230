"""The change log: triggers write one row per change, in the change's transaction."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import delete, insert, update

from plugyard.store.changes import Retention, SqlChangeLog, prune_in_fleet
from plugyard.store.keys import SqlKeyRepository
from plugyard.store.leases import SqlLeases
from plugyard.store.plugins import PluginRow
from plugyard.store.schema import remembered_requests
from plugyard.store.store import Store
from plugyard.store.watch import ChangeWatcher, Polling

from .rows import row


def test_plugin_writes_are_logged_in_order(store: Store) -> None:
    changes = SqlChangeLog(store)
    assert changes.latest() == 0
    store.plugins.upsert(row("alpha"))
    store.plugins.upsert_many([row("beta"), row("gamma")])
    store.plugins.set_availability("beta", False, "down")
    store.plugins.delete("alpha")
    logged = changes.after(0)
    assert [(c.topic, c.subject) for c in logged] == [
        ("plugins", "alpha"),
        ("plugins", "beta"),
        ("plugins", "gamma"),
        ("plugins", "beta"),
        ("plugins", "alpha"),
    ]
    assert [c.seq for c in logged] == sorted(c.seq for c in logged)
    assert changes.latest() == logged[-1].seq
    assert [c.subject for c in changes.after(logged[2].seq, limit=1)] == ["beta"]


def test_a_rolled_back_change_leaves_no_row(store: Store) -> None:
    def refuse_the_second(stored: PluginRow | None, incoming: PluginRow) -> bool:
        if incoming.id == "second":  # the first row is already written by now
            raise RuntimeError("roll back")
        return True

    with pytest.raises(RuntimeError):
        store.plugins.upsert_many([row("first"), row("second")], check=refuse_the_second)
    assert store.plugins.get("first") is None
    assert SqlChangeLog(store).latest() == 0


def test_key_revocations_are_logged(store: Store) -> None:
    keys = SqlKeyRepository(store)
    info, _key = keys.create("alice", roles=("reader",))
    keys.revoke(info.id)
    topics = [c.topic for c in SqlChangeLog(store).after(0)]
    assert "api_keys" in topics and topics.count("api_keys") >= 2


def test_remembered_requests_log_their_tool_when_added_or_deleted(store: Store) -> None:
    values = {"plugin_id": "p", "subject": "ana", "query": "q", "created_at": 1.0}
    with store.writing() as conn:
        conn.execute(insert(remembered_requests).values(doc_id="p/run", digest="a", **values))
        conn.execute(insert(remembered_requests).values(doc_id="p", digest="b", **values))
    with store.writing() as conn:  # a cached vector rewritten: nothing to hear of
        conn.execute(update(remembered_requests).values(embedder="m", vector=b"\0"))
    with store.writing() as conn:
        conn.execute(delete(remembered_requests).where(remembered_requests.c.doc_id == "p"))
    logged = [(c.topic, c.subject) for c in SqlChangeLog(store).after(0)]
    assert logged == [
        ("remembered_requests", "p/run"),
        ("remembered_requests", "p"),
        ("remembered_requests", "p"),
    ]


def test_pruning_keeps_the_recent_rows_and_the_last_ones(store: Store) -> None:
    changes = SqlChangeLog(store)
    for i in range(6):
        store.plugins.upsert(row(f"p{i}"))
    seqs = [c.seq for c in changes.after(0)]
    now = time.time()
    # Everything is recent: nothing goes, whatever keep_last says.
    assert changes.prune(Retention(keep_s=3600, keep_last=1), now) == 0
    # Old enough: all but the last two go.
    assert changes.prune(Retention(keep_s=3600, keep_last=2), now + 7200) == 4
    assert [c.seq for c in changes.after(0)] == seqs[-2:]
    assert changes.oldest() == seqs[-2]
    # The newest row always stays, so seq goes on growing after it.
    assert changes.prune(Retention(keep_s=0, keep_last=1), now + 7200) == 1
    store.plugins.upsert(row("late"))
    assert changes.latest() > seqs[-1]


def test_retention_refuses_to_drop_the_newest_row() -> None:
    with pytest.raises(ValueError, match="keep_last"):
        Retention(keep_last=0)


def test_one_replica_of_the_fleet_prunes_per_round(store: Store) -> None:
    for name in ("alpha", "beta", "gamma"):
        store.plugins.upsert(row(name))
    leases = SqlLeases(store)
    retention = Retention(keep_s=0, keep_last=1, every_s=60)
    later = time.time() + 1
    assert prune_in_fleet(store, leases, "replica-a", retention, lambda: later) == 2
    assert prune_in_fleet(store, leases, "replica-b", retention, lambda: later) is None
    store.plugins.upsert(row("delta"))
    assert prune_in_fleet(store, leases, "replica-a", retention, lambda: later + 1) == 1


def test_a_listener_whose_catch_up_point_was_pruned_reads_everything_again(
    store: Store,
) -> None:
    changes = SqlChangeLog(store)
    store.plugins.upsert(row("alpha"))
    applied: list[str] = []
    resyncs: list[int] = []
    watcher = ChangeWatcher(
        changes,
        {"plugins": lambda ids: applied.extend(ids)},
        lambda: Polling(threading.Event(), 0.01),
        start_seq=changes.latest(),
        resync=lambda: resyncs.append(changes.latest()),
    )
    # The listener is away while three changes are made and all but the last pruned.
    for name in ("beta", "gamma", "delta"):
        store.plugins.upsert(row(name))
    assert changes.prune(Retention(keep_s=0, keep_last=1), time.time() + 1) == 3
    watcher.catch_up()
    assert watcher.resyncs == 1 and applied == []  # "delta" was in the full re-read
    assert watcher.seq == changes.latest()
    store.plugins.upsert(row("epsilon"))
    watcher.catch_up()
    assert applied == ["epsilon"] and watcher.resyncs == 1


def test_a_listener_ahead_of_the_pruning_just_catches_up(store: Store) -> None:
    changes = SqlChangeLog(store)
    for name in ("alpha", "beta"):
        store.plugins.upsert(row(name))
    applied: list[str] = []
    watcher = ChangeWatcher(
        changes,
        {"plugins": lambda ids: applied.extend(ids)},
        lambda: Polling(threading.Event(), 0.01),
        start_seq=changes.latest(),
        resync=lambda: pytest.fail("nothing it needed was pruned"),
    )
    store.plugins.upsert(row("gamma"))
    assert changes.prune(Retention(keep_s=0, keep_last=2), time.time() + 1) == 1  # alpha
    watcher.catch_up()
    assert applied == ["gamma"] and watcher.resyncs == 0
