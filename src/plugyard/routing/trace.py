"""The trace of a routed request: one frozen record per step, as it happened."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Retrieved:
    """One candidate operation the request offered the model, with its search score."""

    plugin: str
    operation: str
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {"plugin": self.plugin, "operation": self.operation,
                "score": round(self.score, 4)}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Step:
    """One step of the loop (loop.py): what was retrieved, the call the model chose,
    what became of it.

    ``status`` is the call's result status (``success``, ``error``, ``timeout``,
    ``pending_approval``); or, when no call was made, ``none`` (the model chose no
    operation), ``needs_input`` (an argument was ungrounded: sent back to the model
    once, then the request ends), ``pending_confirmation`` (held for the caller),
    ``repeated`` (an identical call already ran), ``planned`` (a dry run),
    ``step_limit`` or ``error`` (``error_code`` says why). ``repaired``: the step came
    after the request's one repair round. ``tokens`` and ``llm_calls`` count the model
    calls since the step before (post-processing included)."""

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
