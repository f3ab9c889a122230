"""The feed scheduler: add feeds, and run the due ones.

A feed names an operation of a plugin, its parameters, a schedule and an owner. Only
operations a plugin lets run unattended may be scheduled (Shu ``default_feed_op`` /
``allowed_feed_ops``; otherwise ``invalid_feed_op``), and that is checked again at each
run; for a plugin that takes its op as a parameter, the op is ``params.op`` of its one
operation (:mod:`.ops`). A run is an ordinary executor call *as the owner* — same
policy, approvals, secrets and audit as any call — with the feed's last ``next_cursor``,
its watermark and its per-source watermarks in the call's session
(``context["session"]``: ``cursor``, ``watermark``, ``watermarks``). The result's status,
data and ``next_cursor`` are stored per feed, its ``data["watermark"]`` and each entry of
``data["watermarks"]`` (source → watermark) for the next run (Shu's Source Sync Pattern).
Each tick is claimed in the store first, so two schedulers never run it twice. The call
itself goes to the yard's execution backend (``runner``: the executor, or a Ray task
that runs it through an executor on a worker — docs/scaling.md#ray).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from plugyard.errors import GovernanceError
from plugyard.execution.executor import CallRequest, Executor, new_request_id
from plugyard.execution.result import Result, failure
from plugyard.feeds.ops import feed_call
from plugyard.feeds.schedule import check, first_run, next_run
from plugyard.registry.model import RegisteredPlugin
from plugyard.runtimes.base import CallContext
from plugyard.store.feeds import FeedRepository, FeedRow
from plugyard.store.kv import KeyValueRepository
from plugyard.telemetry import traced

_MAX_STORED_RESULT = 64 * 1024
_NEVER = 1e18  # a time no schedule reaches: where one-shot jobs park


class PluginLookup(Protocol):
    def find(self, plugin_id: str) -> RegisteredPlugin | None: ...


class Runner(Protocol):
    async def call(self, request: CallRequest) -> Result: ...


@dataclass(frozen=True, slots=True)
class Tick:
    feed_id: str
    status: str
    error_code: str | None
    next_cursor: str | None


class FeedScheduler:
    def __init__(
        self,
        executor: Executor,
        feeds: FeedRepository,
        kv: KeyValueRepository,
        plugins: PluginLookup,
        *,
        clock: Callable[[], float] = time.time,
        runner: Runner | None = None,
    ) -> None:
        self._executor, self._feeds, self._kv, self._plugins = executor, feeds, kv, plugins
        self._runner: Runner = runner or executor
        self._clock = clock

    def add(
        self,
        *,
        owner: str,
        plugin_id: str,
        operation: str | None = None,
        params: Mapping[str, Any] | None = None,
        interval_s: float | None = None,
        cron: str | None = None,
        roles: Iterable[str] = (),
    ) -> FeedRow:
        check(interval_s, cron)
        plugin = self._plugins.find(plugin_id)
        if plugin is None:
            raise GovernanceError(f"no plugin {plugin_id!r}", code="plugin_not_found")
        call = feed_call(plugin.descriptor, operation, params)
        now = self._clock()
        row = FeedRow(
            id="feed-" + secrets.token_hex(8),
            owner=owner,
            roles=tuple(roles),
            plugin_id=plugin_id,
            operation=call.operation,
            params=call.params,
            interval_s=interval_s,
            cron=cron,
            enabled=True,
            next_run_at=first_run(interval_s, cron, now),
            created_at=now,
        )
        self._feeds.create(row)
        return row

    def all(self, owner: str | None = None) -> list[FeedRow]:
        return self._feeds.all(owner)

    def get(self, feed_id: str) -> FeedRow:
        row = self._feeds.get(feed_id)
        if row is None:
            raise GovernanceError(f"no feed {feed_id!r}", code="feed_not_found")
        return row

    def delete(self, feed_id: str) -> None:
        if not self._feeds.delete(feed_id):
            raise GovernanceError(f"no feed {feed_id!r}", code="feed_not_found")

    async def run_due(self, limit: int = 100) -> list[Tick]:
        """Run every feed whose time has come (each at most once per call)."""
        now = self._clock()
        ticks: list[Tick] = []
        for row in self._feeds.due(now, limit):
            later = next_run(row.interval_s, row.cron, max(now, row.next_run_at))
            # One-shot jobs park far in the future once claimed, then are disabled.
            parked = later if later is not None else _NEVER
            if not self._feeds.claim(row.id, row.next_run_at, parked):
                continue  # another scheduler took this tick
            ticks.append(await self._run(row))
            if later is None:
                self._feeds.set_enabled(row.id, False)
        return ticks

    async def run(self, feed_id: str) -> Tick:
        """Run one feed now, off schedule."""
        return await self._run(self.get(feed_id))

    @traced("feed.tick")  # the parent span of its calls (docs/telemetry.md)
    async def _run(self, row: FeedRow) -> Tick:
        result = await self._call(row)
        data = result.data if result.ok else None
        if isinstance(data, Mapping) and "watermark" in data:
            self._kv.put(row.plugin_id, "watermark", row.id, data["watermark"], self._clock())
        sources = data.get("watermarks") if isinstance(data, Mapping) else None
        if isinstance(sources, Mapping):
            for source, mark in sources.items():
                self._kv.put(row.plugin_id, _sources(row.id), str(source), mark, self._clock())
        stored = result.to_dict()
        if len(repr(stored)) > _MAX_STORED_RESULT:
            stored = {"status": result.status, "data": None, "note": "result too large to keep"}
        self._feeds.record(row.id, self._clock(), result.status, stored, result.next_cursor)
        code = result.error.code if result.error else None
        return Tick(row.id, result.status, code, result.next_cursor)

    async def _call(self, row: FeedRow) -> Result:
        plugin = self._plugins.find(row.plugin_id)
        params = dict(row.params or {})
        operation = row.operation
        if plugin is not None:
            try:
                call = feed_call(plugin.descriptor, row.operation, params)
            except GovernanceError as exc:
                return failure(exc.code, exc.message)
            operation, params = call.operation, call.params
        session = {
            "feed_id": row.id,
            "cursor": row.next_cursor,
            "watermark": self._kv.get(row.plugin_id, "watermark", row.id),
            "watermarks": self._kv.items(row.plugin_id, _sources(row.id)),
        }
        context = CallContext(
            request_id=new_request_id(), subject=row.owner, roles=row.roles, session=session
        )
        return await self._runner.call(CallRequest(row.plugin_id, operation, params, context))


def _sources(feed_id: str) -> str:
    """The key-value namespace of one feed's per-source watermarks."""
    return f"watermarks:{feed_id}"
