"""What a serving process keeps doing beside the requests (HomeClaw §4, "Sync"):

- at start, register what HomeClaw's ``external_plugins.json`` holds and the store
  lacks, and build the search index — so the first user does not pay for it;
- follow the store's change log (LISTEN/NOTIFY on PostgreSQL, polling on SQLite), so a
  plugin, key or policy another replica changed applies here within about a second;
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
from collections.abc import Callable, Sequence

from plugyard.errors import PlugyardError
from plugyard.store.watch import ChangeWatcher
from plugyard.yard import Yard

log = logging.getLogger("plugyard.server")


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
    key cache and the policy book drop what they hold. Started by the caller."""
    policy = yard.policy

    def keys_changed(_subjects: Sequence[str]) -> None:
        forget_keys()

    def policy_changed(_subjects: Sequence[str]) -> None:
        if policy is not None:
            policy.refresh()

    watcher = ChangeWatcher.over(
        yard.store,
        {
            "plugins": yard.registry.refresh_ids,
            "api_keys": keys_changed,
            "api_subjects": keys_changed,
            "policies": policy_changed,
        },
    )
    # What changed between the yard reading the store and the watcher's first seq.
    yard.registry.refresh()
    return watcher
