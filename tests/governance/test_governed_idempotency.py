"""Idempotency keys on the call path: claimed before the run, replayed after it."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import random
import time
from pathlib import Path
from typing import Any

import pytest

from plugyard.execution.executor import CallRequest
from plugyard.governance.digest import request_digest
from plugyard.governance.idempotency import scoped_key
from plugyard.manifest.model import Operation
from plugyard.runtimes.base import CallContext
from plugyard.store.idempotency import IdempotencyRow
from plugyard.store.store import Store

from .conftest import FunctionRuntime, Table, descriptor
from .governed import Governed, governed

WRITE = Operation(
    id="write",
    effect="write",
    parameters={"type": "object", "properties": {"n": {"type": "integer"}}},
)
READ = Operation(id="read", parameters={"type": "object", "properties": {"n": {"type": "integer"}}})


class Counter:
    def __init__(self) -> None:
        self.calls: list[int] = []

    def __call__(self, n: int = 0) -> dict[str, int]:
        self.calls.append(n)
        return {"n": n, "run": len(self.calls)}


@pytest.fixture
def counter(table: Table, runtime: FunctionRuntime) -> Counter:
    table.add(descriptor("ledger", WRITE, READ))
    fn = Counter()
    runtime.functions[("ledger", "write")] = fn
    runtime.functions[("ledger", "read")] = fn
    return fn


@pytest.fixture
def gov(table: Table, runtime: FunctionRuntime, counter: Counter) -> Governed:
    del counter
    return governed(table, runtime)


def test_a_retry_returns_the_stored_result_without_running(gov: Governed, counter: Counter) -> None:
    first = gov.call("ledger", "write", {"n": 1}, key="k-1")
    again = gov.call("ledger", "write", {"n": 1}, key="k-1")
    assert first.ok and again.ok
    assert again.data == first.data == {"n": 1, "run": 1}
    assert counter.calls == [1]


def test_the_same_key_with_other_parameters_is_a_conflict(gov: Governed, counter: Counter) -> None:
    assert gov.call("ledger", "write", {"n": 1}, key="k-1").ok
    other = gov.call("ledger", "write", {"n": 2}, key="k-1")
    assert other.error is not None and other.error.code == "idempotency_conflict"
    elsewhere = gov.call("ledger", "read", {"n": 1}, key="k-1")
    assert elsewhere.error is not None and elsewhere.error.code == "idempotency_conflict"
    assert counter.calls == [1]


def test_keys_are_scoped_to_the_subject(gov: Governed, counter: Counter) -> None:
    assert gov.call("ledger", "write", {"n": 1}, key="k", subject="bob").ok
    assert gov.call("ledger", "write", {"n": 1}, key="k", subject="carol").ok
    assert counter.calls == [1, 1]


def crash_after_claim(gov: Governed, op: str, key: str, claimed_at: float) -> None:
    """What a process that died between claim and completion leaves behind."""
    digest = request_digest("ledger", op, {"n": 1}, "bob")
    row = IdempotencyRow(scoped_key("bob", key), digest, "bob", "ledger", op, "claimed", claimed_at)
    assert gov.governance.idempotency.repository.claim(row) is None


def test_a_write_interrupted_after_its_claim_is_never_run_again(
    gov: Governed, counter: Counter
) -> None:
    crash_after_claim(gov, "write", "k-crash", time.time() - 86_400)
    for _ in range(3):
        result = gov.call("ledger", "write", {"n": 1}, key="k-crash")
        assert result.error is not None and result.error.code == "idempotency_unknown"
    assert counter.calls == []


def test_a_read_interrupted_long_ago_is_taken_over(gov: Governed, counter: Counter) -> None:
    crash_after_claim(gov, "read", "k-read", time.time() - 86_400)
    assert gov.call("ledger", "read", {"n": 1}, key="k-read").ok
    assert counter.calls == [1]
    crash_after_claim(gov, "read", "k-fresh", time.time())
    fresh = gov.call("ledger", "read", {"n": 1}, key="k-fresh")
    assert fresh.error is not None and fresh.error.code == "idempotency_unknown"


def test_a_call_refused_before_the_plugin_ran_frees_its_key(
    gov: Governed, counter: Counter
) -> None:
    bad = gov.call("ledger", "write", {"n": "one"}, key="k-2")
    assert bad.error is not None and bad.error.code == "invalid_parameters"
    assert gov.call("ledger", "write", {"n": 2}, key="k-2").ok
    assert counter.calls == [2]


def test_a_timed_out_write_leaves_its_key_unknown(table: Table, runtime: FunctionRuntime) -> None:
    table.add(descriptor("slow", Operation(id="go", effect="write")))
    runs: list[int] = []

    async def go() -> int:
        runs.append(1)
        await asyncio.Event().wait()  # never set: only the deadline ends this
        return 1

    runtime.functions[("slow", "go")] = go
    g = governed(table, runtime)
    ctx = CallContext("r", subject="bob", roles=("admin",), idempotency_key="k-slow")
    timed_out = asyncio.run(g.executor.call(CallRequest("slow", "go", {}, ctx, timeout_ms=20)))
    assert timed_out.status == "timeout"
    retry = asyncio.run(g.executor.call(CallRequest("slow", "go", {}, ctx, timeout_ms=20)))
    assert retry.error is not None and retry.error.code == "idempotency_unknown"
    assert runs == [1]


# ------------------------------------------------------- 16 processes × 200 keys

KEYS = 200
PROCESSES = 16


def _worker(database: str, log: str, seed: int, ready: Any, go: Any) -> None:
    table, runtime = Table(), FunctionRuntime()
    table.add(descriptor("ledger", WRITE))

    def write(n: int = 0) -> dict[str, int]:
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, f"{n}\n".encode())  # one small O_APPEND write: atomic
        finally:
            os.close(fd)
        return {"n": n}

    runtime.functions[("ledger", "write")] = write
    g = governed(table, runtime, store=Store.open(database))
    keys = list(range(KEYS))
    random.Random(seed).shuffle(keys)
    ready.release()
    go.wait()
    bad = 0
    for n in keys:
        result = g.call("ledger", "write", {"n": n}, key=f"key-{n}")
        if not (result.ok or (result.error and result.error.code == "idempotency_unknown")):
            bad += 1
    os._exit(1 if bad else 0)


def test_sixteen_processes_racing_on_two_hundred_keys_execute_each_once(tmp_path: Path) -> None:
    database, log = str(tmp_path / "idem.db"), str(tmp_path / "executions.log")
    Store.open(database).close()  # migrate once, before the race
    context = multiprocessing.get_context("fork")
    ready, go = context.Semaphore(0), context.Event()
    workers = [
        context.Process(target=_worker, args=(database, log, seed, ready, go))
        for seed in range(PROCESSES)
    ]
    for w in workers:
        w.start()
    for _ in workers:
        ready.acquire()
    go.set()
    for w in workers:
        w.join(120)
    assert [w.exitcode for w in workers] == [0] * PROCESSES
    executed = Path(log).read_text().split()
    assert len(executed) == KEYS
    assert sorted(map(int, executed)) == list(range(KEYS))


def test_a_write_whose_worker_was_lost_leaves_its_key_unknown(
    table: Table, runtime: FunctionRuntime
) -> None:
    """worker_lost: the call reached a worker that died under it; what it did is unknown,
    so the same key is never run again."""
    from plugyard.runtimes.base import ErrorInfo, Outcome

    table.add(descriptor("fragile", Operation(id="go", effect="write")))
    runs: list[int] = []

    def go() -> Outcome:
        runs.append(1)
        return Outcome(status="error", error=ErrorInfo("worker_lost", "the worker died", {}))

    runtime.functions[("fragile", "go")] = go
    g = governed(table, runtime)
    lost = g.call("fragile", "go", {}, key="k-lost")
    assert lost.error is not None and lost.error.code == "worker_lost"
    retry = g.call("fragile", "go", {}, key="k-lost")
    assert retry.error is not None and retry.error.code == "idempotency_unknown"
    assert runs == [1]
