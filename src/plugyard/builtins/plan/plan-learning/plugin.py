"""A DS027 ``mrp-plan-plugin`` that learns: ``buildPlan`` orders by learnt success per
kind of request, ``recordOutcome`` learns from the record. State in ``host.storage``."""

from __future__ import annotations

import random
from collections import OrderedDict
from typing import Any

from plugyard.reasoning.questions import parts

from .bandit import Kind, choose, learn

ID = "plan-learning"
MAX_PENDING = 4_096
SEED = 0x5EED


class LearningPlanner:
    def __init__(self) -> None:
        self._kinds: dict[str, Kind] = {}
        self._pending: OrderedDict[str, tuple[str, bool]] = OrderedDict()
        self._rng = random.Random(SEED)

    def buildPlan(self, input: dict[str, Any], ctx: dict[str, Any], host: Any) -> dict[str, Any]:
        act, topic = _kind_of(input)
        key = f"{act}|{topic}"
        kind, where = self._kind(key, host)
        model = _model_ready(ctx)
        candidates = input.get("candidates") or {}
        orders, explored, notes = choose(kind, candidates, act, topic, self._rng, model)
        preferred = input.get("sessionPreferences") or {}
        for stage, order in orders.items():
            if preferred.get(stage) in order:
                order.remove(preferred[stage])
                order.insert(0, preferred[stage])
        rejected = [
            a.get("goalSolver")
            for a in input.get("previousAttempts") or []
            if isinstance(a, dict) and a.get("outcome") == "rejected"
        ]
        order = orders.get("goal-solver", [])
        for solver in rejected:
            if solver in order:  # rejected in this request: tried last now
                order.remove(solver)
                order.append(solver)
        if where:
            notes.append(where)
        compound = len(parts(str(input.get("prompt") or ""))) > 1
        if compound:
            notes.append("a compound question: each part retrieved and answered on its own")
        request = str(ctx.get("requestId") or ctx.get("request_id") or "")
        self._pending[request] = (key, explored)
        while len(self._pending) > MAX_PENDING:
            self._pending.popitem(last=False)
        return {
            "plannerPluginId": ID,
            "kbPluginOrder": orders.get("kb", []),
            "goalSolverOrder": orders.get("goal-solver", []),
            "decompose": compound,
            "framePurpose": "subtask-decomposition" if compound else None,
            "notes": notes,
        }

    def recordOutcome(self, outcome: dict[str, Any], ctx: dict[str, Any], host: Any) -> None:
        pending = self._pending.pop(str(outcome.get("requestId") or ""), None)
        if pending is None:
            return  # not a request this planner planned in this process
        key, explored = pending
        kind, _ = self._kind(key, host)
        kind.requests += 1
        kind.explored += int(explored)
        learn(kind, [s for s in outcome.get("stages") or [] if isinstance(s, dict)], ID)
        self._save(key, kind, host)

    def _kind(self, key: str, host: Any) -> tuple[Kind, str | None]:
        if key in self._kinds:
            return self._kinds[key], None
        storage = _storage(host)
        kind = Kind.of(storage.get(f"kind:{key}") if storage is not None else None)
        self._kinds[key] = kind
        return kind, None if storage is not None else "learning kept in memory: no host storage"

    def _save(self, key: str, kind: Kind, host: Any) -> None:
        storage = _storage(host)
        if storage is not None:
            storage.put(f"kind:{key}", kind.to_json())


def _model_ready(ctx: dict[str, Any]) -> bool:
    """Whether the request has a model to call: one is named and the budget allows a call."""
    settings = ctx.get("modelSettings") if isinstance(ctx, dict) else None
    named = isinstance(settings, dict) and bool(settings.get("model"))
    budgets = ctx.get("budgets") if isinstance(ctx, dict) else None
    left = budgets.get("llmCalls") if isinstance(budgets, dict) else None
    return named and (not isinstance(left, int | float) or left > 0)


def _storage(host: Any) -> Any:
    try:
        return host.storage if host is not None else None
    except Exception:  # not declared here, or not offered by an ungoverned host
        return None


def _kind_of(input: dict[str, Any]) -> tuple[str, str]:
    intents = [i for i in input.get("intents") or [] if isinstance(i, dict)]
    first = intents[0] if intents else {}
    act, topic = first.get("act"), first.get("topic")
    return (
        act if isinstance(act, str) else "explain",
        topic if isinstance(topic, str) else "general",
    )
