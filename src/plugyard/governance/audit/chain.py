"""The durable audit log: append-only and hash-chained with a key kept outside the
database.

Each row's ``hash`` is HMAC-SHA256(key, previous row's hash ‖ canonical JSON of the
row's other columns). Editing, inserting or deleting a row in the middle breaks the
chain at that row; without the key a forger cannot recompute it. (Cutting rows off the
*end* leaves a valid, shorter chain: compare the head with a copy kept elsewhere —
``plugyard audit tail`` prints it.) Every event has the subject, plugin, operation,
parameters hash (never the parameters), decision, approver, policy version, status
and UTC timestamps; refusals are audited like calls.

An event is acknowledged only after its transaction commits: a writer killed at any
moment loses at most the events it had not yet acknowledged. Inside an event loop, the
call events of one loop turn share one transaction (a group commit): each caller awaits
:meth:`ChainedAudit.settle` before its result is handed out, so the commit still comes
before the acknowledgement, but a server under load pays one commit per turn instead of
one per call.
"""

from __future__ import annotations

import asyncio
import hmac
import operator
import time
from collections import deque
from collections.abc import Awaitable, Callable, Generator, Iterator
from dataclasses import dataclass, field, fields
from typing import Any

import msgspec

from plugyard.governance.audit.event import AuditEvent
from plugyard.store.audit import GENESIS, AuditRecord, AuditRepository, Build
from plugyard.store.rawdb import Extra

_encode = msgspec.json.Encoder(order="sorted").encode
_HASHED = AuditRecord._fields[:-1]  # every column but the hash itself
# What is hashed is the canonical JSON object of those columns, keys sorted. A struct
# whose fields are the column names in sorted order encodes to the same bytes as that
# dict, without building a dict per event.
_BY_NAME = sorted(range(len(_HASHED)), key=_HASHED.__getitem__)
_Hashed = msgspec.defstruct("_Hashed", [_HASHED[i] for i in _BY_NAME])
_in_name_order = operator.itemgetter(*_BY_NAME)
_second: tuple[int, str] = (-1, "")  # the last second formatted, and its text


def iso(epoch: float) -> str:
    """UTC, fixed width, microseconds: ``2026-11-22T10:00:00.000000Z``."""
    seconds = int(epoch)
    micros = round((epoch - seconds) * 1e6)
    if micros >= 1_000_000:
        seconds, micros = seconds + 1, micros - 1_000_000
    global _second
    cached = _second
    if cached[0] != seconds:  # formatting the date part costs more than the rest
        cached = _second = (seconds, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)))
    return f"{cached[1]}.{micros:06d}Z"


def link(key: bytes, prev_hash: str, record: AuditRecord) -> str:
    return _link(key, prev_hash, record[:-1])


_KEYED: dict[bytes, Any] = {}


def _link(key: bytes, prev_hash: str, values: tuple[Any, ...]) -> str:
    keyed = _KEYED.get(key)
    if keyed is None:  # the key schedule is computed once per key, then copied
        # By name, the HMAC is OpenSSL's throughout; given a constructor, its copies and
        # digests pass through Python.
        keyed = _KEYED[key] = hmac.new(key, digestmod="sha256")
    mac = keyed.copy()
    mac.update(prev_hash.encode("ascii"))
    mac.update(_encode(_Hashed(*_in_name_order(values))))
    return str(mac.hexdigest())


@dataclass(frozen=True, slots=True)
class Verification:
    """What ``audit verify`` found: ``ok``, how many events, and the first break."""

    ok: bool
    events: int
    head_seq: int
    head_hash: str
    broken_at: int | None = None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


