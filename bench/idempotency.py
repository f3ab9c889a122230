"""What an idempotency key adds to a governed call, measured in alternating blocks.

    python bench/idempotency.py            # the governed call, with and without a key
    python bench/idempotency.py --sql      # the same writes as bare SQL on the held connection
    python bench/idempotency.py --python   # the calls with statements that do nothing
    python bench/idempotency.py --cpu      # this thread's CPU time instead of the clock's

The governance bench's figures move by ±30 % between runs on a shared machine; here the
call with a key and the call without one alternate in blocks of 500, so each pair of
blocks sees the same load, and the median of the pairs' differences is what the key
costs. ``--sql`` runs, on one store file, the statements those calls write (the claim:
one autocommit ``INSERT … ON CONFLICT DO NOTHING``; the audit event with the
completion: ``BEGIN IMMEDIATE``, ``INSERT``, ``UPDATE``, ``COMMIT``; without a key, the
audit event's lone ``INSERT``) with no Python around them. ``--python`` measures the
Python alone: the calls again, on a connection whose statements do nothing (every claim
wins). ``--cpu`` counts the time the thread ran (kernel time in system calls included,
waiting on the disk not): on a machine whose other jobs keep the cores busy, it leaves
out the time spent waiting for one.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import itertools
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from governance import parts
from plugyard.execution.executor import CallRequest, Executor
from plugyard.runtimes.base import CallContext
from plugyard.store.rawdb import raw_db
from plugyard.store.store import Store
from plugyard.yard.steps import call_path

BLOCK = 500
PAIRS = 30


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sql", action="store_true")
    parser.add_argument("--python", action="store_true")
    parser.add_argument("--cpu", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="plugyard-bench-") as folder:
        if args.sql:
            keyed, plain = sql(Path(folder))
        else:
            keyed, plain = calls(Path(folder), no_sql=args.python)
        report(keyed, plain, time.thread_time if args.cpu else time.perf_counter)


#: ``block(n)`` makes n calls
Block = Callable[[int], Any]


def report(keyed: Block, plain: Block, clock: Callable[[], float]) -> None:
    keyed(BLOCK)
    plain(BLOCK)
    times: dict[str, list[float]] = {"with a key": [], "without": []}
    for _ in range(PAIRS):
        for name, block in (("with a key", keyed), ("without", plain)):
            start = clock()
            block(BLOCK)
            times[name].append((clock() - start) / BLOCK * 1e6)
    for name, found in times.items():
        print(f"{name:12} median µs {statistics.median(found):8.2f}")
    pairs = [k - p for k, p in zip(times["with a key"], times["without"], strict=True)]
    print(f"{'the key adds':12} median µs {statistics.median(pairs):8.2f}")


class _Idle:
    """A cursor, and a connection, whose statements do nothing."""

    rowcount = 1
    in_transaction = False

    def cursor(self) -> _Idle:
        return self

    def execute(self, *_: Any) -> _Idle:
        return self

    def executemany(self, *_: Any) -> _Idle:
        return self

    def fetchone(self) -> None:
        return None

    def close(self) -> None:
        pass


def calls(folder: Path, no_sql: bool = False) -> tuple[Block, Block]:
    store = Store.open(str(folder / "bench.db"))
    table, runtimes, book, governance = parts(store)
    executor = Executor(table, runtimes, steps=call_path(table, policy=book, governance=governance))
    if no_sql:
        held = raw_db(store)
        held._connect()
        held._connection = _Idle()
    counter = itertools.count()
    loop = asyncio.new_event_loop()
    params = {"a": 2, "b": 3}

    async def some(n: int, keyed: bool) -> None:
        for _ in range(n):
            key = f"k{next(counter)}" if keyed else None
            context = CallContext("r", subject="alice", idempotency_key=key)
            result = await executor.call(CallRequest("bench", "add", params, context))
            assert result.status == "success", result

    def keyed(n: int) -> None:
        loop.run_until_complete(some(n, True))

    def plain(n: int) -> None:
        loop.run_until_complete(some(n, False))

    return keyed, plain


def sql(folder: Path) -> tuple[Block, Block]:
    from plugyard.store.audit import _INSERT as AUDIT
    from plugyard.store.idempotency import _COMPLETE
    from plugyard.store.idempotency import _INSERT as CLAIM

    connection = raw_db(Store.open(str(folder / "bench.db")))._connect()
    seq = itertools.count(1)
    result = json.dumps({"status": "success", "data": 5, "cost": {"duration_ms": 0.01}})

    def event() -> tuple[Any, ...]:
        return (next(seq), "call", "2026-11-27T10:00:00.000000Z", "2026-11-27T10:00:00.000000Z",
                "r", "alice", "bench", "add", "0" * 64, "allow", None, "v1", "success", None,
                0.01, None, "a" * 64, "b" * 64)  # fmt: skip

    def keyed(n: int) -> None:
        for _ in range(n):
            key = hashlib.sha256(str(next(seq)).encode()).hexdigest()
            claim = (key, "d" * 64, "alice", "bench", "add", "claimed", 1.0, "r")
            connection.execute(CLAIM, claim)
            connection.execute("BEGIN IMMEDIATE")
            connection.execute(AUDIT, event())
            connection.execute(_COMPLETE, ("done", result, 2.0, key))
            connection.execute("COMMIT")

    def plain(n: int) -> None:
        for _ in range(n):
            connection.execute(AUDIT, event())

    return keyed, plain


if __name__ == "__main__":
    main()
