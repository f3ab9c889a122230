"""What a serving process keeps doing beside the requests (HomeClaw §4, "Sync"):

- at start, register what HomeClaw's ``external_plugins.json`` holds and the store
  lacks, and build the search index — so the first user does not pay for it;
- follow the store's change log (LISTEN/NOTIFY on PostgreSQL, polling on SQLite), so a
  plugin, key, policy or learned request another replica changed applies here within
  about a second;
- on a timer and under a lease (one replica of the fleet at a time), prune the change
  log to its retention (store/changes.py);
- on a timer, read the registry again from the store, so plugins another process
  registered on the same database (the CLI beside a server) are callable and searchable
  here too; the index follows the registry's events.

Failures are logged and retried on the next tick: a server never stops serving because
its background work failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from plugyard.deferred import built
from plugyard.errors import PlugyardError
from plugyard.store.changes import Retention, prune_in_fleet
from plugyard.store.leases import SqlLeases
from plugyard.store.watch import ChangeWatcher
from plugyard.yard import Yard

if TYPE_CHECKING:
    from plugyard.discovery.service import DiscoveryService

log = logging.getLogger("plugyard.server")
#: The change log topic of learned requests (discovery/remembered.py): a literal, so
#: following changes does not import discovery (its model) before it is used.
REMEMBERED = "remembered_requests"


async def at_start(yard: Yard) -> None:
    """Before the first request: the external registrations of HomeClaw's file."""
    try:
        await yard.sync_external_file()
    except PlugyardError as exc:
        log.warning("external plugins file not read: %s: %s", exc.code, exc.message)


async def keep_in_step(
    yard: Yard, stop: asyncio.Event, *, index_at_start: bool, refresh_s: float
) -> None:
    if index_at_start:
        try:
            await asyncio.to_thread(yard.discovery.start)
        except Exception:  # a missing model must not stop the server; search says why
            log.exception("the search index could not be built at start")
    if refresh_s <= 0:
        return
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=refresh_s)
        if stop.is_set():
            return
        try:
            await asyncio.to_thread(yard.registry.refresh)
        except Exception:
            log.exception("the registry could not be read again from the store")


class FeedLoop:
    """The feed scheduler, running by itself while the server serves: due feeds and
    ``host.scheduler`` jobs run every ``interval_s`` (each tick claimed in the store, so
    replicas sharing it never run one twice). A failing pass is logged; the next one
    comes all the same."""

    def __init__(self, yard: Yard, interval_s: float) -> None:
        self._yard, self._interval = yard, interval_s
        self.passes = 0
        self._passed = asyncio.Condition()

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self._yard.feeds.run_due()
            except Exception:
                log.exception("the due feeds could not be run")
            async with self._passed:
                self.passes += 1
                self._passed.notify_all()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=self._interval)

    async def wait_passes(self, count: int) -> int:
        """Wait until ``count`` passes have run (for tests and probes)."""
        async with self._passed:
            await self._passed.wait_for(lambda: self.passes >= count)
        return self.passes


def follow_changes(yard: Yard, forget_keys: Callable[[], None]) -> ChangeWatcher:
    """Hear of what other replicas change on the same database (store/watch.py): the
    registry re-reads the plugins named (so the search index follows its events), the
    key cache and the policy book drop what they hold, discovery's memory re-reads the
    tools whose learned requests changed. Started by the caller."""
    policy = yard.policy

    def keys_changed(_subjects: Sequence[str]) -> None:
        forget_keys()

    def policy_changed(_subjects: Sequence[str]) -> None:
        if policy is not None:
            policy.refresh()

    def remembered_changed(tools: Sequence[str] | None) -> None:
        # Not built yet: it reads the store's rows when its index is first built.
        discovery: DiscoveryService | None = built(yard, "discovery")
        if discovery is not None:
            discovery.remembered_changed(tools)

    def everything() -> None:
        # Away longer than the change log keeps: what changed cannot be listed.
        yard.registry.refresh()
        forget_keys()
        policy_changed(())
        remembered_changed(None)

    watcher = ChangeWatcher.over(
        yard.store,
        {
            "plugins": yard.registry.refresh_ids,
            "api_keys": keys_changed,
            "api_subjects": keys_changed,
            "policies": policy_changed,
            REMEMBERED: remembered_changed,
        },
        resync=everything,
    )
    # What changed between the yard reading the store and the watcher's first seq.
    yard.registry.refresh()
    return watcher


async def prune_changes(yard: Yard, stop: asyncio.Event, retention: Retention) -> None:
    """Every ``retention.every_s``, prune the change log if this replica holds the
    lease; the others skip the round."""
    holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    leases = SqlLeases(yard.store)
    while not stop.is_set():
        try:
            pruned = await asyncio.to_thread(prune_in_fleet, yard.store, leases, holder, retention)
            if pruned:
                log.info("pruned %d change log rows", pruned)
        except Exception:
            log.exception("the change log could not be pruned")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=retention.every_s)
