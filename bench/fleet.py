"""Scale-out figures (issue 20): plugyard replicas on one PostgreSQL database.

    python bench/fleet.py [--registrations 100] [--vectors 100000] [--plugins 100000]
                          [--seconds 10] [--catalog FOLDER] [--skip SECTION]

- propagation: a plugin registered through replica A, until replica B calls it and
  finds it by search (p50/p99 over ``--registrations``); a key revoked in the store,
  until both replicas refuse it;
- execute throughput of one replica and of two on the same database (16 concurrent
  HTTP clients, a built-in in-process plugin), with PostgreSQL transactions per call
  and the share of each call's time spent in the database: as the replicas count it
  (time in store transactions, store/timing.py) and as PostgreSQL does
  (pg_stat_database.active_time);
- dense search at ``--vectors`` random entries, and on ``--catalog``'s MiniLM vectors:
  pgvector's HNSW in SQL at several ef_search vs the in-process hnswlib index vs exact
  numpy, p50/p95 and recall@10 against exact;
- the whole search at ``--plugins`` plugins with the dense candidates from pgvector vs
  from the in-process index, p50/p95.

Needs PostgreSQL (PLUGYARD_TEST_POSTGRES_URL, loopback by default) with pgvector.
Prints a Markdown table per section.
"""

# The closures below run before the loop moves on, so binding late is what they need.
# ruff: noqa: B023
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import text

# The replicas and the effect-counting plugin server are the fleet test's own helpers,
# so the benchmark starts a fleet exactly as the test does.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.cli.fleet import EffectServer, Replica, registration, replicas

from plugyard.discovery.candidates import Scope
from plugyard.discovery.documents import Document
from plugyard.discovery.embedders import HashingEmbedder
from plugyard.discovery.engine import HybridIndex
from plugyard.discovery.pgvector import (
    EF_SEARCH,
    HNSW_EF_CONSTRUCTION,
    PgVectorCandidates,
    PgVectorIndex,
)
from plugyard.discovery.vector_store import StoredVector
from plugyard.discovery.vectors import HnswIndex
from plugyard.store import testing, timing
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


def active_ms(url: str) -> float:
    """PostgreSQL's own time executing statements in this database (pg_stat_database,
    PostgreSQL 14+); pg_stat_statements would need a server restart to load."""
    with Store.open(url, migrate=False) as store, store.reading() as connection:
        return float(connection.execute(text(
            "SELECT active_time FROM pg_stat_database WHERE datname = current_database()"
        )).scalar() or 0.0)  # fmt: skip


def store_time(folder: Path) -> dict[str, float]:
    """The replicas' own totals of time in store transactions (store/timing.py)."""
    out = {"wait_s": 0.0, "held_s": 0.0, "transactions": 0.0}
    for path in folder.glob("timing-*.json"):
        for name, value in json.loads(path.read_text()).items():
            out[name] += float(value)
    return out


def _load(
    url: str, admin: str, count: int, seconds: float, folder: Path
) -> tuple[list[float], float, tuple[Any, ...], tuple[Any, ...]]:
    with replicas(url, count, folder, "127.0.0.1:1") as fleet:
        body = {"parameters": {"expression": "6*7"}}
        path = "/api/v1/plugins/calculator/execute"
        for replica in fleet:
            status, answer = replica.request("POST", path, body, admin)
            assert status == 200, answer
        latencies: list[float] = []
        lock = threading.Lock()
        stop = time.perf_counter() + seconds

        def client(i: int) -> None:
            mine = []
            while time.perf_counter() < stop:
                t0 = time.perf_counter()
                fleet[i % count].request("POST", path, body, admin)
                mine.append(time.perf_counter() - t0)
            with lock:
                latencies.extend(mine)

        time.sleep(2.0)  # idle: PostgreSQL flushes its backends' statistics meanwhile
        before = commits(url), active_ms(url), store_time(folder)
        start = time.perf_counter()
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(client, range(16)))
        elapsed = time.perf_counter() - start
        time.sleep(2.0)
        after = commits(url), active_ms(url), store_time(folder)
    return latencies, elapsed, before, after


