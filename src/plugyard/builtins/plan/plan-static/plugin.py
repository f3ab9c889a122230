"""A DS027 ``mrp-plan-plugin`` ordering by the candidates' ``plannerHints`` only.

With a model to call (the context's ``modelSettings`` names one and the request's budget
allows a call), a model-backed goal solver is taken to serve every act and pays no
model-call penalty, so it goes before the extractive one: it answers from the evidence
when there is some (and makes no call when there is none), and the validator sends the
planner back to the next plan when its answer does not address the question."""

from __future__ import annotations

from typing import Any

from plugyard.reasoning.questions import parts

ID = "plan-static"


def buildPlan(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
    act, topic = request_kind(input)
    model = model_ready(ctx)
    candidates = input.get("candidates") or {}
    preferred = input.get("sessionPreferences") or {}
    rejected = [
        a.get("goalSolver")
        for a in input.get("previousAttempts") or []
        if isinstance(a, dict) and a.get("outcome") == "rejected"
    ]
    notes = [f"request kind: {act}/{topic}" + (", a model to call" if model else "")]
    orders = {}
    for stage, key in (("kb", "kb"), ("goal-solver", "goalSolver")):
        scored = sorted(
            (
                (score(c, act, topic, model), c["id"])
                for c in candidates.get(key) or []
                if "id" in c
            ),
            key=lambda pair: (-pair[0], pair[1]),
        )
        order = [plugin for _, plugin in scored]
        if preferred.get(stage) in order:
            order.remove(preferred[stage])
            order.insert(0, preferred[stage])
        for solver in rejected if stage == "goal-solver" else ():
            if solver in order:
                order.remove(solver)
                order.append(solver)
        orders[stage] = order
        listed = ", ".join(f"{p} {s:.2f}" for s, p in scored)
        notes.append(f"{stage} by hints: {listed or 'no candidate'}")
    compound = len(parts(str(input.get("prompt") or ""))) > 1
    if compound:
        notes.append("a compound question: each part retrieved and answered on its own")
    return {
        "plannerPluginId": ID,
        "kbPluginOrder": orders["kb"],
        "goalSolverOrder": orders["goal-solver"],
        "decompose": compound,
        "framePurpose": "subtask-decomposition" if compound else None,
        "notes": notes,
    }


def recordOutcome(outcome: dict[str, Any], ctx: dict[str, Any]) -> None:
    return None


def request_kind(input: dict[str, Any]) -> tuple[str, str]:
    """The act and topic of the request's first intent."""
    intents = [i for i in input.get("intents") or [] if isinstance(i, dict)]
    first = intents[0] if intents else {}
    act, topic = first.get("act"), first.get("topic")
    return (
        act if isinstance(act, str) else "explain",
        topic if isinstance(topic, str) else "general",
    )


def model_ready(ctx: dict[str, Any]) -> bool:
    """Whether the request has a model to call: one is named and the budget allows a call."""
    settings = ctx.get("modelSettings") if isinstance(ctx, dict) else None
    named = isinstance(settings, dict) and bool(settings.get("model"))
    budgets = ctx.get("budgets") if isinstance(ctx, dict) else None
    left = budgets.get("llmCalls") if isinstance(budgets, dict) else None
    return named and (not isinstance(left, int | float) or left > 0)


def score(candidate: dict[str, Any], act: str, topic: str, model: bool = False) -> float:
    hints = candidate.get("plannerHints") or {}
    uses_llm = bool(candidate.get("usesLLM"))
    confidence = hints.get("confidenceWhenMatched")
    confidence = confidence if isinstance(confidence, int | float) else 0.5
    # "general" is no specialty: it matches nothing by itself.
    topics = [t for t in hints.get("topicTags") or [] if t != "general"]
    matched = act in (hints.get("supportedActs") or []) or topic in topics or (model and uses_llm)
    given = hints.get("relativeCost")
    cost = float(given) if isinstance(given, int | float) else 0.5
    value = (confidence if matched else 0.6 * confidence) - 0.2 * cost
    return round(value - (0.1 if uses_llm and not model else 0.0), 4)
