"""The learning planner: priors from the hints, learning per act and topic from the
records, bounded and explained exploration, state kept in the host's storage."""

from __future__ import annotations

import asyncio
import importlib.util
import random
import re
import sys
from pathlib import Path
from typing import Any

from bundled_plugins import plugin_target

from plugyard.builtins import BUILTINS_DIR
from plugyard.runtimes.base import CallContext, Outcome
from plugyard.runtimes.python import InProcessRuntime
from plugyard.yard import Settings, Yard


class Storage:
    def __init__(self) -> None:
        self.items: dict[str, Any] = {}

    def get(self, key: str, default: Any = None) -> Any:
        return self.items.get(key, default)

    def put(self, key: str, value: Any) -> None:
        self.items[key] = value


class Host:
    def __init__(self, storage: Storage | None) -> None:
        self._storage = storage

    @property
    def storage(self) -> Storage:
        if self._storage is None:
            raise RuntimeError("capability_unavailable")
        return self._storage


class Planner:
    """The bundled planner in a runtime of its own (a fresh process, as it were)."""

    def __init__(self, storage: Storage | None = None) -> None:
        self.runtime = InProcessRuntime()
        self.target = plugin_target("plan-learning")
        self.host = Host(storage)
        self.count = 0

    def _call(self, op: str, params: dict[str, Any], request_id: str) -> Any:
        operation = self.target.descriptor.operation(op)
        assert operation is not None
        context = CallContext(request_id=request_id, extra={"requestId": request_id})
        answer = asyncio.run(
            self.runtime.invoke(self.target, operation, params, context, self.host)
        )
        assert isinstance(answer, Outcome) and answer.error is None, answer
        return answer.data

    def plan(self, act: str = "explain", topic: str = "legal", **more: Any) -> dict[str, Any]:
        self.count += 1
        params = {
            "prompt": "p",
            "intents": [{"act": act, "topic": topic}],
            "candidates": CANDIDATES,
            **more,
        }
        plan: dict[str, Any] = self._call("build_plan", params, f"r{self.count}")
        return plan

    def record(self, plan: dict[str, Any], kb_ok: set[str], gs_ok: set[str]) -> None:
        """The record of one request: the plan's first kb and gs, succeeding or not."""
        kb, gs = plan["kbPluginOrder"][0], plan["goalSolverOrder"][0]
        stages = [
            {
                "plannerPluginId": "plan-learning",
                "stage": "kb",
                "pluginId": kb,
                "status": "success" if kb in kb_ok else "insufficient",
                "sufficient": kb in kb_ok,
            },
            {
                "plannerPluginId": "plan-learning",
                "stage": "goal-solver",
                "pluginId": gs,
                "status": "success" if gs in gs_ok else "insufficient",
                "sufficient": None,
            },
        ]
        outcome = {
            "requestId": f"r{self.count}",
            "plannerPluginId": "plan-learning",
            "stages": stages,
            "finalStatus": "success",
        }
        self._call("record_outcome", outcome, f"r{self.count}")


def hints(confidence: float, acts: list[str] | None = None) -> dict[str, Any]:
    return {
        "confidenceWhenMatched": confidence,
        "relativeCost": 0.1,
        "supportedActs": acts or [],
        "topicTags": [],
    }


CANDIDATES = {
    "kb": [
        {"id": "kb-a", "plannerHints": hints(0.8, ["explain"])},
        {"id": "kb-b", "plannerHints": hints(0.6)},
    ],
    "goalSolver": [
        {"id": "gs-a", "plannerHints": hints(0.7, ["explain"])},
        {"id": "gs-b", "plannerHints": hints(0.7)},
    ],
}


def test_with_no_history_the_order_follows_the_hints() -> None:
    plan = Planner(Storage()).plan()
    assert plan["kbPluginOrder"] == ["kb-a", "kb-b"] and plan["goalSolverOrder"][0] == "gs-a"
    assert plan["notes"][0].startswith(("exploit:", "explore:"))


def test_it_learns_which_order_succeeds_per_act_and_topic() -> None:
    planner = Planner(Storage())
    for _ in range(40):  # for explain/legal, kb-b always finds the context, kb-a never
        planner.record(planner.plan(), kb_ok={"kb-b"}, gs_ok={"gs-a", "gs-b"})
    legal = planner.plan()
    assert legal["kbPluginOrder"][0] == "kb-b"
    other = planner.plan(topic="finance")  # another kind of request: still the priors
    assert other["kbPluginOrder"][0] == "kb-a"


def test_exploration_is_bounded_and_said() -> None:
    planner = Planner(Storage())
    coin = random.Random(3)
    even = {key: [{**c, "plannerHints": hints(0.6)} for c in found]
            for key, found in CANDIDATES.items()}  # fmt: skip
    firsts = []
    for _ in range(300):  # plugins alike, succeeding half the time: samples often disagree
        plan = planner.plan(candidates=even)
        firsts.append(plan["notes"][0])
        won = coin.random() < 0.5
        planner.record(plan, kb_ok={"kb-a", "kb-b"} if won else set(), gs_ok={"gs-a", "gs-b"})
    explored = [n for n in firsts if n.startswith("explore:")]
    assert 0 < len(explored) <= 20 + 0.1 * 300
    assert all("Thompson sample" in n and "at most 20 + 10%" in n for n in explored)