def throughput(url: str, admin: str, seconds: float, workdir: Path) -> None:
    print("\n| execute, 16 HTTP clients | calls/s | commits/call | mean call ms | "
          "in store transactions | of which waiting for the connection | "
          "PostgreSQL executing |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|")
    for count in (1, 2):
        folder = workdir / f"t{count}"
        folder.mkdir(exist_ok=True)
        # Read by the replicas when they start (the bench's own store is not timed).
        os.environ[timing.ENV] = str(folder / "timing-%p.json")
        try:
            latencies, elapsed, before, after = _load(url, admin, count, seconds, folder)
        finally:
            del os.environ[timing.ENV]
        done, busy = len(latencies), sum(latencies)
        held = after[2]["held_s"] - before[2]["held_s"]
        waited = after[2]["wait_s"] - before[2]["wait_s"]
        executing = (after[1] - before[1]) / 1e3
        print(f"| {count} replica{'s' if count > 1 else ''} | {done / elapsed:,.0f} | "
              f"{(after[0] - before[0]) / max(done, 1):.2f} | {busy / done * 1e3:.1f} | "
              f"{(held + waited) / busy:.0%} | {waited / busy:.0%} | "
              f"{executing / busy:.0%} |")  # fmt: skip


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _rows(ids: list[str], vectors: np.ndarray) -> Iterator[StoredVector]:
    return (StoredVector(d, d, "h", v) for d, v in zip(ids, vectors, strict=True))


def ann_recall(
    url: str, name: str, data: np.ndarray, asked: np.ndarray, ef_construction: int
) -> None:
    """Raw nearest-neighbour search: pgvector at several ef_search against the
    in-process hnswlib graph and exact numpy, recall@10 against exact."""
    n, dim = data.shape
    name = f"{name}, ef_construction {ef_construction}"
    ids = [f"d{i}" for i in range(n)]
    exact_top = [set(np.argsort(-(data @ q))[:10].tolist()) for q in asked]
    with Store.open(url) as store:
        start = time.perf_counter()
        built_with = PgVectorIndex(store, dim, ef_construction=ef_construction)
        built_with.bulk_load("bench", _rows(ids, data))
        loaded = time.perf_counter() - start
        start = time.perf_counter()
        hnsw = HnswIndex(dim)
        hnsw.upsert(list(range(n)), data)
        built = time.perf_counter() - start
        print(f"\n| {name}: {n:,} × {dim}, {len(asked)} queries | recall@10 | p50 ms | p95 ms |")
        print("|---|---:|---:|---:|")
        everything = Scope(include_unavailable=True)
        for ef in (100, 200, EF_SEARCH, 800):
            index = PgVectorIndex(store, dim, ef_search=ef)
            times, hits = [], 0
            for q, exact in zip(asked, exact_top, strict=True):
                t0 = time.perf_counter()
                got = index.nearest("bench", q, 10, everything)
                times.append(time.perf_counter() - t0)
                hits += len(exact & {int(d[1:]) for d, _ in got})
            recall, p50 = hits / (10 * len(asked)), statistics.median(times) * 1e3
            print(f"| pgvector HNSW in SQL, ef_search {ef} | {recall:.3f} | {p50:.2f} | "
                  f"{pct(times, 0.95) * 1e3:.2f} |")  # fmt: skip
        times, hits = [], 0
        for q, exact in zip(asked, exact_top, strict=True):
            t0 = time.perf_counter()
            got_rows = hnsw.search(q, 10)
            times.append(time.perf_counter() - t0)
            hits += len(exact & set(got_rows.tolist()))
        print(f"| in-process hnswlib (ef 128) | {hits / (10 * len(asked)):.3f} | "
              f"{statistics.median(times) * 1e3:.2f} | {pct(times, 0.95) * 1e3:.2f} |")  # fmt: skip
        times = []
        for q in asked:
            t0 = time.perf_counter()
            np.argsort(-(data @ q))[:10]
            times.append(time.perf_counter() - t0)
        print(f"| exact numpy | 1.000 | {statistics.median(times) * 1e3:.2f} | "
              f"{pct(times, 0.95) * 1e3:.2f} |")  # fmt: skip
        print(
            f"\nloading into pgvector (COPY, then one HNSW build, ANALYZE): {loaded:.0f} s; "
            f"hnswlib build: {built:.0f} s"
        )
        with store.writing() as connection:
            connection.execute(text(f"DROP TABLE vector_index_{dim}"))


def random_vectors(n: int, dim: int = 64, queries: int = 200) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(20)
    return _unit(rng.standard_normal((n, dim))), _unit(rng.standard_normal((queries, dim)))


