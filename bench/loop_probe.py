"""A cheap call's latency while many asks retrieve: is the server's event loop free?

One ``plugyard serve`` on loopback (its own process; the client is this one). A probe
key calls the calculator over and over, first alone, then while ``--asks`` concurrent
asks of another key run. The asks' model is unreachable, so each ask is its retrieval
(the query's embedding and discovery's search) and then a quick ``llm_unavailable``:
the CPU work the loop must not carry. Prints probe p50/p95/max for both phases.

    .venv/bin/python bench/loop_probe.py [--asks 200] [--embedder minilm]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from plugyard.store.keys import SqlKeyRepository
from plugyard.store.store import Store

PROBE = {"parameters": {"expression": "2 + 3"}}


async def probe_once(client: httpx.AsyncClient, base: str, key: str) -> float:
    started = time.perf_counter()
    reply = await client.post(f"{base}/api/v1/plugins/calculator/execute", json=PROBE,
                              headers={"X-API-Key": key})  # fmt: skip
    reply.raise_for_status()
    return (time.perf_counter() - started) * 1000


async def measure(base: str, asker: str, prober: str, asks: int, idle_probes: int) -> dict:
    limits = httpx.Limits(max_connections=asks + 10, max_keepalive_connections=asks + 10)
    async with httpx.AsyncClient(timeout=600, limits=limits) as client:
        for _ in range(5):  # warm: the embedder loads, connections open
            await probe_once(client, base, prober)
        await client.post(f"{base}/api/v1/ask", json={"message": "warm up"},
                          headers={"X-API-Key": asker})  # fmt: skip
        idle = [await probe_once(client, base, prober) for _ in range(idle_probes)]

        async def ask(i: int) -> int:
            reply = await client.post(
                f"{base}/api/v1/ask",
                json={"message": f"convert {i} km to miles, then round it"},
                headers={"X-API-Key": asker},
            )
            return reply.status_code

        started = time.perf_counter()
        running = asyncio.gather(*(ask(i) for i in range(asks)))
        loaded: list[float] = []
        while not running.done():
            loaded.append(await probe_once(client, base, prober))
        statuses = await running
        wall = time.perf_counter() - started
    return {"idle": idle, "loaded": loaded, "wall_s": wall, "ok": statuses.count(200)}


def quantiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) < 2:
        return values[0], values[0], values[0]
    cuts = statistics.quantiles(values, n=20, method="inclusive")
    return statistics.median(values), cuts[18], max(values)


def serve(folder: Path, embedder: str) -> tuple[subprocess.Popen[bytes], str, str, str]:
    """``plugyard serve`` in a process of its own (the client must not share its GIL)."""
    db = str(folder / "yard.db")
    with Store.open(db) as store:
        keys = SqlKeyRepository(store)
        asker, prober = keys.create("asker", ("admin",))[1], keys.create("prober", ("admin",))[1]
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PLUGYARD_EMBEDDER": embedder, "PLUGYARD_MODEL_RATE_PER_MINUTE": "0",
           "PLUGYARD_LLM": "openai:http://127.0.0.1:9/v1:none"}  # fmt: skip
    command = [str(Path(sys.executable).with_name("plugyard")), "serve", "--port", str(port),
               "--db", db, "--log-level", "warning"]  # fmt: skip
    proc = subprocess.Popen(command, env=env, cwd=folder, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                return proc, base, asker, prober
        except httpx.HTTPError:
            time.sleep(0.2)  # a process starting: nothing to wait on but its port
    proc.kill()
    raise RuntimeError("the server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--asks", type=int, default=200)
    parser.add_argument("--idle-probes", type=int, default=50)
    parser.add_argument("--embedder", default="minilm")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        proc, base, asker, prober = serve(Path(folder), args.embedder)
        try:
            found = asyncio.run(measure(base, asker, prober, args.asks, args.idle_probes))
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    load = Path("/proc/loadavg").read_text().split()[:3]
    print(f"\n{args.asks} concurrent asks, embedder {args.embedder}, load {' '.join(load)}")
    print(f"asks answered: {found['ok']}/{args.asks} in {found['wall_s']:.1f} s\n")
    print("| phase | probes | p50 ms | p95 ms | max ms |")
    print("|---|---:|---:|---:|---:|")
    for phase in ("idle", "loaded"):
        p50, p95, top = quantiles(found[phase])
        print(f"| {phase} | {len(found[phase])} | {p50:.1f} | {p95:.1f} | {top:.1f} |")


if __name__ == "__main__":
    main()
