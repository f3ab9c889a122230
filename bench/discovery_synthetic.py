"""Discovery latency on large synthetic catalogs (the ``--synthetic`` part of
``bench/discovery.py``; it needs that run's service for its model and real vectors).

Each synthetic plugin is a real plugin text with a fifth of its words swapped for
words of other plugins, which keeps realistic lengths and posting lists for BM25.
Embedding 100k texts would take longer than the rest of the benchmark, so their
vectors are mixed from real MiniLM vectors (the DEV plugins and 1500 DEV queries) and
written to the vector store with the right content hashes and embedder identity
before the service starts: the service then loads them exactly as it would after a
restart, and embeds nothing. Queries are real DEV queries, embedded at search time.

Up to 20k plugins the registry and the vectors live in a temporary SQLite store (the
default path); above that in an in-memory SQLite store, to keep the build within a couple
of minutes.
"""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from plugyard.discovery import catalog
from plugyard.discovery.learning import Learning
from plugyard.discovery.remembered import Remembered, SqlRememberedRepository
from plugyard.discovery.service import DiscoveryService
from plugyard.discovery.vector_store import (
    SqlVectorRepository,
    StoredVector,
    VectorRepository,
)
from plugyard.manifest.model import PluginDescriptor
from plugyard.registry.model import RegisteredPlugin, RegistryEvent
from plugyard.registry.registry import Registry
from plugyard.store.store import Store

SQL_UP_TO = 20_000
REMEMBERED = 10  # remembered requests per plugin ...
MAX_REMEMBERED = 100_000  # ... up to this many in all (1 GB of vectors at 1M is not kept)
LATENCY_QUERIES = 1000
REINDEX_ROUNDS = 40


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(np.ceil(q * len(ordered))) - 1))]


def _swap(text: str, vocab: list[str], rng: random.Random) -> str:
    words = text.split()
    for i in range(len(words)):
        if rng.random() < 0.2:
            words[i] = rng.choice(vocab)
    return " ".join(words)


def _plugin(i: int, row: dict[str, Any], vocab: list[str], rng: random.Random) -> PluginDescriptor:
    long = row.get("description_long")
    return PluginDescriptor(
        id=f"syn-{i:06d}",
        name=f"{row.get('name') or row['id']} {rng.choice(vocab)}",
        description=_swap(row.get("description") or "", vocab, rng),
        description_long=_swap(long, vocab, rng) if long else None,
    )


def _pool(service: DiscoveryService, queries: list[dict[str, Any]]) -> np.ndarray:
    index = service.index
    docs = [index.engine.vector(doc_id) for doc_id in index.hashes()]
    texts = [q["query"] for q in queries[:1500]]
    return np.vstack([np.asarray(docs), service.embedder.embed(texts)]).astype(np.float32)


