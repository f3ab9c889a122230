"""The yard of an execution backend's worker process (execution.ray_worker).

A worker runs what a replica hands it on the same database; it follows the registry
and the policy there instead of syncing sources, so it is built apart from
``Yard.from_settings``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plugyard.registry.registry import Registry
from plugyard.store.store import Store
from plugyard.yard.root import Yard
from plugyard.yard.settings import Settings

if TYPE_CHECKING:
    from plugyard.execution.executor import Executor

_worker_yards: list[Yard] = []


def worker_executor(settings: Settings) -> Executor:
    """The executor of an execution backend's worker (execution.ray_worker): a yard on
    the caller's database that follows the registry and policy changes other processes
    make, as a replica does. Built once per worker process and database.

    It syncs no source: the replicas did, and the registry in the store says where each
    plugin's code is (a worker missing a plugin folder must not unregister it for the
    whole fleet). Plugins handed to a replica's runtime as code objects do not exist
    here."""
    from plugyard.store.watch import ChangeWatcher

    store = Store.open(settings.database)
    yard = Yard(settings, store, Registry.over(store))
    policy = yard.policy
    watcher = ChangeWatcher.over(store, {
        "plugins": yard.registry.refresh_ids,
        "policies": lambda _subjects: policy.refresh() if policy is not None else None,
    })  # fmt: skip
    yard.registry.load()  # after the watcher's first position: nothing falls between
    watcher.start()
    _worker_yards.append(yard)  # lives as long as the worker process
    return yard.executor
