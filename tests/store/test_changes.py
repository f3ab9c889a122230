"""The change log: triggers write one row per change, in the change's transaction."""

from __future__ import annotations

import pytest

from plugyard.store.changes import MemoryChangeLog, SqlChangeLog
from plugyard.store.keys import SqlKeyRepository
from plugyard.store.plugins import PluginRow
from plugyard.store.store import Store

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


def test_memory_change_log() -> None:
    changes = MemoryChangeLog()
    first = changes.append("plugins", "a")
    changes.append("api_keys", "k")
    assert changes.latest() == 2
    assert [c.subject for c in changes.after(first.seq)] == ["k"]
