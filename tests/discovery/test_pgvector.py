"""Dense search in PostgreSQL with pgvector: recall against exact search, and the
rights and placement filters applied inside the query.

On CI (``CI=true``) a server without pgvector fails these tests: scripts/pgvector.sh
installs it, and a fleet without it would silently search in process instead.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from plugyard.discovery import pgvector
from plugyard.discovery.pgvector import PgVectorIndex
from plugyard.discovery.vector_store import StoredVector
from plugyard.store import testing
from plugyard.store.plugins import PluginRow
from plugyard.store.store import Store

DIM = 32


@pytest.fixture(scope="module")
def store() -> Iterator[Store]:
    server = testing.server_url()
    reason = testing.unreachable(server)
    if reason is None:
        with testing.temporary_database(server) as database:
            opened = Store.open(database.render_as_string(hide_password=False))
            try:
                if pgvector.available(opened):
                    yield opened
                    return
                reason = "pgvector is not installed on the server (scripts/pgvector.sh)"
            finally:
                opened.close()
    if testing.on_ci():
        pytest.fail(f"{reason}; CI runs the pgvector tests", pytrace=False)
    pytest.skip(reason)


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_recall_at_10_matches_exact_search(store: Store) -> None:
    rng = np.random.default_rng(7)
    vectors = _unit(rng.standard_normal((3000, DIM)))
    index = PgVectorIndex(store, DIM)
    index.save(
        "test-embedder",
        [StoredVector(f"d{i}", f"p{i}", "h", v) for i, v in enumerate(vectors)],
    )
    queries = _unit(rng.standard_normal((40, DIM)))
    found = total = 0
    for query in queries:
        exact = {f"d{i}" for i in np.argsort(-(vectors @ query))[:10]}
        got = [d for d, _ in index.nearest("test-embedder", query, 10, available_only=False)]
        found += len(exact & set(got))
        total += 10
    assert found / total >= 0.99


def test_filters_apply_inside_the_query(store: Store) -> None:
    for plugin_id, family, up in (("a", "tool", True), ("b", "kb", True), ("c", "tool", False)):
        store.plugins.upsert(
            PluginRow(plugin_id, family, "external", {"id": plugin_id}, "0" * 64, available=up)
        )
    index = PgVectorIndex(store, 4)
    rows = [
        StoredVector(p, p, "h", np.array([1, 0, 0, i], np.float32)) for i, p in enumerate("abc")
    ]
    index.save("e", rows)
    query = np.array([1, 0, 0, 0], np.float32)
    assert [d for d, _ in index.nearest("e", query, 5)] == ["a", "b"]  # c is unavailable
    assert [d for d, _ in index.nearest("e", query, 5, families=["kb"])] == ["b"]
    assert [d for d, _ in index.nearest("e", query, 5, plugin_ids=["b", "c"])] == ["b"]
    index.delete(["a"])
    assert [d for d, _ in index.nearest("e", query, 5, available_only=False)] == ["b", "c"]