def _remembered(
    plugins: list[RegisteredPlugin],
    pool: np.ndarray,
    mix: np.random.Generator,
    identity: str,
    per_plugin: int = REMEMBERED,
) -> SqlRememberedRepository:
    """``per_plugin`` requests per plugin (at most MAX_REMEMBERED in all), as a restart finds
    them in the store: vectors cached under the embedder's identity, each tool taught by
    enough subjects to count. Texts are placeholders; vectors are mixed as above."""
    rows = SqlRememberedRepository(Store.open(":memory:"), pool.shape[1])
    per = 0 if per_plugin <= 0 else max(1, min(per_plugin, MAX_REMEMBERED // max(1, len(plugins))))
    for p in plugins:
        for j in range(per):
            a, b = pool[mix.integers(len(pool))], pool[mix.integers(len(pool))]
            v = 0.7 * a + 0.3 * b + mix.normal(0.0, 0.02, pool.shape[1])
            vector = (v / np.linalg.norm(v)).astype(np.float32)
            row = Remembered(0, p.id, p.id, f"user-{j}", f"request {j} for {p.id}", time.time(),
                             identity, vector)  # fmt: skip
            rows.add(row)
    return rows


def measure(
    service: DiscoveryService,
    rows: list[dict[str, Any]],
    queries: list[dict[str, Any]],
    n: int,
    pool: np.ndarray,
    tmp: Path,
    remembered: int = REMEMBERED,
) -> dict[str, Any]:
    rng = random.Random(n)
    vocab = sorted({w for r in rows for w in (r.get("description") or "").split()})
    plugins = [
        RegisteredPlugin.of(_plugin(i, rows[i % len(rows)], vocab, rng), "catalog")
        for i in range(n)
    ]
    mix = np.random.default_rng(n)
    identity = service.embedder.identity
    stored: list[StoredVector] = []
    for p in plugins:
        for key, doc in catalog.documents(p.descriptor):
            a, b = pool[mix.integers(len(pool))], pool[mix.integers(len(pool))]
            v = 0.7 * a + 0.3 * b + mix.normal(0.0, 0.02, pool.shape[1])
            vector = (v / np.linalg.norm(v)).astype(np.float32)
            stored.append(StoredVector(doc.doc_id, key.plugin_id, doc.content_hash(), vector))

    store: Store | None = None
    vectors: VectorRepository
    begin = time.perf_counter()
    if n <= SQL_UP_TO:
        store = Store.open(tmp / f"synthetic-{n}.db")
        registry = Registry.over(store)
        vectors = SqlVectorRepository(store)
    else:
        registry = Registry()  # its rows in an in-memory store
        vectors = SqlVectorRepository(Store.open(":memory:"))
    # In chunks, so one batch's rows and events stay a bounded size.
    for start in range(0, n, 2000):
        registry.register_many(plugins[start : start + 2000])
    vectors.save(identity, stored)
    prepared = time.perf_counter() - begin
    del stored

    marks: dict[str, float] = {}

    def before(_: RegistryEvent) -> None:
        marks["before"] = time.perf_counter()

    def after(_: RegistryEvent) -> None:
        marks["after"] = time.perf_counter()

    registry.subscribe(before)
    learned = _remembered(plugins, pool, mix, identity, remembered)
    big = DiscoveryService(registry, service.embedder, vectors, Learning(service.embedder, learned))
    start = time.perf_counter()
    built = big.start()
    build = time.perf_counter() - start
    registry.subscribe(after)
    try:
        texts = [q["query"] for q in queries[-LATENCY_QUERIES:]]
        for text in texts[:20]:
            big.search(text + " ?", k=5)  # warm-up
        times = []
        for text in texts:
            t0 = time.perf_counter()
            big.search(text, k=5)
            times.append((time.perf_counter() - t0) * 1000)
        totals, index_part = [], []
        for r in range(REINDEX_ROUNDS):
            old = plugins[rng.randrange(n)].descriptor
            edited = old.model_copy(
                update={"description": f"{old.description} Round {r}: {rng.choice(vocab)}."}
            )
            t0 = time.perf_counter()
            registry.register(RegisteredPlugin.of(edited, "catalog"))
            totals.append((time.perf_counter() - t0) * 1000)
            index_part.append((marks["after"] - marks["before"]) * 1000)
        return {
            "plugins": n,
            "entries": len(big.index),
            "path": "hnswlib" if n > big.index.engine.ann_threshold else "exact",
            "store": "sqlite" if store is not None else "memory",
            "prepare_s": round(prepared, 1),
            "build_s": round(build, 1),
            "embedded_at_build": built.embedded,
            "p50_ms": round(statistics.median(times), 2),
            "p95_ms": round(_percentile(times, 0.95), 2),
            "reindex_p50_ms": round(statistics.median(totals), 1),
            "reindex_p95_ms": round(_percentile(totals, 0.95), 1),
            "reindex_index_p50_ms": round(statistics.median(index_part), 1),
            "reindex_index_p95_ms": round(_percentile(index_part, 0.95), 1),
            "remembered": len(big.learning.channel),
        }
    finally:
        big.close()
        if store is not None:
            store.close()


def synthetic_section(
    service: DiscoveryService,
    rows: list[dict[str, Any]],
    queries: list[dict[str, Any]],
    sizes: list[int],
    tmp: Path,
    remembered: int = REMEMBERED,
) -> list[dict[str, Any]]:
    pool = _pool(service, queries)
    return [measure(service, rows, queries, n, pool, tmp, remembered) for n in sizes]
