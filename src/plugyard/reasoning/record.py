"""The planner outcome record of DS027, one per reasoning request.

Fields are spelt as DS027 spells them (``requestId``, ``plannerAttempts``,
``finalAnswerStatus`` …) so MRP-VM tooling reads the records as they are. Beside them a
failed request carries ``error: {code, message}`` (DS027's error shape) saying why, and
every record its ``recordedAt``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from plugyard.runtimes.base import ErrorInfo

FinalStatus = Literal["success", "failure"]


@dataclass(frozen=True, slots=True)
class StageEntry:
    """One plugin run (or skipped) in one stage."""

    planner_plugin_id: str
    stage: str
    plugin_id: str
    status: str
    duration_ms: float = 0.0
    llm_calls: int = 0
    sufficient: bool | None = None
    model: str | None = None
    model_role: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "plannerPluginId": self.planner_plugin_id,
            "stage": self.stage,
            "pluginId": self.plugin_id,
            "status": self.status,
            "durationMs": round(self.duration_ms, 3),
            "llmCalls": self.llm_calls,
            "sufficient": self.sufficient,
            "model": self.model,
            "modelRole": self.model_role,
        }

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> StageEntry:
        sufficient = data.get("sufficient")
        return cls(
            str(data.get("plannerPluginId", "")),
            str(data.get("stage", "")),
            str(data.get("pluginId", "")),
            str(data.get("status", "")),
            float(data.get("durationMs") or 0),
            int(data.get("llmCalls") or 0),
            sufficient if isinstance(sufficient, bool) else None,
            _text(data.get("model")),
            _text(data.get("modelRole")),
        )


@dataclass(frozen=True, slots=True)
class OutcomeRecord:
    request_id: str
    planner_plugin_id: str
    final_status: FinalStatus
    session_id: str | None = None
    planner_attempts: tuple[str, ...] = ()
    stages: tuple[StageEntry, ...] = ()
    final_answer_status: Literal["answered", "no-context"] | None = None
    frame_depth: int = 0
    frame_purpose: str | None = None
    error: ErrorInfo | None = None
    recorded_at: datetime | None = None
    #: Who asked (kept beside the record, for listings; not a DS027 field).
    subject: str | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "requestId": self.request_id,
            "sessionId": self.session_id,
            "plannerPluginId": self.planner_plugin_id,
            "plannerAttempts": list(self.planner_attempts),
            "stages": [stage.to_dict() for stage in self.stages],
            "finalStatus": self.final_status,
            "finalAnswerStatus": self.final_answer_status,
            "frameDepth": self.frame_depth,
            "framePurpose": self.frame_purpose,
            "error": None
            if self.error is None
            else {"code": self.error.code, "message": self.error.message},
        }
        if self.recorded_at is not None:
            out["recordedAt"] = self.recorded_at.isoformat()
        return out

    @classmethod
    def of(cls, data: Mapping[str, Any], subject: str | None = None) -> OutcomeRecord:
        error = data.get("error")
        recorded = data.get("recordedAt")
        final: FinalStatus = "success" if data.get("finalStatus") == "success" else "failure"
        answer = data.get("finalAnswerStatus")
        return cls(
            request_id=str(data.get("requestId", "")),
            planner_plugin_id=str(data.get("plannerPluginId", "")),
            final_status=final,
            session_id=_text(data.get("sessionId")),
            planner_attempts=tuple(str(p) for p in data.get("plannerAttempts") or ()),
            stages=tuple(StageEntry.of(s) for s in data.get("stages") or () if isinstance(s, dict)),
            final_answer_status=answer if answer in ("answered", "no-context") else None,
            frame_depth=int(data.get("frameDepth") or 0),
            frame_purpose=_text(data.get("framePurpose")),
            error=ErrorInfo(str(error.get("code")), str(error.get("message")))
            if isinstance(error, dict)
            else None,
            recorded_at=datetime.fromisoformat(recorded) if isinstance(recorded, str) else None,
            subject=subject,
        )


class OutcomeStore(Protocol):
    """Where records are kept: newest first when listed."""

    def save(self, record: OutcomeRecord) -> OutcomeRecord:
        """Keep ``record``; answers it with ``recorded_at`` set."""
        ...

    def get(self, request_id: str) -> OutcomeRecord | None: ...

    def records(
        self, *, subject: str | None = None, session_id: str | None = None, limit: int = 50
    ) -> tuple[OutcomeRecord, ...]:
        """The newest records, of one subject and one session when given."""
        ...


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
