"""Pipeline fan-out on the Ray backend vs in process (issue 20).

    python bench/ray_fanout.py [--branches 32] [--ms 10] [--runs 15] [--cpus 2]

One ASYNC group of ``--branches`` branches, each one call of ``--ms`` milliseconds:
``sleep`` waits (what an HTTP or model call does), ``spin`` computes in Python (holds the
GIL; a loop count calibrated here to ``--ms``). Each pipeline runs on a governed yard
over a SQLite file (every call audited), with ``PLUGYARD_EXECUTION`` ``local`` and then
``ray:local`` (a Ray instance started here with ``--cpus`` CPUs, one CPU per task); the
median and p90 of ``--runs`` runs after warm-up runs that start Ray's workers. Also: one
``heavy`` call's round trip through a Ray task.
Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# Loopback only (Ray would otherwise advertise the interface address); before ray loads.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import median_per_call

from plugyard.yard import Settings, Yard

PLUGINS = Path(__file__).resolve().parent / "plugins" / "fanout"


def calibrate(ms: float) -> int:
    """The loop count of the plugin's ``spin`` that takes ``ms`` of CPU time here (CPU
    time, not wall time: other work on the machine must not change the branch's size)."""
    loops = 1_000_000
    took = []
    for _ in range(5):
        started = time.process_time()
        total = 0
        for i in range(loops):
            total += i
        took.append(time.process_time() - started)
    return round(loops * ms / 1000 / statistics.median(took))


def document(branches: int, operation: str, params: dict[str, Any]) -> dict[str, Any]:
    children = [
        {"plugin": "nap", "operation": operation, "id": f"b{i}", "params": params}
        for i in range(branches)
    ]
    group = {
        "id": "fan",
        "mode": "ASYNC",
        "fork": "fork-copy",
        "join": {"plugin": "join-merge", "params": {"strategy": "list"}},
        "children": children,
    }
    return {"name": "fan-out", "capabilities": [{"capability": "TOOL", "flow": [group]}]}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def runs(yard: Yard, source: dict[str, Any], count: int, warm: int) -> list[float]:
    for _ in range(warm):
        done = await yard.pipelines.run(source, {}, timeout_ms=120_000)
        assert done.status == "success", done.error
    took = []
    for _ in range(count):
        started = time.perf_counter()
        done = await yard.pipelines.run(source, {}, timeout_ms=120_000)
        took.append((time.perf_counter() - started) * 1000)
        assert done.status == "success", done.error
    return took


async def measure(args: argparse.Namespace, folder: Path, execution: str) -> dict[str, Any]:
    settings = Settings(database=str(folder / f"{execution.replace(':', '-')}.db"),
                        plugin_dirs=(PLUGINS,), execution=execution)  # fmt: skip
    out: dict[str, Any] = {}
    with Yard.from_settings(settings) as yard:
        params = {"sleep": {"ms": args.ms}, "spin": {"loops": args.loops}}
        for operation in ("sleep", "spin"):
            source = document(args.branches, operation, params[operation])
            out[operation] = await runs(yard, source, args.runs, warm=3)

        async def heavy() -> None:
            result = await yard.call("nap", "spin_heavy", {"loops": 0})
            assert result.ok, result.error

        out["heavy"] = await median_per_call(heavy, 20, warm=20, rounds=5) * 1000
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--branches", type=int, default=32)
    parser.add_argument("--ms", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--cpus", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    args.loops = calibrate(args.ms)
    import ray

    started = time.perf_counter()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False,
             _node_ip_address="127.0.0.1")  # fmt: skip
    init_s = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as tmp:
        local = asyncio.run(measure(args, Path(tmp), "local"))
        remote = asyncio.run(measure(args, Path(tmp), "ray:local"))
    ray.shutdown()
    ideal = args.branches * args.ms / args.cpus
    print(f"{args.branches} branches × {args.ms:g} ms ({args.loops} loop turns for spin), "
          f"{args.runs} runs, Ray with {args.cpus} CPUs (ray.init {init_s:.1f} s); load average "
          f"{os.getloadavg()[0]:.1f}\n")  # fmt: skip
    print("| workload | local p50 ms | local p90 ms | Ray p50 ms | Ray p90 ms | Ray / local |")
    print("|---|---:|---:|---:|---:|---:|")
    for operation in ("sleep", "spin"):
        a, b = local[operation], remote[operation]
        print(f"| {args.branches} × {operation} {args.ms:g} ms | {statistics.median(a):.1f} | "
              f"{pct(a, 0.9):.1f} | {statistics.median(b):.1f} | {pct(b, 0.9):.1f} | "
              f"{statistics.median(b) / statistics.median(a):.2f} |")  # fmt: skip
    print(f"\nCPU-bound ideal on {args.cpus} CPUs: {ideal:.0f} ms; serial: "
          f"{args.branches * args.ms:.0f} ms.")  # fmt: skip
    print(f"One heavy call (0 ms of work): local {local['heavy']:.2f} ms, "
          f"through a Ray task {remote['heavy']:.2f} ms.")  # fmt: skip


if __name__ == "__main__":
    main()
