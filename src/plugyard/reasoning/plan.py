"""A planner's plan (DS027 ``buildPlan``), checked before the core runs it, and the
planner input the core builds (DS027 "Planner Input Contract").

The core runs only plugins of the stage's family: an id the planner names that is not
registered, not available or of another family is dropped with a note in the trace. A
pin replaces the stage's order; a session preference is placed first without removing
the rest. A plan left with no goal solver is no plan (``plan_invalid``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from plugyard.manifest.families import FRAME_PURPOSES
from plugyard.reasoning.catalog import Catalog, members, misnamed, preferred_first, summary
from plugyard.reasoning.session import Session
from plugyard.reasoning.task import Task
from plugyard.reasoning.units import dicts
from plugyard.runtimes.base import ErrorInfo

_ORDERS = (("kb", "kbPluginOrder"), ("goal-solver", "goalSolverOrder"))


@dataclass(frozen=True, slots=True)
class Plan:
    planner: str
    kb_order: tuple[str, ...]
    gs_order: tuple[str, ...]
    decompose: bool = False
    frame_purpose: str | None = None
    notes: tuple[str, ...] = ()

    def key(self) -> tuple[Any, ...]:
        """Two plans with one key would run the same way."""
        return (self.kb_order, self.gs_order, self.decompose, self.frame_purpose)

    def to_dict(self) -> dict[str, Any]:
        return {
            "plannerPluginId": self.planner,
            "kbPluginOrder": list(self.kb_order),
            "goalSolverOrder": list(self.gs_order),
            "decompose": self.decompose,
            "framePurpose": self.frame_purpose,
            "notes": list(self.notes),
        }


def read_plan(
    planner: str,
    data: Mapping[str, Any],
    catalog: Catalog,
    pins: Mapping[str, str],
    preferences: Mapping[str, str],
) -> tuple[Plan | None, ErrorInfo | None]:
    """The plan ``data`` stands for, checked; or why there is none."""
    notes = [str(n) for n in data.get("notes") or () if isinstance(n, str)][:50]
    orders: dict[str, tuple[str, ...]] = {}
    for stage, key in _ORDERS:
        named = [p for p in data.get(key) or () if isinstance(p, str)]
        kept: list[str] = []
        for plugin_id in dict.fromkeys(named):
            problem = misnamed(catalog, stage, plugin_id)
            if problem is None:
                kept.append(plugin_id)
            else:
                notes.append(f"dropped {plugin_id} from {key}: {problem[0]}")
        preferred = preferences.get(stage)
        if preferred and misnamed(catalog, stage, preferred) is None:
            kept = list(preferred_first(kept, preferred))
        orders[stage] = (pins[stage],) if stage in pins else tuple(kept)
    if not orders["goal-solver"]:
        return None, ErrorInfo("plan_invalid", f"{planner}'s plan names no usable goal solver")
    purpose = data.get("framePurpose")
    decompose = data.get("decompose") is True
    if purpose not in FRAME_PURPOSES:
        purpose = "subtask-decomposition" if decompose else None
    plan = Plan(planner, orders["kb"], orders["goal-solver"], decompose, purpose, tuple(notes))
    return plan, None


def planner_input(
    task: Task,
    session: Session | None,
    catalog: Catalog,
    pins: Mapping[str, str],
    preferences: Mapping[str, str],
    previous: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """What ``buildPlan`` receives: DS027's planner input, plus the candidates it may
    order (their descriptors) and the attempts this request already rejected."""
    intents = [dict(i) for i in task.intents]
    return {
        **task.payload(),
        "decomposedIntents": intents,
        "contextProfiles": [
            {"intentId": i.get("id"), "act": i.get("act"), "topic": i.get("topic")} for i in intents
        ],
        "currentTurnUnits": dicts(task.units),
        "kb": {
            "kbId": session.kb_id if session else None,
            "kbName": session.kb_name if session else None,
        },
        "strategyGuidance": dicts(task.guidance.get("planner", ())),
        "phaseGuidance": task.phase_guidance(),
        "pins": dict(pins),
        "sessionPreferences": dict(preferences),
        "candidates": {
            "kb": [summary(p) for p in members(catalog, "kb")],
            "goalSolver": [summary(p) for p in members(catalog, "gs")],
        },
        "previousAttempts": [dict(p) for p in previous],
    }
