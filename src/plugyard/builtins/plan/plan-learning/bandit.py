"""Per kind of request, a Beta posterior of each plugin's success per stage, and the
choice of an order from them (Thompson sampling with a bounded exploration share)."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

PRIOR_WEIGHT = 4.0
UNMATCHED = 0.6
EXPLORE_FREE = 20
EXPLORE_SHARE = 0.1
STAGES = (("kb", "kb"), ("goal-solver", "goalSolver"))


@dataclass
class Kind:
    """What was learnt about one kind of request (act/topic)."""

    requests: int = 0
    explored: int = 0
    arms: dict[str, dict[str, list[float]]] = field(default_factory=dict)  # stage → id → [s, f]

    def to_json(self) -> dict[str, Any]:
        return {"requests": self.requests, "explored": self.explored, "arms": self.arms}

    @classmethod
    def of(cls, data: Any) -> Kind:
        if not isinstance(data, dict):
            return cls()
        found = data.get("arms")
        arms: dict[str, dict[str, list[float]]] = found if isinstance(found, dict) else {}
        return cls(int(data.get("requests") or 0), int(data.get("explored") or 0), arms)

    def counts(self, stage: str, plugin: str) -> list[float]:
        return self.arms.setdefault(stage, {}).setdefault(plugin, [0.0, 0.0])

    def may_explore(self) -> bool:
        return self.explored < EXPLORE_FREE + EXPLORE_SHARE * self.requests


def prior(
    candidate: dict[str, Any], act: str, topic: str, model: bool = False
) -> tuple[float, float]:
    """Beta(α, β) from the candidate's planner hints, worth PRIOR_WEIGHT observations. With
    a model to call, a model-backed candidate is taken to serve every act."""
    hints = candidate.get("plannerHints") or {}
    confidence = hints.get("confidenceWhenMatched")
    confidence = float(confidence) if isinstance(confidence, int | float) else 0.5
    topics = [t for t in hints.get("topicTags") or [] if t != "general"]  # no specialty
    matched = act in (hints.get("supportedActs") or []) or topic in topics
    matched = matched or (model and bool(candidate.get("usesLLM")))
    mean = min(max(confidence if matched else UNMATCHED * confidence, 0.02), 0.98)
    return mean * PRIOR_WEIGHT, (1 - mean) * PRIOR_WEIGHT


def posterior(
    kind: Kind, stage: str, candidate: dict[str, Any], act: str, topic: str, model: bool = False
) -> tuple[float, float]:
    a, b = prior(candidate, act, topic, model)
    wins, losses = kind.counts(stage, candidate["id"])
    return a + wins, b + losses


def choose(
    kind: Kind, candidates: dict[str, list[dict[str, Any]]], act: str, topic: str,
    rng: random.Random, model: bool = False,
) -> tuple[dict[str, list[str]], bool, list[str]]:  # fmt: skip
    """The orders per stage, whether they explore, and the notes that say why."""
    greedy: dict[str, list[str]] = {}
    sampled: dict[str, list[str]] = {}
    rows: dict[str, dict[str, tuple[float, float, float]]] = {}  # stage → id → (a, b, cost)
    notes: list[str] = []
    for stage, key in STAGES:
        ranked = []
        for candidate in candidates.get(key) or []:
            a, b = posterior(kind, stage, candidate, act, topic, model)
            cost = _cost(candidate, model)
            rows.setdefault(stage, {})[candidate["id"]] = (a, b, cost)
            ranked.append((candidate["id"], a / (a + b) - cost, rng.betavariate(a, b) - cost))
        greedy[stage] = [r[0] for r in sorted(ranked, key=lambda r: (-r[1], r[0]))]
        sampled[stage] = [r[0] for r in sorted(ranked, key=lambda r: (-r[2], r[0]))]
        seen = ", ".join(
            f"{p} {m:.2f} ({sum(rows[stage][p][:2]) - PRIOR_WEIGHT:.0f} seen)" for p, m, _ in ranked
        )
        notes.append(f"{stage}: learnt {seen or 'no candidate'}")
    where = f"{act}/{topic}"
    differing = [s for s, _ in STAGES if sampled[s][:1] != greedy[s][:1]]
    if not differing:
        notes.insert(0, f"exploit: best learnt order for {where} (the samples agree)")
        return greedy, False, notes
    stage = differing[0]
    alt, lead = sampled[stage][0], greedy[stage][0]
    if not kind.may_explore():
        notes.insert(0, f"exploit: best learnt order for {where} (exploration share used up)")
        return greedy, False, notes
    chance = _beats(rows[stage][alt], rows[stage][lead])
    notes.insert(0, f"explore: {alt} first at {stage} instead of {lead} (a Thompson sample "
                    f"ranked it higher; a {chance:.0%} chance it is better); "
                    f"{kind.explored + 1} of {kind.requests + 1} {where} requests explored, "
                    f"at most {EXPLORE_FREE} + {EXPLORE_SHARE:.0%}")  # fmt: skip
    return sampled, True, notes


def _beats(alt: tuple[float, float, float], lead: tuple[float, float, float]) -> float:
    """The chance that ``alt`` is truly better than ``lead`` (cost included): a normal
    approximation of the difference of their Beta posteriors."""

    def moments(arm: tuple[float, float, float]) -> tuple[float, float]:
        a, b, cost = arm
        n = a + b
        return a / n - cost, a * b / (n * n * (n + 1))

    (mean_alt, var_alt), (mean_lead, var_lead) = moments(alt), moments(lead)
    spread = math.sqrt(var_alt + var_lead) or 1e-9
    return 0.5 * (1 + math.erf((mean_alt - mean_lead) / spread / math.sqrt(2)))


def learn(kind: Kind, stages: list[dict[str, Any]], me: str) -> None:
    """Update the posteriors from one record's stage entries this planner ordered."""
    mine = [s for s in stages if s.get("plannerPluginId") == me]
    found_context = any(s.get("stage") == "kb" and s.get("sufficient") for s in stages)
    answering: str | None = None
    for entry in mine:
        stage, plugin, status = entry.get("stage"), entry.get("pluginId"), entry.get("status")
        if not isinstance(plugin, str) or status == "skipped-budget":
            continue
        if stage == "kb":
            _count(kind, "kb", plugin, status == "success" and entry.get("sufficient") is True)
        elif stage == "goal-solver":
            if status == "success":
                answering = plugin
                _count(kind, "goal-solver", plugin, True)
            elif status != "needs-decomposition" and (status == "error" or found_context):
                _count(kind, "goal-solver", plugin, False)
        elif stage == "validation" and status == "rejected" and answering is not None:
            counts = kind.counts("goal-solver", answering)
            counts[0], counts[1] = counts[0] - 1, counts[1] + 1  # its success was not one
            answering = None


def _count(kind: Kind, stage: str, plugin: str, success: bool) -> None:
    kind.counts(stage, plugin)[0 if success else 1] += 1


def _cost(candidate: dict[str, Any], model: bool = False) -> float:
    """What trying the plugin costs, in units of success: a fifth of its relative cost,
    and 0.1 for a model call when no model is ready to take it — a model-backed plugin
    then goes first only when it is that much likelier to succeed."""
    hints = candidate.get("plannerHints") or {}
    cost = hints.get("relativeCost")
    value = float(cost) if isinstance(cost, int | float) and math.isfinite(cost) else 0.5
    return 0.2 * value + (0.1 if candidate.get("usesLLM") and not model else 0.0)