def test_a_kind_whose_exploration_is_used_up_exploits_and_says_why() -> None:
    name = "plan_learning_bandit_under_test"
    spec = importlib.util.spec_from_file_location(
        name, BUILTINS_DIR / "plan" / "plan-learning" / "bandit.py"
    )
    assert spec is not None and spec.loader is not None
    bandit = importlib.util.module_from_spec(spec)
    sys.modules[name] = bandit  # its dataclass looks its module up
    spec.loader.exec_module(bandit)
    even = {"kb": [{"id": "kb-a", "plannerHints": hints(0.6)},
                   {"id": "kb-b", "plannerHints": hints(0.6)}], "goalSolver": []}  # fmt: skip
    rng = random.Random(1)
    spent = bandit.Kind(requests=100, explored=20 + 10)
    fresh = bandit.Kind(requests=100, explored=0)
    spent_notes = {bandit.choose(spent, even, "explain", "x", rng)[2][0] for _ in range(50)}
    fresh_plans = [bandit.choose(fresh, even, "explain", "x", rng)[1] for _ in range(50)]
    assert any(n.endswith("(exploration share used up)") for n in spent_notes)
    assert not any(n.startswith("explore:") for n in spent_notes)
    assert any(fresh_plans)  # the same samples explore while the share lasts


def test_a_rejected_answer_counts_against_its_solver() -> None:
    planner = Planner(Storage())
    for _ in range(30):
        plan = planner.plan(act="define", topic="medical")
        gs = plan["goalSolverOrder"][0]
        stages = [
            {
                "plannerPluginId": "plan-learning",
                "stage": "kb",
                "pluginId": "kb-a",
                "status": "success",
                "sufficient": True,
            },
            {
                "plannerPluginId": "plan-learning",
                "stage": "goal-solver",
                "pluginId": gs,
                "status": "success",
            },
            {
                "plannerPluginId": "plan-learning",
                "stage": "validation",
                "pluginId": "val",
                "status": "rejected" if gs == "gs-a" else "accepted",
            },
        ]
        planner._call(
            "record_outcome",
            {"requestId": f"r{planner.count}", "stages": stages},
            f"r{planner.count}",
        )
    assert planner.plan(act="define", topic="medical")["goalSolverOrder"][0] == "gs-b"


def test_what_it_learnt_survives_a_restart() -> None:
    storage = Storage()
    first = Planner(storage)
    for _ in range(40):
        first.record(first.plan(), kb_ok={"kb-b"}, gs_ok={"gs-a"})
    restarted = Planner(storage)  # a new process: only the storage remains
    assert restarted.plan()["kbPluginOrder"][0] == "kb-b"


def test_without_storage_it_learns_in_memory_and_says_so() -> None:
    plan = Planner(None).plan()
    assert "learning kept in memory: no host storage" in plan["notes"]


def test_a_governed_yard_keeps_the_planners_state_in_its_store(tmp_path: Path) -> None:
    settings = Settings(database=str(tmp_path / "y.db"), embedder="hashing")
    with Yard.from_settings(settings) as yard:
        for _ in range(3):
            asyncio.run(
                yard.reason(
                    "What is the capital of France?",
                    sources={"atlas": "Paris is the capital of France."},
                )
            )
    with Yard.from_settings(settings) as yard:
        answer = asyncio.run(
            yard.reason(
                "What is the capital of France?",
                sources={"atlas": "Paris is the capital of France."},
            )
        )
    notes = next(e.data["notes"] for e in answer.trace if e.kind == "plan")
    learnt = next(n for n in notes if n.startswith("kb: learnt"))
    seen = sum(int(n) for n in re.findall(r"\((\d+) seen\)", learnt))
    assert seen >= 3, notes  # each of the three earlier requests taught at least one KB


BUNDLED_SOLVERS = {
    "kb": [],
    "goalSolver": [
        {
            "id": "gs-extractive",
            "plannerHints": {**hints(0.6, ["lookup"]), "relativeCost": 0.03},
        },
        {
            "id": "gs-llm",
            "usesLLM": True,
            "plannerHints": {**hints(0.75, ["explain"]), "relativeCost": 0.5},
        },
    ],
}


def plan_with(model: str | None, prompt: str = "When was it built?", **more: Any) -> Any:
    target = plugin_target("plan-learning")
    operation = target.descriptor.operation("build_plan")
    assert operation is not None
    context = CallContext(
        request_id="m1",
        budgets={"llmCalls": 4},
        extra={"requestId": "m1", "modelSettings": {"model": model}},
    )
    params = {
        "prompt": prompt,
        "intents": [{"act": "lookup", "topic": "general"}],
        "candidates": BUNDLED_SOLVERS,
        **more,
    }
    answer = asyncio.run(
        InProcessRuntime().invoke(target, operation, params, context, Host(Storage()))
    )
    assert isinstance(answer, Outcome) and answer.error is None, answer
    return answer.data


def test_with_a_model_to_call_the_model_backed_solver_goes_first() -> None:
    assert plan_with("embedded:some-model")["goalSolverOrder"] == ["gs-llm", "gs-extractive"]
    assert plan_with(None)["goalSolverOrder"] == ["gs-extractive", "gs-llm"]


def test_a_solver_rejected_in_this_request_goes_last_and_compound_questions_decompose() -> None:
    rejected = [{"outcome": "rejected", "goalSolver": "gs-llm"}]
    again = plan_with("embedded:some-model", previousAttempts=rejected)
    assert again["goalSolverOrder"] == ["gs-extractive", "gs-llm"]
    compound = plan_with(None, "How tall is the Eiffel Tower and when was it finished?")
    assert compound["decompose"] is True
