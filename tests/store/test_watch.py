"""Following the change log across two stores on one database (two replicas)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

import pytest

from plugyard.manifest.model import Operation, PluginDescriptor
from plugyard.registry.model import RegisteredPlugin
from plugyard.registry.registry import Registry
from plugyard.store.changes import SqlChangeLog
from plugyard.store.store import Store
from plugyard.store.watch import ChangeWatcher, Polling

from .rows import row

DEADLINE_S = 10.0
STORM = 10_000


def plugin(plugin_id: str, version: str = "1.0.0") -> RegisteredPlugin:
    descriptor = PluginDescriptor.model_validate(
        {
            "family": "tool",
            "id": plugin_id,
            "name": plugin_id.title(),
            "version": version,
            "description": f"The {plugin_id} plugin.",
            "operations": (Operation(id="run", description="Run it."),),
        },
        strict=False,
    )
    return RegisteredPlugin.of(descriptor, "external", dialect="homeclaw")


@pytest.fixture
def replicas(database_url: str) -> Iterator[tuple[Store, Store]]:
    first, second = Store.open(database_url), Store.open(database_url)
    yield first, second
    first.close()
    second.close()


def test_a_registration_on_one_replica_reaches_the_other(replicas: tuple[Store, Store]) -> None:
    one, two = (Registry.over(s) for s in replicas)
    one.load()
    two.load()
    heard: list[str] = []
    two.subscribe(lambda event: heard.append(f"{event.kind}:{event.plugin_id}"))
    watcher = ChangeWatcher.over(replicas[1], {"plugins": two.refresh_ids}, poll_s=0.05)
    watcher.start()
    try:
        one.register(plugin("alpha"))
        one.register(plugin("alpha", "1.1.0"))
        one.set_availability("alpha", False, "down")
        one.register(plugin("beta"))
        one.unregister("beta")
        assert watcher.wait_for(SqlChangeLog(replicas[0]).latest(), DEADLINE_S)
    finally:
        watcher.stop()
    found = two.require("alpha")
    assert (found.descriptor.version, found.available) == ("1.1.0", False)
    assert "beta" not in two
    # Coalesced: beta may have come and gone before the other replica looked.
    assert heard[0] == "registered:alpha"


def test_a_storm_is_applied_in_few_batches(replicas: tuple[Store, Store]) -> None:
    # 10,000 registrations in one go: read 1,000 at a time, applied as whole-table
    # refreshes, not one re-read per plugin.
    one, two = (Registry.over(s) for s in replicas)
    two.load()
    calls: list[int] = []

    def follow(ids: Sequence[str]) -> None:
        calls.append(len(ids))
        two.refresh_ids(ids)

    watcher = ChangeWatcher.over(replicas[1], {"plugins": follow}, poll_s=0.05)
    one.register_many([plugin(f"p{i:05d}") for i in range(STORM)])
    assert watcher.catch_up() == STORM
    assert len(two) == STORM and sum(calls) == STORM and len(calls) == STORM // 1000


class _Flaky:
    """Wakeups whose connection fails the first ``failures`` times it is made."""

    def __init__(self, stop: threading.Event, failures: int) -> None:
        self.stop, self.failures, self.made = stop, failures, 0

    def __call__(self) -> Polling:
        self.made += 1
        if self.made <= self.failures:
            raise ConnectionError("the database went away")
        return Polling(self.stop, 0.01)


def test_the_watcher_catches_up_after_losing_its_connection() -> None:
    store = Store.open(":memory:")
    changes = SqlChangeLog(store)
    applied: list[str] = []
    stop = threading.Event()
    wakeups = _Flaky(stop, failures=2)
    watcher = ChangeWatcher(
        changes,
        {"plugins": lambda ids: applied.extend(ids)},
        wakeups,
        start_seq=0,
        stop=stop,
    )
    for name in ("a", "b", "a"):
        store.plugins.upsert(row(name))
    watcher.start()
    try:
        assert watcher.wait_for(changes.latest(), DEADLINE_S)
        store.plugins.upsert(row("c"))
        assert watcher.wait_for(changes.latest(), DEADLINE_S)
    finally:
        watcher.stop()
    assert wakeups.made == 3
    assert applied == ["a", "b", "c"]
