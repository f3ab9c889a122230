"""The trace of a routed request: one frozen record per step, as it happened."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Retrieved:
    """One candidate operation a step offered the model, with its search score and,
    when the model judged it (decide.py), its log-odds that the candidate fits."""

    plugin: str
    operation: str
    score: float
    verdict: float | None = None

    def judged(self, verdict: float) -> Retrieved:
        return Retrieved(self.plugin, self.operation, self.score, verdict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"plugin": self.plugin, "operation": self.operation,
                               "score": round(self.score, 4)}  # fmt: skip
        if self.verdict is not None:
            out["verdict"] = round(self.verdict, 4)
        return out


@dataclass(frozen=True, slots=True)
class Step:
    """One step: what was retrieved, what the model chose, what the call answered.

    ``status`` is the call's result status (``success``, ``error``, ``timeout``,
    ``pending_approval``), or ``none`` when the model chose no operation, or ``error``
    when no call was made (``error_code`` says why). ``tokens`` and ``llm_calls`` count
    this step's model calls (the repair round and post-processing included)."""

    number: int
    retrieved: tuple[Retrieved, ...]
    choice: Mapping[str, Any] | None
    status: str
    error_code: str | None = None
    repaired: bool = False
    idempotency_key: str | None = None
    llm_calls: int = 0
    tokens: int = 0
    ms: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "step": self.number,
            "retrieved": [r.to_dict() for r in self.retrieved],
            "choice": dict(self.choice) if self.choice is not None else None,
            "status": self.status,
            "llm_calls": self.llm_calls,
            "tokens": self.tokens,
            "ms": round(self.ms, 3),
        }
        if self.error_code is not None:
            out["error_code"] = self.error_code
        if self.repaired:
            out["repaired"] = True
        if self.idempotency_key is not None:
            out["idempotency_key"] = self.idempotency_key
        if self.notes:
            out["notes"] = list(self.notes)
        return out
