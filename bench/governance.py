"""The governed call path for an in-process operation, and what each step costs.

    bash scripts/bench.sh governance            # prints a table
    bash scripts/bench.sh governance --json     # the same as JSON

One trivial ``add(a, b)`` operation (``@tool(inline=True)``) called through the executor
on an embedded SQLite store (WAL, a file in a temporary folder): bare, then with each
governed step added — the RBAC decision (a loaded policy), the durable hash-chained
audit event, an idempotency claim (a fresh key per call, so every call claims and
completes one). Each step is also timed on its own. Target: governed median ≤ 150 µs.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _timing import median_per_call, median_per_call_sync

from plugyard.execution.executor import CallRequest, Executor
from plugyard.execution.result import Result
from plugyard.execution.steps import StepBase, StepView
from plugyard.governance.audit.event import AuditEvent
from plugyard.governance.core import Governance
from plugyard.governance.policy.book import PolicyBook, facts_from
from plugyard.governance.policy.rbac import Rbac
from plugyard.registry.model import RegisteredPlugin
from plugyard.runtimes.base import CallContext, Outcome
from plugyard.runtimes.python import InProcessRuntime, definition_of, tool
from plugyard.store.policies import SqlPolicyRepository
from plugyard.store.store import Store
from plugyard.types import Caller
from plugyard.yard.steps import Placement, call_path

ROUNDS = 15
CALLS = 2000
POLICY = """
subjects: {alice: {roles: [analyst]}}
roles: {analyst: {inherits: [viewer]}}
grants:
  - {to: "role:viewer", plugin: "*", effect: allow}
  - {to: "*", plugin: "secret-*", effect: deny}
"""


@tool(id="bench", inline=True)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Table:
    def __init__(self, plugin: RegisteredPlugin) -> None:
        self.plugin = plugin

    def find(self, plugin_id: str) -> RegisteredPlugin | None:
        return self.plugin if plugin_id == self.plugin.id else None


class Noop(StepBase):
    """A user's step with both hooks, doing nothing."""

    name = "noop"

    def before(self, call: StepView) -> Outcome | None:
        return None

    def after(self, call: StepView, result: Result) -> Result:
        return result


def median_us(fn: Callable[[], Any], calls: int = CALLS) -> float:
    return median_per_call_sync(fn, calls, warm=300, rounds=ROUNDS) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="plugyard-bench-") as folder:
        figures = measure(Path(folder))
    if args.json:
        json.dump(figures, sys.stdout, indent=2)
        print()
        return
    print(f"{'path / step':52} {'median µs':>10}")
    for name, value in figures.items():
        print(f"{name:52} {value:10.2f}")


def parts(store: Store) -> tuple[Table, dict[str, Any], PolicyBook, Governance]:
    """The bench's one plugin, its runtime, the policy and governance over ``store``."""
    environ = {"PLUGYARD_AUDIT_KEY": "11" * 32, "PLUGYARD_SECRETS_KEY": "22" * 32}
    runtime = InProcessRuntime()
    definition = definition_of(add)
    assert definition is not None
    runtime.provide(add)
    table = Table(RegisteredPlugin.of(definition.descriptor, "code"))
    book = PolicyBook(SqlPolicyRepository(store), facts=facts_from(table.find))
    book.load_text(POLICY)
    return table, {"python": runtime}, book, Governance.over(store, environ=environ)


def measure(folder: Path) -> dict[str, float]:
    store = Store.open(str(folder / "bench.db"))
    table, runtimes, book, governance = parts(store)
    counter = itertools.count()
    loop = asyncio.new_event_loop()
    params = {"a": 2, "b": 3}

    def timed(executor: Executor, keyed: bool) -> float:
        async def rounds() -> float:
            async def one() -> None:
                key = f"k{next(counter)}" if keyed else None
                context = CallContext("r", subject="alice", idempotency_key=key)
                result = await executor.call(CallRequest("bench", "add", params, context))
                assert result.status == "success", result

            return await median_per_call(one, CALLS, warm=300, rounds=ROUNDS) * 1e6

        return loop.run_until_complete(rounds())

    bare = Executor(table, runtimes)
    with_policy = Executor(table, runtimes, steps=call_path(table, policy=book))
    governed = Executor(table, runtimes, steps=call_path(table, policy=book, governance=governance))
    stepped = Executor(table, runtimes, steps=call_path(table, policy=book, governance=governance,
                                                        added=[Placement(Noop())]))  # fmt: skip
    figures: dict[str, float] = {}
    figures["executor, ungoverned (resolve, budget, validate)"] = timed(bare, False)
    figures["+ RBAC decision (cached per version)"] = timed(with_policy, False)
    figures["all governed steps, no idempotency key"] = timed(governed, False)
    figures["+ idempotency claim and completion = governed"] = timed(governed, True)
    figures["governed + a no-op user step"] = timed(stepped, True)

    subject = Caller("alice")
    figures["step alone: policy decision"] = median_us(
        lambda: book.decide(subject, "bench", "add", params)
    )
    event = AuditEvent(
        "r",
        "alice",
        "bench",
        "add",
        "0" * 64,
        "allow",
        "success",
        None,
        time.time(),
        0.01,
        book.version,
    )
    compiled = Rbac(book.document) if book.document is not None else None
    assert compiled is not None
    figures["step alone: policy decision, uncached"] = median_us(
        lambda: compiled.decide(subject, "bench", "add")
    )
    figures["step alone: audit append"] = median_us(lambda: governance.audit.emit(event))
    ledger = governance.idempotency

    def claim_and_complete() -> None:
        claim = ledger.claim(
            subject="alice",
            key=f"s{next(counter)}",
            digest="d" * 64,
            plugin_id="bench",
            operation="add",
            request_id="r",
            read_only=True,
        )
        ledger.complete(claim, "done", {"status": "success", "data": 5})  # type: ignore[arg-type]

    figures["step alone: idempotency claim + completion"] = median_us(claim_and_complete)
    check = governance.audit.verify()
    assert check.ok, check
    loop.close()
    store.close()
    return {k: round(v, 2) for k, v in figures.items()}


if __name__ == "__main__":
    main()
