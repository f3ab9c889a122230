"""Audit events: one per call, emitted to a sink: the durable, hash-chained log
(chain.py), on the yard's store or, with nothing to persist, an in-memory one."""

from __future__ import annotations

import hashlib
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
