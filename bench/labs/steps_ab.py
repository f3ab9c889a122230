"""Lab: the governed path of two checkouts of plugyard, in alternating processes.

    git archive <commit> src bench | tar -x -C <folder>
    PYTHONPATH=<folder>/src python bench/labs/steps_ab.py <folder> before
    python bench/labs/steps_ab.py . after

Each process prints the median µs per call of five rounds (bare, governed without an
idempotency key, governed with one) over the same in-process ``add(a, b)`` and policy as
bench/governance.py. Alternating the two on a busy machine shares its load fairly.
Works with the executor before issue 29 (``policy=``/``governance=`` arguments) and
after (a list of steps).
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, sys.argv[1] + "/bench")
import governance as bench
from plugyard.execution.executor import CallRequest, Executor
from plugyard.governance.core import Governance
from plugyard.governance.policy.book import PolicyBook, facts_from
from plugyard.registry.model import RegisteredPlugin
from plugyard.runtimes.base import CallContext
from plugyard.runtimes.python import InProcessRuntime, definition_of
from plugyard.store.policies import SqlPolicyRepository
from plugyard.store.store import Store

KEYS = {"PLUGYARD_AUDIT_KEY": "11" * 32, "PLUGYARD_SECRETS_KEY": "22" * 32}


def main() -> None:
    store = Store.open(str(Path(tempfile.mkdtemp()) / "lab.db"))
    runtime = InProcessRuntime()
    definition = definition_of(bench.add)
    assert definition is not None
    runtime.provide(bench.add)
    table = bench.Table(RegisteredPlugin.of(definition.descriptor, "code"))
    book = PolicyBook(SqlPolicyRepository(store), facts=facts_from(table.find))
    book.load_text(bench.POLICY)
    governance = Governance.over(store, environ=KEYS)
    runtimes = {"python": runtime}
    try:
        from plugyard.yard.steps import call_path

        steps = call_path(table, policy=book, governance=governance)
        governed = Executor(table, runtimes, steps=steps)
    except ImportError:  # before issue 29
        governed = Executor(table, runtimes, policy=book, audit=governance.audit,  # type: ignore[call-arg]
                            governance=governance)  # fmt: skip
    bare = Executor(table, runtimes)
    loop = asyncio.new_event_loop()
    counter = itertools.count()

    async def per_call(executor: Executor, calls: int, keyed: bool) -> float:
        start = time.perf_counter()
        for _ in range(calls):
            key = f"k{next(counter)}" if keyed else None
            context = CallContext("r", subject="alice", idempotency_key=key)
            result = await executor.call(CallRequest("bench", "add", {"a": 2, "b": 3}, context))
            assert result.status == "success", result
        return (time.perf_counter() - start) / calls * 1e6

    figures = {}
    for name, executor, keyed, calls in (("bare", bare, False, 3000),
                                         ("governed, no key", governed, False, 1000),
                                         ("governed", governed, True, 500)):  # fmt: skip
        loop.run_until_complete(per_call(executor, 200, keyed))
        rounds = [loop.run_until_complete(per_call(executor, calls, keyed)) for _ in range(5)]
        figures[name] = round(statistics.median(rounds), 1)
    print(sys.argv[2], figures)


if __name__ == "__main__":
    main()
