"""The task a frame works on: its prompt, admitted intents, current-turn units and the
guidance the seed detector scoped to each phase — and the structured payloads
(``{prompt, context: [{title, sourceLink, text}]}``, DS003) built from it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from plugyard.reasoning.units import Unit, dicts, merged

PHASES = ("planner", "goalSolver", "decomposition", "validation", "seedRouting")
#: Evidence units handed to one goal-solver or validator call: enough to answer from,
#: bounded so one call's payload stays small.
MAX_EVIDENCE = 20


@dataclass(frozen=True, slots=True)
class Task:
    prompt: str
    intents: tuple[Mapping[str, Any], ...] = ()
    units: tuple[Unit, ...] = ()
    guidance: Mapping[str, tuple[Unit, ...]] = field(default_factory=dict)

    @classmethod
    def of(
        cls, prompt: str, intents: tuple[Mapping[str, Any], ...], units: tuple[Unit, ...]
    ) -> Task:
        """Units scoped to a phase are that phase's guidance; the rest are evidence."""
        evidence: list[Unit] = []
        guidance: dict[str, list[Unit]] = {}
        for unit in units:
            phases = unit.phases()
            if not phases:
                evidence.append(unit)
            for phase in phases:
                guidance.setdefault(phase, []).append(unit)
        return cls(prompt, intents, tuple(evidence), {k: tuple(v) for k, v in guidance.items()})

    def sub(self, prompt: str) -> Task:
        """A subtask: its own prompt and intent, the same units and guidance."""
        return replace(
            self, prompt=prompt, intents=({"id": "sub", "act": _act(self), "text": prompt},)
        )

    def guided(self, phase: str, units: tuple[Unit, ...]) -> Task:
        """This task with more guidance for ``phase`` (a strategy-guidance frame's)."""
        both = merged(self.guidance.get(phase, ()), units)
        return replace(self, guidance={**self.guidance, phase: both})

    def phase_guidance(self) -> dict[str, list[dict[str, Any]]]:
        return {phase: dicts(self.guidance.get(phase, ())) for phase in PHASES}

    def payload(self, context: tuple[Unit, ...] | None = None, **extra: Any) -> dict[str, Any]:
        """The structured input of a family call; ``context`` defaults to the task's units."""
        units = self.units if context is None else context
        return {
            "prompt": self.prompt,
            "context": dicts(units[:MAX_EVIDENCE] if context is not None else units),
            "intents": [dict(i) for i in self.intents],
            **extra,
        }


def _act(task: Task) -> str:
    first = task.intents[0].get("act") if task.intents else None
    return first if isinstance(first, str) else "explain"
