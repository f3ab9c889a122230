"""What a request leaves behind as it runs: the stage entries of its DS027 record, its
trace (every stage call, plan, hook and note, in order) and the events a client may
follow while it runs (SSE ``stage``, ``plan``, ``hook`` and ``note`` events)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from plugyard.reasoning.record import StageEntry
from plugyard.runtimes.base import ErrorInfo


@dataclass(frozen=True, slots=True)
class Frame:
    """Where in the request a call runs: the root (depth 0) or a child frame."""

    depth: int = 0
    purpose: str | None = None


ROOT = Frame()


@dataclass(frozen=True, slots=True)
class TraceEvent:
    kind: str  # stage | plan | hook | note
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.kind, **self.data}


OnEvent = Callable[[TraceEvent], None]


class Recorder:
    """Collects one request's stage entries, planner attempts, frames and trace."""

    def __init__(self, on_event: OnEvent | None = None) -> None:
        self.stages: list[StageEntry] = []
        self.planner_attempts: list[str] = []
        self.trace: list[TraceEvent] = []
        self.frame_depth = 0
        self.frame_purpose: str | None = None
        self._on_event = on_event

    def stage(
        self,
        entry: StageEntry,
        operation: str,
        frame: Frame,
        *,
        plugin_status: str | None = None,
        error: ErrorInfo | None = None,
        kind: str = "stage",
    ) -> None:
        """One call finished: a ``stage`` of the DS027 record, or a ``planner`` or
        ``hook`` call, which DS027 does not count as stages and the trace shows."""
        if kind == "stage":
            self.stages.append(entry)
        data = {
            **entry.to_dict(),
            "operation": operation,
            "frameDepth": frame.depth,
            "framePurpose": frame.purpose,
        }
        if plugin_status is not None and plugin_status != entry.status:
            data["pluginStatus"] = plugin_status
        if error is not None:
            data["error"] = {"code": error.code, "message": error.message}
        self._emit(TraceEvent(kind, data))

    def opened(self, frame: Frame) -> None:
        """A child frame opened: the record keeps the deepest and the first purpose."""
        self.frame_depth = max(self.frame_depth, frame.depth)
        if self.frame_purpose is None:
            self.frame_purpose = frame.purpose
        self.note("frame", depth=frame.depth, purpose=frame.purpose)

    def planner(self, plugin_id: str) -> None:
        self.planner_attempts.append(plugin_id)

    def plan(self, data: Mapping[str, Any]) -> None:
        self._emit(TraceEvent("plan", dict(data)))

    def note(self, what: str, **data: Any) -> None:
        self._emit(TraceEvent("note", {"note": what, **data}))

    def _emit(self, event: TraceEvent) -> None:
        self.trace.append(event)
        if self._on_event is not None:
            try:
                self._on_event(event)
            except Exception:  # a listener that fails must not fail the request
                self._on_event = None