class ChainedAudit:
    """An :class:`~plugyard.governance.audit.event.AuditSink` that writes the durable chain.

    It also keeps this process's recent events in memory (iterable), read without a
    query.
    """

    def __init__(self, repository: AuditRepository, key: bytes, *, recent: int = 1000) -> None:
        self.repository = repository
        self._key = key
        self._recent: deque[AuditEvent] = deque(maxlen=recent)
        # The group commit of each event loop that emits.
        self._writers: dict[asyncio.AbstractEventLoop, _Writer] = {}
        self._pace = _Pace()

    def emit(self, event: AuditEvent, extra: Extra | None = None) -> None:
        """Append one call's event; ``extra`` (an idempotency completion) commits with it.

        Inside a running event loop the event joins this turn's group commit; the caller
        must ``await settle()`` before it acknowledges the call."""
        self._recent.append(event)
        build = self._builder(
            "call",
            iso(event.started_at),
            event.request_id,
            event.subject,
            event.plugin_id,
            event.operation,
            event.params_hash,
            event.decision,
            event.approver,
            event.policy_version,
            event.status,
            event.error_code,
            round(event.duration_ms, 3),
            event.detail,
        )
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.repository.append(build, extra)
            return
        writer = self._writers.get(loop)
        if writer is None:
            writer = self._writers[loop] = _Writer(
                loop, self.repository, lambda: self._writers.pop(loop, None), self._pace
            )
        writer.add(build, extra)

    def settle(self) -> Awaitable[None]:
        """What a caller awaits until every event emitted so far in this loop is durable
        (it raises the store's error if their group commit failed). Each caller waits on
        a future of its own, so a cancelled caller cancels nobody else's wait; with
        nothing pending there is nothing to wait for."""
        writer = self._writers.get(asyncio.get_running_loop())
        if writer is None or writer.collecting is None:
            return _DURABLE
        waiter: asyncio.Future[None] = writer.loop.create_future()
        writer.collecting.waiters.append(waiter)
        return waiter

    def flush_pending(self) -> None:
        """Commit this loop's waiting events now, on this thread (a cancelled call cannot
        wait: its loop may be closing)."""
        try:
            writer = self._writers.get(asyncio.get_running_loop())
        except RuntimeError:
            return
        if writer is not None:
            writer.write_now()

    def close(self) -> None:
        """Commit what is waiting (a loop closed before its turn ended leaves it)."""
        for writer in list(self._writers.values()):
            writer.write_now()
        self._writers.clear()

    def append(self, kind: str, *, status: str, **values: Any) -> AuditRecord:
        """Append one event (``kind``: ``call``, or an administrative act such as
        ``policy``, ``approval``, ``secret``, ``feed``, ``plugin``); answers it once it is
        durable."""
        get = values.get
        build = self._builder(
            kind,
            get("started_at"),
            get("request_id"),
            get("subject"),
            get("plugin_id"),
            get("operation"),
            get("params_hash"),
            get("decision"),
            get("approver"),
            get("policy_version"),
            status,
            get("error_code"),
            get("duration_ms"),
            get("detail"),
        )
        return self.repository.append(build)

    def _builder(self, kind: str, started_at: str | None, *columns: Any) -> Build:
        recorded = iso(time.time())
        key = self._key

        def build(seq: int, prev_hash: str) -> AuditRecord:
            # Field order of AuditRecord: seq, kind, recorded_at, started_at, …, prev_hash.
            values = (seq, kind, recorded, started_at, *columns, prev_hash)
            return AuditRecord._make((*values, _link(key, prev_hash, values)))

        return build

    def verify(self, page: int = 5000) -> Verification:
        """Walk the whole chain; report the first row where it does not hold."""
        prev_seq, prev_hash, count = 0, GENESIS, 0
        while True:
            rows = self.repository.scan(prev_seq, page)
            if not rows:
                return Verification(True, count, prev_seq, prev_hash)
            for row in rows:
                problem = None
                if row.seq != prev_seq + 1:
                    problem = f"sequence jumps from {prev_seq} to {row.seq}"
                elif row.prev_hash != prev_hash:
                    problem = "prev_hash does not match the previous event"
                elif not hmac.compare_digest(row.hash, link(self._key, prev_hash, row)):
                    problem = "the event's hash does not match its content (or the key)"
                if problem is not None:
                    return Verification(False, count, prev_seq, prev_hash, row.seq, problem)
                prev_seq, prev_hash, count = row.seq, row.hash, count + 1

    def tail(self, count: int = 20) -> list[AuditRecord]:
        return self.repository.tail(count)

    def __iter__(self) -> Iterator[AuditEvent]:
        return iter(list(self._recent))

    def __len__(self) -> int:
        return len(self._recent)


#: How long after concurrent calls were last seen every event joins a group commit.
_GROUPING_S = 0.1


@dataclass(slots=True)
class _Pace:
    grouping_until: float = 0.0


class _Durable:
    """Awaited when nothing is pending: done at once, without a task switch."""

    def __await__(self) -> Generator[Any, None, None]:
        yield from ()


_DURABLE = _Durable()


@dataclass(slots=True)
class _Batch:
    """Events committed together; each waiter's future resolves after the commit."""

    items: list[tuple[Build, Extra | None]] = field(default_factory=list)
    waiters: list[asyncio.Future[None]] = field(default_factory=list)


class _Writer:
    """Group commit for one event loop. The first event of a loop turn is committed at
    once (a lone caller waits for nothing), and so are that task's next ones; events
    that other tasks emit in the same turn — concurrent calls — are committed together
    once the turn's callbacks have run.

    Measured against a writer thread (bench/RESULTS.md, "HTTP API"): handing batches to a
    thread cost more in wake-ups and GIL hand-offs than the commit it took off the loop.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        repository: AuditRepository,
        idle: Callable[[], object],
        pace: _Pace,
    ) -> None:
        self.loop = loop
        self.repository = repository
        self.idle = idle  # forgets this writer, so that short-lived loops are not kept
        self.pace = pace
        self.collecting: _Batch | None = None
        self.in_turn = False
        self.turn_task: asyncio.Task[Any] | None = None

    def add(self, build: Build, extra: Extra | None) -> None:
        if self.collecting is None and self.loop.time() >= self.pace.grouping_until:
            task = asyncio.current_task(self.loop)
            # Another task emitting in the same turn means concurrent calls: group them.
            # The same task again is one caller calling in sequence: commit at once.
            if not self.in_turn or task is self.turn_task:
                if not self.in_turn:
                    self.in_turn = True
                    self.loop.call_soon(self._turn_ended)
                self.turn_task = task
                self.repository.append_many([(build, extra)])  # durable when add returns
                return
        if self.collecting is None:
            self.collecting = _Batch()
            self.loop.call_soon(self.write_now)
            # Calls are concurrent now: for a while, even a turn's first event waits for
            # the turn's commit rather than costing one of its own.
            self.pace.grouping_until = self.loop.time() + _GROUPING_S
        self.collecting.items.append((build, extra))

    def _turn_ended(self) -> None:
        self.in_turn, self.turn_task = False, None
        if self.collecting is None:
            self.idle()

    def write_now(self) -> None:
        batch, self.collecting = self.collecting, None
        if batch is not None:
            try:
                self.repository.append_many(batch.items)
            except Exception as exc:  # every waiter of the batch learns it failed
                for waiter in batch.waiters:
                    if not waiter.done():  # a cancelled caller no longer waits
                        waiter.set_exception(exc)
            else:
                for waiter in batch.waiters:
                    if not waiter.done():
                        waiter.set_result(None)
        if not self.in_turn:
            self.idle()
