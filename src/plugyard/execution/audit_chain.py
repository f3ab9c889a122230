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
moment loses at most the event it had not yet acknowledged.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any

import msgspec

from plugyard.execution.audit import AuditEvent
from plugyard.store.audit import GENESIS, AuditRecord, AuditRepository
from plugyard.store.rawdb import Extra

_encode = msgspec.json.Encoder(order="sorted").encode
_HASHED = AuditRecord._fields[:-1]  # every column but the hash itself
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
        keyed = _KEYED[key] = hmac.new(key, digestmod=hashlib.sha256)
    mac = keyed.copy()
    mac.update(prev_hash.encode("ascii"))
    mac.update(_encode(dict(zip(_HASHED, values, strict=True))))
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
    """An :class:`~plugyard.execution.audit.AuditSink` that writes the durable chain.

    It also keeps this process's recent events in memory (iterable), like the memory
    sink it replaces.
    """

    def __init__(self, repository: AuditRepository, key: bytes, *, recent: int = 1000) -> None:
        self.repository = repository
        self._key = key
        self._recent: deque[AuditEvent] = deque(maxlen=recent)

    def emit(self, event: AuditEvent, extra: Extra | None = None) -> None:
        """Append one call's event; ``extra`` (an idempotency completion) commits with it."""
        self._recent.append(event)
        self._append(
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
            None,
            extra,
        )

    def append(self, kind: str, *, status: str, **values: Any) -> AuditRecord:
        """Append one event (``kind``: ``call``, or an administrative act such as
        ``policy``, ``approval``, ``secret``, ``feed``, ``plugin``); answers it once it is
        durable."""
        get = values.get
        return self._append(
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
            None,
        )

    def _append(self, kind: str, started_at: str | None, *rest: Any) -> AuditRecord:
        *columns, extra = rest
        recorded = iso(time.time())
        key = self._key

        def build(seq: int, prev_hash: str) -> AuditRecord:
            # Field order of AuditRecord: seq, kind, recorded_at, started_at, …, prev_hash.
            values = (seq, kind, recorded, started_at, *columns, prev_hash)
            return AuditRecord._make((*values, _link(key, prev_hash, values)))

        return self.repository.append(build, extra)

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
