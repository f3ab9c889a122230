"""Per-call overhead of plugyard's executor next to a direct call, the official MCP Python
SDK's in-process client, and LangChain's ``StructuredTool.invoke`` — one trivial
``add(a, b)`` operation, measured in one run so the ratios are fair on a noisy machine.

    bash scripts/bench.sh call_overhead            # prints a table
    bash scripts/bench.sh call_overhead --json     # the same as JSON

plugyard's path is a bare yard's: the steps ``resolve → budget → validate`` (registry
lookup, availability and budget, parameter validation), the deadline, the in-process
Python runtime, output validation, size check and the result envelope. Two more rows
add one step each: an audit event on the hash chain in an in-memory store (the audit of
``Governance.in_memory()``), and a user's step that does nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from _timing import median_per_call

from plugyard.execution.executor import CallRequest, Executor
from plugyard.execution.result import Result
from plugyard.execution.steps import StepBase, StepView
from plugyard.governance.audit.chain import ChainedAudit
from plugyard.governance.audit.step import AuditStep
from plugyard.registry.model import RegisteredPlugin
from plugyard.runtimes.base import Outcome
from plugyard.runtimes.python import InProcessRuntime, definition_of, tool
from plugyard.store.audit import SqlAuditRepository
from plugyard.store.store import Store
from plugyard.yard.steps import Placement, with_step

ROUNDS = 15


@tool(id="bench", inline=True)
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


async def timed_median(fn: Callable[[], Awaitable[Any]], calls: int) -> float:
    """Median of ROUNDS rounds, in µs per call."""
    return await median_per_call(fn, calls, warm=500, rounds=ROUNDS) * 1e6


async def throughput(fn: Callable[[], Awaitable[Any]], concurrency: int, total: int) -> float:
    """Calls per second with ``concurrency`` callers sharing ``total`` calls."""
    per = total // concurrency

    async def worker() -> None:
        for _ in range(per):
            await fn()

    await asyncio.gather(*(worker() for _ in range(concurrency)))  # warm
    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return per * concurrency / (time.perf_counter() - start)


class Noop(StepBase):
    """A user's step with both hooks, doing nothing: the cost of one added step."""

    name = "noop"

    def before(self, call: StepView) -> Outcome | None:
        return None

    def after(self, call: StepView, result: Result) -> Result:
        return result


def build_plugyard() -> Executor:
    definition = definition_of(add)
    assert definition is not None
    registered = RegisteredPlugin.of(definition.descriptor, "code")
    runtime = InProcessRuntime()
    runtime.provide(add)

    class One:
        def find(self, plugin_id: str) -> RegisteredPlugin | None:
            return registered if plugin_id == registered.id else None

    return Executor(One(), {"python": runtime})


async def run(calls: int) -> dict[str, Any]:
    from langchain_core.tools import StructuredTool
    from mcp import Client
    from mcp.server.mcpserver import MCPServer

    rows: dict[str, Any] = {}

    async def direct() -> int:
        return add(1, 2)

    rows["direct Python call"] = await timed_median(direct, calls)

    executor = build_plugyard()
    request = CallRequest("bench", "add", {"a": 1, "b": 2})
    check = await executor.call(request)
    assert check.data == 3, check

    async def via_plugyard() -> Any:
        return await executor.call(request)

    rows["plugyard executor (full path)"] = await timed_median(via_plugyard, calls)

    audited = build_plugyard()
    chain = ChainedAudit(SqlAuditRepository(Store.open(":memory:")), b"k" * 32)
    audited.steps = [AuditStep(chain), *audited.steps]
    rows["plugyard executor + audit step (chain, in-memory store)"] = await timed_median(
        lambda: audited.call(request), calls
    )
    stepped = build_plugyard()
    stepped.steps = with_step(stepped.steps, Placement(Noop()))
    assert "noop" in stepped.step_names
    rows["plugyard executor + a no-op user step"] = await timed_median(
        lambda: stepped.call(request), calls
    )

    server = MCPServer("bench")
    server.tool()(add)
    async with Client(server) as client:
        result = await client.call_tool("add", {"a": 1, "b": 2})
        assert not result.is_error, result

        async def via_mcp() -> Any:
            return await client.call_tool("add", {"a": 1, "b": 2})

        rows["MCP SDK in-process client"] = await timed_median(via_mcp, max(calls // 20, 50))

    tool = StructuredTool.from_function(add)

    async def via_langchain() -> Any:
        return tool.invoke({"a": 1, "b": 2})

    rows["LangChain StructuredTool.invoke"] = await timed_median(
        via_langchain, max(calls // 10, 100)
    )

    per_call = rows["plugyard executor (full path)"]
    ratios = {
        "vs MCP SDK in-process": rows["MCP SDK in-process client"] / per_call,
        "vs LangChain": rows["LangChain StructuredTool.invoke"] / per_call,
    }
    rates = {
        "calls/s, 1 caller": await throughput(via_plugyard, 1, calls * 2),
        "calls/s, 64 callers": await throughput(via_plugyard, 64, calls * 2),
    }
    return {"median_us": rows, "plugyard_speedup": ratios, "plugyard_throughput": rates}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=5000, help="calls per timed round")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = asyncio.run(run(args.calls))
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
        return
    print(f"{'path':<36} {'median µs/call':>15}")
    for name, value in report["median_us"].items():
        print(f"{name:<36} {value:>15.2f}")
    for name, value in report["plugyard_speedup"].items():
        print(f"{'plugyard speed-up ' + name:<36} {value:>14.1f}×")
    for name, value in report["plugyard_throughput"].items():
        print(f"{'plugyard ' + name:<36} {value:>15,.0f}")


if __name__ == "__main__":
    main()