def catalog_vectors(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """MiniLM vectors of a real catalog (plugins.jsonl: name, description) and of its
    queries (queries.jsonl), as the search service embeds them."""
    from plugyard.discovery.minilm import MiniLMEmbedder

    plugins = [json.loads(line) for line in (folder / "plugins.jsonl").open()]
    queries = [json.loads(line)["query"] for line in (folder / "queries.jsonl").open()]
    embedder = MiniLMEmbedder()
    texts = [f"{p.get('name') or p['id']}: {p.get('description') or ''}" for p in plugins]
    data = np.concatenate([embedder.embed(texts[i : i + 256]) for i in range(0, len(texts), 256)])
    return _unit(data), _unit(embedder.embed(queries))


def engine_search(url: str, n: int, dim: int = 384, queries: int = 200) -> None:
    """The whole search (query embedding, BM25 over the catalog, dense candidates,
    fusion) at ``n`` plugins: dense candidates from pgvector vs the in-process graph."""
    rng = np.random.default_rng(21)
    vocabulary = [f"w{i}" for i in range(5000)]
    docs = []
    for i in range(n):
        words = rng.choice(vocabulary, size=12)
        docs.append(Document(f"p{i}", f"{words[0]} {words[1]} tool {i}", " ".join(words[2:])))
    asked = [" ".join(rng.choice(vocabulary, size=4)) for _ in range(queries)]
    embedder = HashingEmbedder(dim=dim)
    start = time.perf_counter()
    local = HybridIndex(embedder)
    local.upsert(docs)
    built = time.perf_counter() - start
    vectors = {d.doc_id: (d.content_hash(), local.vector(d.doc_id)) for d in docs}
    with Store.open(url) as store:
        index = PgVectorIndex(store, dim)
        start = time.perf_counter()
        index.bulk_load(embedder.identity, (StoredVector(d, d, h, v)
                                            for d, (h, v) in vectors.items()))  # fmt: skip
        loaded = time.perf_counter() - start
        source = PgVectorCandidates(index, embedder.identity)
        sourced = HybridIndex(embedder, dense_source=source)
        sourced.upsert(docs, vectors)
        exact = HybridIndex(embedder, ann_threshold=n + 1)
        exact.upsert(docs, vectors)
        paths = {"in-process hnswlib": local, "pgvector": sourced, "none (exact)": exact}
        timings: dict[str, list[float]] = {name: [] for name in paths}
        agree = dict.fromkeys(paths, 0)
        for query in asked:
            found = {}
            for name, engine in paths.items():
                t0 = time.perf_counter()
                found[name] = {m.doc_id for m in engine.search(query, 10)}
                timings[name].append(time.perf_counter() - t0)
            for name in paths:
                agree[name] += len(found[name] & found["none (exact)"])
        with store.writing() as connection:
            connection.execute(text(f"DROP TABLE vector_index_{dim}"))
    print(f"\n| search, {n:,} plugins (hashing vectors × {dim}), whole query | p50 ms | p95 ms "
          "| top-10 as the exact engine's |")  # fmt: skip
    print("|---|---:|---:|---:|")
    for name, values in timings.items():
        print(f"| dense candidates from {name} | {statistics.median(values) * 1e3:.1f} | "
              f"{pct(values, 0.95) * 1e3:.1f} | {agree[name] / (10 * queries):.3f} |")  # fmt: skip
    print(f"\nin-process build (embedding included) {built:.0f} s; pgvector load {loaded:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--registrations", type=int, default=100)
    parser.add_argument("--vectors", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--plugins", type=int, default=100_000)
    parser.add_argument("--ef-construction", type=int, action="append",
                        help="pgvector's HNSW build breadth(s) to compare")  # fmt: skip
    parser.add_argument(
        "--catalog",
        type=Path,
        default=None,
        help="folder with plugins.jsonl and queries.jsonl (MiniLM recall)",
    )
    parser.add_argument("--skip", action="append", default=[],
                        choices=["propagation", "throughput", "search", "engine"])  # fmt: skip
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
            for ef_c in args.ef_construction or [HNSW_EF_CONSTRUCTION]:
                if args.catalog is not None:
                    catalog = catalog_vectors(args.catalog)
                    ann_recall(url, "MiniLM, a real catalog", *catalog, ef_c)
                ann_recall(url, "random unit vectors", *random_vectors(args.vectors), ef_c)
        if "engine" not in args.skip:
            engine_search(url, args.plugins)


if __name__ == "__main__":
    main()
