"""What a reasoning request answers: the answer and its status, the DS027 record and the
trace. ``status`` is ``answered``, ``no-context`` (the request ran, and no plugin found
the context to answer) or ``failure`` (the record's ``error`` says why)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plugyard.reasoning.record import OutcomeRecord
from plugyard.reasoning.trace import TraceEvent
from plugyard.runtimes.base import ErrorInfo


@dataclass(frozen=True, slots=True)
class Reasoned:
    request_id: str
    status: str
    record: OutcomeRecord
    answer: str | None = None
    document: Mapping[str, Any] | None = None
    citations: tuple[Mapping[str, Any], ...] = ()
    trace: tuple[TraceEvent, ...] = ()
    session_id: str | None = None
    llm_calls: int = 0

    @property
    def error(self) -> ErrorInfo | None:
        return self.record.error

    def to_dict(self, *, trace: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "requestId": self.request_id,
            "sessionId": self.session_id,
            "status": self.status,
            "answer": self.answer,
            "responseDocument": dict(self.document) if self.document is not None else None,
            "citations": [dict(c) for c in self.citations],
            "llmCalls": self.llm_calls,
            "error": None if self.error is None else self.error.to_dict(),
            "record": self.record.to_dict(),
        }
        if trace:
            out["trace"] = [event.to_dict() for event in self.trace]
        return out
