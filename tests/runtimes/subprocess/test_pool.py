"""A persistent pool multiplexes requests by id, grows to its size, and 1,000 calls leak
neither file descriptors nor memory (bench/runtimes.py --soak runs the same at scale)."""

from __future__ import annotations

import asyncio
import os
import resource
from pathlib import Path

from plugyard.runtimes.base import CallContext, Outcome
from plugyard.runtimes.subprocess import SubprocessPluginRuntime
from runtimes.subprocess.helpers import chaos_target, run


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024


def test_a_thousand_calls_keep_fds_and_memory_flat(
    runtime: SubprocessPluginRuntime, tmp_path: Path
) -> None:
    target, _ = chaos_target(tmp_path, config={"workers": 2})
    op = target.descriptor.operations[0]

    async def calls(n: int, in_flight: int) -> list[Outcome]:
        async def one(i: int) -> Outcome:
            answer = await runtime.invoke(
                target, op, {"do": "echo", "i": i}, CallContext("p"), None
            )
            assert isinstance(answer, Outcome)
            return answer

        out: list[Outcome] = []
        for start in range(0, n, in_flight):
            out += await asyncio.gather(*(one(i) for i in range(start, start + in_flight)))
        return out

    run(runtime, calls(40, 8))  # warm: both workers started
    fds, rss = _fds(), _rss_mb()
    results = run(runtime, calls(1000, 8))
    assert [r.data["i"] for r in results] == list(range(1000))  # type: ignore[index]
    assert _fds() - fds <= 2
    assert _rss_mb() - rss < 50


def test_requests_in_flight_share_a_worker_until_the_pool_grows(
    runtime: SubprocessPluginRuntime, tmp_path: Path
) -> None:
    target, _ = chaos_target(tmp_path, config={"workers": 3})
    op = target.descriptor.operations[0]

    async def pids() -> set[object]:
        answers = await asyncio.gather(
            *(runtime.invoke(target, op, {"do": "pid"}, CallContext("p"), None) for _ in range(12))
        )
        return {a.data for a in answers if isinstance(a, Outcome)}

    found = run(runtime, pids())
    assert 1 <= len(found) <= 3


def test_a_broken_worker_leaves_calls_on_other_workers_alone(
    runtime: SubprocessPluginRuntime, tmp_path: Path
) -> None:
    target, _ = chaos_target(tmp_path, config={"workers": 2}, timeout_ms=5000)
    op = target.descriptor.operations[0]

    async def go() -> tuple[Outcome, Outcome]:
        slow = asyncio.ensure_future(
            runtime.invoke(target, op, {"do": "slow", "seconds": 0.5}, CallContext("a"), None)
        )
        deadline = asyncio.get_running_loop().time() + 5
        while not any(w.in_flight for p in runtime._pools.values() for w in p.workers):
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.005)
        bad = await runtime.invoke(target, op, {"do": "bad_json"}, CallContext("b"), None)
        good = await slow
        assert isinstance(bad, Outcome) and isinstance(good, Outcome)
        return bad, good

    bad, good = run(runtime, go())
    assert bad.error is not None
    assert bad.error.code == "wrapper_protocol_error"
    assert good.status == "success"
