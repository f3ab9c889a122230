"""A database that goes away and comes back, and a replica older than the schema."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from plugyard.errors import StoreError
from plugyard.registry.registry import Registry
from plugyard.store.changes import SqlChangeLog
from plugyard.store.leases import SqlLeases
from plugyard.store.store import Store
from plugyard.store.watch import ChangeWatcher

from .rows import row
from .test_watch import DEADLINE_S, plugin


def _drop_other_connections(store: Store) -> None:
    # What a restart of the server does to every replica's connections.
    with store.writing() as connection:
        connection.execute(
            text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        )


def test_an_older_replica_refuses_a_newer_schema(store: Store, database_url: str) -> None:
    with store.writing() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    with pytest.raises(StoreError) as refused:
        Store.open(database_url)
    assert refused.value.code == "schema_too_new"


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_replicas_recover_when_connections_are_dropped(database_url: str) -> None:
    one, two = Store.open(database_url), Store.open(database_url)
    try:
        registry = Registry.over(two)
        registry.load()
        watcher = ChangeWatcher.over(two, {"plugins": registry.refresh_ids}, safety_s=0.2)
        watcher.start()
        try:
            one.plugins.upsert(row("before"))
            _drop_other_connections(one)
            Registry.over(one).register(plugin("after"))
            assert watcher.wait_for(SqlChangeLog(one).latest(), DEADLINE_S)
        finally:
            watcher.stop()
        assert "after" in registry
        assert two.plugins.get("before") is not None  # the pool reconnected by itself
    finally:
        one.close()
        two.close()


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_dropped_held_connection_is_replaced_by_the_next_transaction(
    database_url: str,
) -> None:
    one, two = Store.open(database_url), Store.open(database_url)
    try:
        leases = SqlLeases(two)
        assert leases.try_hold("tick", "a", 60)  # two's held connection, now open
        _drop_other_connections(one)
        assert leases.try_hold("tick", "a", 60)
        assert not SqlLeases(one).try_hold("tick", "b", 60)
    finally:
        one.close()
        two.close()
