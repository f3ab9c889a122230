"""The reasoning loop: its own overhead per stage, and how fast the learning planner learns.

    bash scripts/bench.sh reasoning            # prints both tables
    bash scripts/bench.sh reasoning --json     # the same as JSON

1. Overhead: a request through the loop with trivial in-process plugins of each family
   (seed detector, planner, KB, goal solver, validator: six executor calls with
   ``recordOutcome``), next to six direct ``Executor.call``s of a trivial plugin; the
   difference is the loop's own work per stage (context, payloads, SOP admission, plan
   checks, trace, record). Also the same request on a yard as configured (SQLite store,
   durable audit), where the record and audit rows are written.
2. Learning: three simulated KB plugins and three simulated goal solvers whose success
   depends on hidden per-topic rates; each may make one model call and a request has two,
   so only the first KB and the first solver of the order get a chance: the order
   decides. Requests are drawn from four topics. The bundled learning planner, the
   bundled static planner (hints only; the hints are right for two topics of four) and
   an oracle (the best fixed order per topic) each answer the same 1,000 requests, in the
   same run. Target: the learning planner reaches >= 90 % of the oracle's success rate
   by request 200, and after that fewer than 10 % of its requests try a worse order.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from plugyard.builtins import BUILTINS_DIR
from plugyard.execution.executor import CallRequest, Executor
from plugyard.manifest.load import load_file, manifest_files
from plugyard.reasoning import ReasoningService
from plugyard.reasoning.store_sql import SqlOutcomeStore, SqlSessionStore
from plugyard.registry.model import RegisteredPlugin
from plugyard.registry.registry import Registry
from plugyard.runtimes.base import CallContext
from plugyard.runtimes.python import InProcessRuntime, plugin
from plugyard.store.store import Store
from plugyard.yard import Settings, Yard

ROUNDS = 15
REQUESTS = 1_000
MARKS = (50, 200, 1_000)
TOPICS = ("legal", "medical", "finance", "technical")
#: Hidden chance of success of each simulated plugin, per topic.
KB_RATES = {
    "kb-1": {"legal": 0.90, "medical": 0.30, "finance": 0.45, "technical": 0.50},
    "kb-2": {"legal": 0.50, "medical": 0.90, "finance": 0.30, "technical": 0.85},
    "kb-3": {"legal": 0.30, "medical": 0.50, "finance": 0.90, "technical": 0.40},
}
GS_RATES = {
    "gs-1": {"legal": 0.85, "medical": 0.60, "finance": 0.50, "technical": 0.40},
    "gs-2": {"legal": 0.55, "medical": 0.85, "finance": 0.40, "technical": 0.55},
    "gs-3": {"legal": 0.40, "medical": 0.45, "finance": 0.85, "technical": 0.90},
}
#: What the descriptors claim: right for legal and medical, silent on the rest.
HINTS = {
    "kb-1": (0.8, ["legal"]), "kb-2": (0.7, ["medical"]), "kb-3": (0.6, []),
    "gs-1": (0.8, ["legal"]), "gs-2": (0.7, ["medical"]), "gs-3": (0.6, []),
}  # fmt: skip


# ----------------------------------------------------------------------------- plugins


def family(plugin_id: str, kind: str, answers: dict[str, Any], **fields: Any) -> Any:
    fields.setdefault("description", f"A simulated {kind} plugin for the benchmark.")
    definition = plugin(plugin_id, family=kind, **fields)
    for operation, answer in answers.items():
        definition.operation(id=operation, inline=True)(answer)
    return definition


def seed(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
    topic = input["prompt"].split()[0]
    return {"status": "success", "intentCNL": f'@i1 intent explain "{input["prompt"]}"\n'
            f"@it1 set $i1 topic {topic}", "currentTurnContextCNL": None,
            "metadata": {"llmCalls": 0, "model": None}, "error": None}  # fmt: skip


def unsupported(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
    return {"status": "unsupported", "contextCNL": None, "metadata": {}, "error": None}


def simulated(plugin_id: str, rates: dict[str, float], rng: random.Random) -> Any:
    confidence, topics = HINTS[plugin_id]
    hints = {"confidence_when_matched": confidence, "topic_tags": topics, "relative_cost": 0.2}

    def topic_of(input: dict[str, Any]) -> str:
        return str(input["intents"][0]["topic"])

    def retrieve(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
        hit = rng.random() < rates[topic_of(input)]
        unit = [{"title": "t", "sourceLink": plugin_id, "text": f"evidence from {plugin_id}"}]
        return {"status": "success" if hit else "insufficient", "sufficient": hit,
                "resolvedIntents": [{"units": unit}] if hit else None,
                "metadata": {"llmCalls": 1}, "error": None}  # fmt: skip

    def solve(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
        if not input["context"]:
            status = "no-context"
        else:
            status = "success" if rng.random() < rates[topic_of(input)] else "no-context"
        return {"status": status, "responseMarkdown": "answer" if status == "success" else None,
                "metadata": {"llmCalls": 1, "model": "simulated"}, "error": None}  # fmt: skip

    kind = "kb" if plugin_id.startswith("kb") else "gs"
    answers = {"retrieve": retrieve} if kind == "kb" else {"solve": solve}
    return family(plugin_id, kind, answers, uses_llm=True, max_llm_calls=1, planner_hints=hints)


def oracle_planner() -> Any:
    def best(rates: dict[str, dict[str, float]], topic: str) -> list[str]:
        return sorted(rates, key=lambda p: -rates[p][topic])

    def build_plan(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
        topic = input["intents"][0]["topic"]
        return {"kbPluginOrder": best(KB_RATES, topic), "goalSolverOrder": best(GS_RATES, topic)}

    return family("plan-oracle", "plan", {"build_plan": build_plan,
                                          "record_outcome": lambda o, c: None})  # fmt: skip


def bundled(plugin_id: str) -> RegisteredPlugin:
    for path in manifest_files(BUILTINS_DIR):
        for descriptor in load_file(path).plugins:
            if descriptor.id == plugin_id:
                return RegisteredPlugin.of(descriptor, "builtin", location=str(path.parent))
    raise LookupError(plugin_id)


def service(planner: str, seed_value: int) -> ReasoningService:
    """A fresh registry, runtime and executor: the simulated plugins and one planner."""
    registry, runtime = Registry(), InProcessRuntime()
    rng = random.Random(seed_value)
    code = [family("sd-bench", "sd", {"detect_seeds": seed,
                                      "normalize_persistent_context": unsupported})]  # fmt: skip
    code += [simulated(p, r, rng) for p, r in (KB_RATES | GS_RATES).items()]
    if planner == "plan-oracle":
        code.append(oracle_planner())
    for definition in code:
        runtime.provide(definition)
        registry.register(RegisteredPlugin.of(definition.descriptor, "code"))
    if planner != "plan-oracle":
        registry.register(bundled(planner))
    executor = Executor(registry, {"python": runtime})
    return in_memory(executor, registry)


def in_memory(executor: Executor, registry: Registry) -> ReasoningService:
    """A service whose sessions and records live in an in-memory store (left open: it
    lasts as long as the bench)."""
    store = Store.open(":memory:")
    return ReasoningService(executor, registry, SqlSessionStore(store), SqlOutcomeStore(store))


# ----------------------------------------------------------------------------- learning


async def learning_run(planner: str, topics: list[str], seed_value: int) -> dict[str, Any]:
    reasoning = service(planner, seed_value)
    wins: list[bool] = []
    worse: list[bool] = []
    explored: list[bool] = []
    for topic in topics:
        answer = await reasoning.reason(f"{topic} question", budget=2)
        wins.append(answer.status == "answered")
        plan = next(e.data for e in answer.trace if e.kind == "plan")
        best_kb = max(KB_RATES, key=lambda p: KB_RATES[p][topic])
        best_gs = max(GS_RATES, key=lambda p: GS_RATES[p][topic])
        worse.append(plan["kbPluginOrder"][0] != best_kb or plan["goalSolverOrder"][0] != best_gs)
        explored.append(bool(plan["notes"]) and str(plan["notes"][0]).startswith("explore:"))
    return {"wins": wins, "worse": worse, "explored": explored}


def rate(values: list[bool], start: int, end: int) -> float:
    part = values[start:end]
    return sum(part) / len(part) if part else 0.0


PLANNERS = ("plan-learning", "plan-static", "plan-oracle")
#: Columns: cumulative success over the first N requests, the rate reached at request
#: 200 (over requests 101-200), the rate after, and how often an order was worse.
COLUMNS = {
    **{f"first {m}": (lambda f, m=m: rate(f["wins"], 0, m)) for m in MARKS},
    "at 200 (101-200)": lambda f: rate(f["wins"], 100, 200),
    "after 200": lambda f: rate(f["wins"], 200, REQUESTS),
    "worse order after 200": lambda f: rate(f["worse"], 200, REQUESTS),
    "explored after 200": lambda f: rate(f["explored"], 200, REQUESTS),
}


async def learning(repetitions: int = 5) -> dict[str, Any]:
    """Each repetition draws its own requests and plugin outcomes (its seed); the three
    planners answer the same requests within it."""
    started = time.perf_counter()
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in PLANNERS}
    for seed_value in range(1, repetitions + 1):
        draw = random.Random(seed_value)
        topics = [draw.choice(TOPICS) for _ in range(REQUESTS)]
        for name in PLANNERS:
            found = await learning_run(name, topics, seed_value)
            rows[name].append({c: fn(found) for c, fn in COLUMNS.items()})
    table = {n: {c: statistics.mean(r[c] for r in rs) for c in COLUMNS} for n, rs in rows.items()}
    ratios = {
        column: [
            learnt[column] / oracle[column]
            for learnt, oracle in zip(rows["plan-learning"], rows["plan-oracle"], strict=True)
        ]
        for column in ("first 200", "at 200 (101-200)", "after 200")
    }
    return {
        "table": table,
        "learning / oracle": {
            c: {"mean": statistics.mean(v), "min": min(v)} for c, v in ratios.items()
        },
        "worst worse-order share after 200": max(
            r["worse order after 200"] for r in rows["plan-learning"]
        ),
        "repetitions": repetitions,
        "requests": repetitions * len(PLANNERS) * REQUESTS,
        "seconds": round(time.perf_counter() - started, 1),
    }


# ----------------------------------------------------------------------------- overhead


def trivial() -> list[Any]:
    seeds = {"status": "success", "intentCNL": '@i1 intent explain "x"'}
    found = {"status": "success", "resolvedIntents": [{"units": [{"text": "x"}]}],
             "sufficient": True}  # fmt: skip
    plan = {"kbPluginOrder": ["kb-t"], "goalSolverOrder": ["gs-t"]}
    answer = {"status": "success", "responseMarkdown": "x"}
    return [
        family("sd-t", "sd", {"detect_seeds": lambda i, c: seeds,
                              "normalize_persistent_context": unsupported}),
        family("kb-t", "kb", {"retrieve": lambda i, c: found}),
        family("gs-t", "gs", {"solve": lambda i, c: answer}),
        family("val-t", "val", {"validate": lambda i, c: {"status": "accepted"}}),
        family("plan-t", "plan", {"build_plan": lambda i, c: plan,
                                  "record_outcome": lambda o, c: None}),
    ]  # fmt: skip


async def timed(fn: Any, calls: int) -> float:
    for _ in range(min(calls, 50)):
        await fn()
    found = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(calls):
            await fn()
        found.append((time.perf_counter() - start) / calls)
    return statistics.median(found) * 1e6


async def overhead() -> dict[str, float]:
    registry, runtime = Registry(), InProcessRuntime()
    for definition in trivial():
        runtime.provide(definition)
        registry.register(RegisteredPlugin.of(definition.descriptor, "code"))
    executor = Executor(registry, {"python": runtime})
    reasoning = in_memory(executor, registry)
    request = CallRequest("gs-t", "solve", {"prompt": "x", "context": []},
                          CallContext(request_id="r"))  # fmt: skip

    async def six_calls() -> None:
        for _ in range(6):
            await executor.call(request)

    async def one_request() -> None:
        await reasoning.reason("x")

    bare = await timed(six_calls, 200) / 6
    loop = await timed(one_request, 200)
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(database=str(Path(folder) / "y.db"), builtins=False, embedder="hashing")
        with Yard.from_settings(settings) as yard:
            for definition in trivial():
                yard.runtimes["python"].provide(definition)  # type: ignore[attr-defined]
                yard.registry.register(RegisteredPlugin.of(definition.descriptor, "code"))

            async def on_yard() -> None:
                await yard.reason("x")

            stored = await timed(on_yard, 20)
    return {
        "Executor.call, per call (µs)": round(bare, 1),
        "request through the loop, 6 calls (µs)": round(loop, 1),
        "per stage (µs)": round(loop / 6, 1),
        "loop's own work per stage (µs)": round(loop / 6 - bare, 1),
        "request on a yard: SQLite record, durable audit (µs)": round(stored, 1),
    }


# ----------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="Print JSON instead of tables.")
    args = parser.parse_args()
    found = {"overhead": asyncio.run(overhead()), "learning": asyncio.run(learning())}
    if args.json:
        json.dump(found, sys.stdout, indent=2)
        print()
        return
    print("Loop overhead (trivial plugins)")
    for key, value in found["overhead"].items():
        print(f"  {key:<58} {value:>10.1f}")
    learnt = found["learning"]
    print(
        f"\nLearning ({learnt['repetitions']} repetitions, {learnt['requests']} requests "
        f"in {learnt['seconds']} s; means over the repetitions)"
    )
    print(f"  {'planner':<14}" + "".join(f"{c:>22}" for c in COLUMNS))
    for name, row in learnt["table"].items():
        print(f"  {name:<14}" + "".join(f"{row[c]:>22.1%}" for c in COLUMNS))
    for column, value in learnt["learning / oracle"].items():
        print(f"  learning / oracle, {column}: mean {value['mean']:.1%}, min {value['min']:.1%}")
    worst = learnt["worst worse-order share after 200"]
    print(f"  worst share of worse orders after 200: {worst:.1%}")


if __name__ == "__main__":
    main()
