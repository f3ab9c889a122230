"""What a run leaves behind: the final context and a trace of every node it touched.

The trace is a flat list in start order; ``parent`` links rebuild the tree. An entry
holds the node's pointer in the document, its status, when it started and how long it
took, and the size of its output in bytes — never the data itself, so a stored trace
holds no user content (the context is returned to the caller, not stored).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, NamedTuple

Status = Literal["running", "success", "error", "timeout", "cancelled", "skipped"]
RunStatus = Literal["success", "error", "timeout", "cancelled"]
Kind = Literal[
    "pipeline", "capability", "stage", "group", "condition", "iterator", "fork", "join",
    "fallback", "branch", "iteration",
]  # fmt: skip


class TraceEntry(NamedTuple):
    """One node of a finished run. A named tuple, not a frozen dataclass: a run builds
    one per node, and a frozen dataclass costs a few microseconds more to build."""

    seq: int
    parent: int | None
    kind: Kind
    path: str
    label: str
    status: Status
    started_ms: float
    duration_ms: float | None
    plugin: str | None = None
    position: int | None = None  # of an iteration or a branch ("index" is tuple's)
    output_bytes: int | None = None
    error: dict[str, Any] | None = None
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The entry as JSON data; optional members only when they carry something."""
        return {k: v for k, v in self._asdict().items() if v is not None or k in _ALWAYS}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TraceEntry:
        return cls(**data)


_ALWAYS = frozenset({"parent", "duration_ms"})


@dataclass(slots=True)
class Span:
    """An entry while its node runs."""

    seq: int
    parent: int | None
    kind: Kind
    path: str
    label: str
    started: float
    plugin: str | None = None
    index: int | None = None
    status: Status = "running"
    ended: float | None = None
    output_bytes: int | None = None
    error: dict[str, Any] | None = None
    note: str | None = None


class Trace:
    """The recorder of one run (never shared between runs)."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.t0 = time.perf_counter()

    def open(
        self,
        kind: Kind,
        path: str,
        label: str,
        parent: int | None,
        *,
        plugin: str | None = None,
        index: int | None = None,
    ) -> Span:
        span = Span(len(self.spans), parent, kind, path, label, time.perf_counter())
        span.plugin, span.index = plugin, index
        self.spans.append(span)
        return span

    @staticmethod
    def close(
        span: Span,
        status: Status,
        *,
        output_bytes: int | None = None,
        error: dict[str, Any] | None = None,
        note: str | None = None,
    ) -> None:
        span.status, span.ended = status, time.perf_counter()
        span.output_bytes, span.error = output_bytes, error
        if note is not None:
            span.note = note

    def entries(self, unfinished: Status) -> tuple[TraceEntry, ...]:
        """Frozen entries; spans still running are closed as ``unfinished``."""
        out = []
        for span in self.spans:
            if span.status == "running":
                self.close(span, unfinished)
            ended = span.ended if span.ended is not None else time.perf_counter()
            out.append(
                TraceEntry(
                    span.seq,
                    span.parent,
                    span.kind,
                    span.path,
                    span.label,
                    span.status,
                    round((span.started - self.t0) * 1000, 3),
                    round((ended - span.started) * 1000, 3),
                    span.plugin,
                    span.index,
                    span.output_bytes,
                    span.error,
                    span.note,
                )
            )
        return tuple(out)


@dataclass(frozen=True)
class PipelineRun:
    """One run: its status, the final context, the error that ended it, and its trace."""

    run_id: str
    pipeline: str
    status: RunStatus
    context: dict[str, Any]
    trace: tuple[TraceEntry, ...]
    request_id: str
    subject: str | None = None
    error: dict[str, Any] | None = None
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    duration_ms: float = 0.0
    #: The stored document the run ran (``name``, ``saved_by``, ``content_hash``), so a
    #: run of a document someone else saved says whose it was; ``None`` for one inline.
    stored: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.status == "success"

    def to_dict(self, *, context: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "run_id": self.run_id,
            "pipeline": self.pipeline,
            "status": self.status,
            "request_id": self.request_id,
            "subject": self.subject,
            "started_at": self.started_at.isoformat(),
            "duration_ms": self.duration_ms,
            "stored": self.stored,
        }
        if self.error is not None:
            out["error"] = self.error
        if context:
            out["context"] = self.context
        out["trace"] = [entry.to_dict() for entry in self.trace]
        return out
