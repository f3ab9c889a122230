"""Scale-out figures (issue 20): plugyard replicas on one PostgreSQL database.

    python bench/fleet.py [--registrations 100] [--vectors 100000] [--seconds 10]

- propagation: a plugin registered through replica A, until replica B calls it and
  finds it by search (p50/p99 over ``--registrations``); a key revoked in the store,
  until both replicas refuse it;
- execute throughput of one replica and of two on the same database (16 concurrent
  HTTP clients, a built-in in-process plugin), with PostgreSQL transactions per call;
- dense search at ``--vectors`` entries: pgvector's HNSW in SQL vs the in-process
  hnswlib index vs exact numpy, p50/p95, and pgvector's recall@10 against exact.

Needs PostgreSQL (PLUGYARD_TEST_POSTGRES_URL, loopback by default) with pgvector.
Prints a Markdown table per section.
"""

# The closures below run before the loop moves on, so binding late is what they need.
# ruff: noqa: B023
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _replicas import EffectServer, Replica, registration, replicas

from plugyard.discovery.pgvector import PgVectorIndex
from plugyard.discovery.vector_store import StoredVector
from plugyard.discovery.vectors import HnswIndex
from plugyard.store import testing
from plugyard.store.keys import ADMIN_ROLE, SqlKeyRepository
from plugyard.store.store import Store


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def until(check: Any, what: str = "", deadline_s: float = 30.0) -> float:
    start = time.perf_counter()
    while not check():
        if time.perf_counter() - start > deadline_s:
            raise TimeoutError(f"no propagation within the deadline: {what}")
        time.sleep(0.002)
    return time.perf_counter() - start


def propagation(url: str, admin: str, registrations: int, workdir: Path) -> None:
    effects = EffectServer()
    try:
        with replicas(url, 2, workdir, f"127.0.0.1:{effects.port}") as (a, b):
            callable_s, searchable_s = [], []
            for i in range(registrations):
                plugin_id = f"fleet-probe-{i:04d}"
                body = registration(effects, plugin_id)
                body["description"] = f"Counts the zebra{i} sightings of the fleet probe."
                start = time.perf_counter()
                status, _ = a.request("POST", "/api/v1/plugins/register", body, admin)
                assert status == 200
                path = f"/api/v1/plugins/{plugin_id}/execute"
                call = {"operation": "effect", "parameters": {"n": i}}
                until(lambda: b.request("POST", path, call, admin)[0] == 200)
                callable_s.append(time.perf_counter() - start)
                query = urllib.parse.quote(f"count the zebra{i} sightings")

                def found() -> str:
                    return str(b.request("GET", f"/api/v1/search?q={query}&k=5", key=admin)[1])

                until(lambda: plugin_id in found(), plugin_id)
                searchable_s.append(time.perf_counter() - start)
            revoked_s = revocations(url, (a, b), 20)
    finally:
        effects.close()
    print("\n| propagation A → B | n | p50 ms | p99 ms | max ms |")
    print("|---|---:|---:|---:|---:|")
    for name, values in (("registered → callable on B", callable_s),
                         ("registered → searchable on B", searchable_s),
                         ("revoked in the store → refused by A and B", revoked_s)):  # fmt: skip
        print(f"| {name} | {len(values)} | {pct(values, 0.5) * 1e3:.0f} | "
              f"{pct(values, 0.99) * 1e3:.0f} | {max(values) * 1e3:.0f} |")  # fmt: skip


def revocations(url: str, fleet: tuple[Replica, ...], count: int) -> list[float]:
    found = []
    with Store.open(url) as store:
        keys = SqlKeyRepository(store)
        for i in range(count):
            info, key = keys.create(f"temp{i}", (ADMIN_ROLE,))
            for replica in fleet:  # both have it cached as valid
                assert replica.request("GET", "/api/v1/plugins", key=key)[0] == 200
            start = time.perf_counter()
            keys.revoke(info.id)
            until(lambda: all(r.request("GET", "/api/v1/plugins", key=key)[0] == 401
                              for r in fleet))  # fmt: skip
            found.append(time.perf_counter() - start)
    return found


def commits(url: str) -> int:
    with Store.open(url, migrate=False) as store, store.reading() as connection:
        return int(connection.execute(text(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
        )).scalar() or 0)  # fmt: skip


