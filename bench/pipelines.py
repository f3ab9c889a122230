"""Pipeline engine overhead per stage, and a 32-branch fork/join of a 10 ms plugin.

    bash scripts/bench.sh pipelines            # prints a table
    bash scripts/bench.sh pipelines --json     # the same as JSON

1. Overhead: a pipeline of N stages of one trivial inline plugin, run by the engine on
   an already validated plan, next to N direct ``Executor.call``s with the same
   parameters. (Validation, which the service repeats before every run, is timed apart.)
2. Fan-out: an ASYNC group of 32 branches, each an async plugin that sleeps 10 ms,
   between the bundled fork (``fork-copy``) and join (``join-merge``), next to a
   one-branch pipeline of the same plugin. Concurrent branches should finish in well
   under twice a single branch's time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from _timing import median_per_call

from plugyard.execution.executor import CallRequest, Executor
from plugyard.pipelines import Engine, validate
from plugyard.registry.model import RegisteredPlugin
from plugyard.runtimes.base import CallContext
from plugyard.runtimes.python import InProcessRuntime, definition_of, tool
from plugyard.yard import Settings, Yard

ROUNDS = 15
STAGES = 10
BRANCHES = 32


@tool(id="bench-add", placement="ALL", inline=True)
def add(a: int, b: int) -> dict[str, int]:
    """Adds two integers."""
    return {"sum": a + b}


@tool(id="bench-sleep", placement="ALL")
async def nap(ms: int = 10) -> dict[str, int]:
    """Sleeps ``ms`` milliseconds (async, so branches overlap)."""
    await asyncio.sleep(ms / 1000)
    return {"slept": ms}


async def median_ms(fn: Callable[[], Awaitable[Any]], repeat: int) -> float:
    """Median of ROUNDS rounds, in ms per call."""
    return await median_per_call(fn, repeat, warm=50, rounds=ROUNDS) * 1000


async def interleaved(
    first: Callable[[], Awaitable[Any]], second: Callable[[], Awaitable[Any]], repeat: int
) -> tuple[float, float]:
    """Medians in ms per call of two paths timed in alternating rounds, so that a noisy
    (shared) machine slows both alike."""
    for fn in (first, second):
        for _ in range(min(repeat, 50)):
            await fn()
    rounds: tuple[list[float], list[float]] = ([], [])
    for _ in range(ROUNDS * 2):
        for fn, out in ((first, rounds[0]), (second, rounds[1])):
            start = time.perf_counter()
            for _ in range(repeat):
                await fn()
            out.append((time.perf_counter() - start) / repeat * 1000)
    return statistics.median(rounds[0]), statistics.median(rounds[1])


def pipeline(*flow: Any) -> dict[str, Any]:
    return {"name": "bench", "capabilities": [{"capability": "TOOL", "flow": list(flow)}]}


class Table:
    """The plugins of the overhead run, looked up in a dict (as bench/call_overhead.py
    does), so the figures are the engine's and the executor's, not the database's."""

    def __init__(self, *plugins: RegisteredPlugin) -> None:
        self.plugins = {p.id: p for p in plugins}

    def find(self, plugin_id: str) -> RegisteredPlugin | None:
        return self.plugins.get(plugin_id)

    def list(self, family: str | None = None) -> tuple[RegisteredPlugin, ...]:
        return tuple(self.plugins.values())


async def overhead(repeat: int) -> dict[str, float]:
    definition = definition_of(add)
    assert definition is not None
    table = Table(RegisteredPlugin.of(definition.descriptor, "code"))
    runtime = InProcessRuntime()
    runtime.provide(add)
    executor = Executor(table, {"python": runtime})
    engine = Engine(executor)
    stage = {"plugin": "bench-add", "input": {"a": "a", "b": "b"}, "output": "out"}
    document = pipeline(*[stage] * STAGES)
    plan = validate(document, table).plan
    assert plan is not None
    context = CallContext(request_id="bench")
    request = CallRequest("bench-add", "add", {"a": 1, "b": 2}, context)
    data = {"a": 1, "b": 2}

    async def direct() -> None:
        for _ in range(STAGES):
            result = await executor.call(request)
            assert result.ok

    async def engine_run() -> None:
        run = await engine.run(plan, data, context=context)
        assert run.ok

    async def validation() -> None:
        validate(document, table)

    direct_ms, engine_ms = await interleaved(direct, engine_run, repeat)
    validate_ms = await median_ms(validation, repeat)
    return {
        "executor_call_us": direct_ms / STAGES * 1000,
        "pipeline_stage_us": engine_ms / STAGES * 1000,
        "engine_overhead_per_stage_us": (engine_ms - direct_ms) / STAGES * 1000,
        "validation_of_10_stages_us": validate_ms * 1000,
    }


async def fan_out(yard: Yard, engine: Engine, repeat: int) -> dict[str, float]:
    def fan(count: int) -> dict[str, Any]:
        branches = [{"plugin": "bench-sleep", "params": {"ms": 10}, "output": f"b{i}"}
                    for i in range(count)]  # fmt: skip
        join = {"plugin": "join-merge", "output": {"$": "result"}}
        return pipeline({"mode": "ASYNC", "fork": "fork-copy", "join": join, "children": branches})

    plans = {}
    for count in (1, BRANCHES):
        found = validate(fan(count), yard.registry).plan
        assert found is not None
        plans[count] = found
    single_stage = validate(pipeline({"plugin": "bench-sleep", "params": {"ms": 10}}),
                            yard.registry).plan  # fmt: skip
    assert single_stage is not None

    async def one(plan: Any) -> None:
        run = await engine.run(plan, {"q": "x"})
        assert run.ok, run.error

    single = await median_ms(lambda: one(single_stage), repeat)
    one_branch = await median_ms(lambda: one(plans[1]), repeat)
    many = await median_ms(lambda: one(plans[BRANCHES]), repeat)
    return {
        "single_stage_ms": single,
        "one_branch_fork_join_ms": one_branch,
        f"{BRANCHES}_branch_fork_join_ms": many,
        "ratio_vs_single_stage": many / single,
        "ratio_vs_one_branch": many / one_branch,
    }


async def run(repeat: int) -> dict[str, Any]:
    with Yard.from_settings(Settings(database=":memory:")) as yard:
        runtime = yard.runtimes["python"]
        assert isinstance(runtime, InProcessRuntime)
        for code in (add, nap):
            definition = definition_of(code)
            assert definition is not None
            runtime.provide(code)
            yard.registry.register(RegisteredPlugin.of(definition.descriptor, "code"))
        return {
            "overhead": await overhead(repeat * 20),
            "fan_out": await fan_out(yard, Engine(yard.executor), repeat),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=20, help="fan-out runs per timed round")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = asyncio.run(run(args.repeat))
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
        return
    print(f"{'engine overhead (' + str(STAGES) + ' inline stages)':<44} {'median':>12}")
    for name, value in report["overhead"].items():
        print(f"{name:<44} {value:>9.2f} µs")
    print(f"{'fan-out (' + str(BRANCHES) + ' × 10 ms async plugin)':<44} {'median':>12}")
    for name, value in report["fan_out"].items():
        unit = "×" if name.startswith("ratio") else "ms"
        print(f"{name:<44} {value:>9.2f} {unit}")


if __name__ == "__main__":
    main()
