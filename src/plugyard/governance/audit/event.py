"""Audit events: one per call, emitted to a sink. The durable, hash-chained log comes
with governance; the event already carries what it will need."""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Iterator
from typing import Any, NamedTuple, Protocol

import msgspec

_encoder = msgspec.json.Encoder(order="sorted")


def params_hash(params: Any) -> str:
    """SHA-256 of the parameters as canonical JSON (sorted keys, no spaces): the audit log
    records this, never the parameters themselves."""
    return hashlib.sha256(_encoder.encode(params)).hexdigest()


class AuditEvent(NamedTuple):
    """One call as the audit log sees it: the parameters' hash, never the parameters.
    A named tuple rather than a dataclass: one is built per call, and this is ~4× cheaper."""

    request_id: str
    subject: str | None
    plugin_id: str
    operation: str | None
    params_hash: str
    decision: str
    status: str
    error_code: str | None
    started_at: float  # UTC epoch seconds
    duration_ms: float
    policy_version: str | None = None
    approver: str | None = None
    #: what the governed steps add (an idempotency key released after a stopped call)
    detail: dict[str, Any] | None = None


class AuditSink(Protocol):
    def emit(self, event: AuditEvent) -> None: ...


class MemoryAuditSink:
    """Keeps the most recent events in memory (tests, the embedded default's console)."""

    def __init__(self, maxlen: int = 10_000) -> None:
        self._events: deque[AuditEvent] = deque(maxlen=maxlen)

    def emit(self, event: AuditEvent) -> None:
        self._events.append(event)

    def __iter__(self) -> Iterator[AuditEvent]:
        return iter(list(self._events))

    def __len__(self) -> int:
        return len(self._events)