def throughput(url: str, admin: str, seconds: float, workdir: Path) -> None:
    print("\n| execute, 16 HTTP clients | calls/s | PostgreSQL commits/call |")
    print("|---|---:|---:|")
    for count in (1, 2):
        (workdir / f"t{count}").mkdir(exist_ok=True)
        with replicas(url, count, workdir / f"t{count}", "127.0.0.1:1") as fleet:
            body = {"parameters": {"expression": "6*7"}}
            path = "/api/v1/plugins/calculator/execute"
            status, answer = fleet[0].request("POST", path, body, admin)
            assert status == 200, answer
            done = [0]
            lock = threading.Lock()
            stop = time.perf_counter() + seconds

            def client(i: int) -> None:
                n = 0
                while time.perf_counter() < stop:
                    fleet[i % count].request("POST", path, body, admin)
                    n += 1
                with lock:
                    done[0] += n

            before = commits(url)
            start = time.perf_counter()
            with ThreadPoolExecutor(16) as pool:
                list(pool.map(client, range(16)))
            elapsed = time.perf_counter() - start
            per_call = (commits(url) - before) / max(done[0], 1)
            print(f"| {count} replica{'s' if count > 1 else ''} | {done[0] / elapsed:,.0f} | "
                  f"{per_call:.2f} |")  # fmt: skip


def search(url: str, n: int, dim: int = 64, queries: int = 200) -> None:
    rng = np.random.default_rng(20)
    data = rng.standard_normal((n, dim)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    asked = rng.standard_normal((queries, dim)).astype(np.float32)
    asked /= np.linalg.norm(asked, axis=1, keepdims=True)
    with Store.open(url) as store:
        index = PgVectorIndex(store, dim)
        start = time.perf_counter()
        for begin in range(0, n, 5000):
            rows = [
                StoredVector(f"d{i}", f"p{i}", "h", data[i])
                for i in range(begin, min(n, begin + 5000))
            ]
            index.save("bench", rows)
        loaded = time.perf_counter() - start
        hnsw = HnswIndex(dim)
        hnsw.upsert(list(range(n)), data)
        timings: dict[str, list[float]] = {"pgvector (HNSW, in SQL)": [], "in-process hnswlib": [],
                                           "exact numpy": []}  # fmt: skip
        hits = 0
        for query in asked:
            t0 = time.perf_counter()
            got = index.nearest("bench", query, 10, available_only=False)
            t1 = time.perf_counter()
            hnsw.search(query, 10)
            t2 = time.perf_counter()
            exact = set(np.argsort(-(data @ query))[:10].tolist())
            t3 = time.perf_counter()
            timings["pgvector (HNSW, in SQL)"].append(t1 - t0)
            timings["in-process hnswlib"].append(t2 - t1)
            timings["exact numpy"].append(t3 - t2)
            hits += len(exact & {int(d[1:]) for d, _ in got})
    print(f"\n| search, {n:,} vectors × {dim} | p50 ms | p95 ms |")
    print("|---|---:|---:|")
    for name, values in timings.items():
        print(f"| {name} | {statistics.median(values) * 1e3:.2f} | {pct(values, 0.95) * 1e3:.2f} |")
    print(
        f"\npgvector recall@10 vs exact: {hits / (10 * queries):.3f}; "
        f"loading {n:,} vectors and building the HNSW index: {loaded:.0f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--registrations", type=int, default=100)
    parser.add_argument("--vectors", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--skip", action="append", default=[],
                        choices=["propagation", "throughput", "search"])  # fmt: skip
    args = parser.parse_args()
    server = testing.server_url()
    with testing.temporary_database(server) as database, tempfile.TemporaryDirectory() as tmp:
        url = database.render_as_string(hide_password=False)
        with Store.open(url) as store:
            admin = SqlKeyRepository(store).create("bench", (ADMIN_ROLE,))[1]
        if "propagation" not in args.skip:
            propagation(url, admin, args.registrations, Path(tmp))
        if "throughput" not in args.skip:
            throughput(url, admin, args.seconds, Path(tmp))
        if "search" not in args.skip:
            search(url, args.vectors)


if __name__ == "__main__":
    main()
