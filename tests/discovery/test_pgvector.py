"""Dense search in PostgreSQL with pgvector: recall against exact search, the rights and
placement filters applied inside the query, and the search service answering the same
with pgvector as its dense source as with the in-process index.

On CI (``CI=true``) a server without pgvector fails these tests: scripts/pgvector.sh
installs it, and a fleet without it would silently search in process instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.engine import URL

from plugyard.discovery import pgvector
from plugyard.discovery.candidates import Scope
from plugyard.discovery.embedders import HashingEmbedder
from plugyard.discovery.pgvector import MirroredVectors, PgVectorIndex, dense_source_for
from plugyard.discovery.query import Filters
from plugyard.discovery.service import DiscoveryService, _Visibility
from plugyard.discovery.vector_store import SqlVectorRepository, StoredVector
from plugyard.manifest.model import PluginDescriptor
from plugyard.registry.model import RegisteredPlugin
from plugyard.registry.registry import Registry
from plugyard.store import testing
from plugyard.store.plugins import PluginRow
from plugyard.store.store import Store

DIM = 32


@pytest.fixture(scope="module")
def database() -> Iterator[URL]:
    server = testing.server_url()
    reason = testing.unreachable(server)
    if reason is None:
        with testing.temporary_database(server) as url:
            opened = Store.open(url.render_as_string(hide_password=False))
            try:
                found = pgvector.available(opened)
            finally:
                opened.close()
            if found:
                yield url
                return
            reason = "pgvector is not installed on the server (scripts/pgvector.sh)"
    if testing.on_ci():
        pytest.fail(f"{reason}; CI runs the pgvector tests", pytrace=False)
    pytest.skip(reason)


@pytest.fixture
def store(database: URL) -> Iterator[Store]:
    testing.reset_database(database)
    opened = Store.open(database.render_as_string(hide_password=False))
    yield opened
    opened.close()


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_recall_at_10_matches_exact_search(store: Store) -> None:
    rng = np.random.default_rng(7)
    vectors = _unit(rng.standard_normal((3000, DIM)))
    index = PgVectorIndex(store, DIM)
    index.bulk_load(
        "test-embedder",
        (StoredVector(f"d{i}", f"p{i}", "h", v) for i, v in enumerate(vectors)),
    )
    queries = _unit(rng.standard_normal((40, DIM)))
    found = total = 0
    everything = Scope(include_unavailable=True)
    for query in queries:
        exact = {f"d{i}" for i in np.argsort(-(vectors @ query))[:10]}
        got = [d for d, _ in index.nearest("test-embedder", query, 10, everything)]
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
    assert [d for d, _ in index.nearest("e", query, 5, Scope(frozenset({"kb"})))] == ["b"]
    rights = Scope(entries=lambda: frozenset({"b", "c"}))
    assert [d for d, _ in index.nearest("e", query, 5, rights)] == ["b"]
    index.delete(["a"])
    assert [d for d, _ in index.nearest("e", query, 5, Scope(include_unavailable=True))] == [
        "b",
        "c",
    ]


def test_a_change_every_replica_saves_is_written_once(store: Store) -> None:
    vectors = MirroredVectors(SqlVectorRepository(store), PgVectorIndex(store, 4))
    row = StoredVector("a", "a", "hash-1", np.array([1, 0, 0, 0], np.float32))
    assert vectors.index.save("e", [row]) == {"a"}
    # The second replica heard of the same registration and embedded the same text.
    assert vectors.index.save("e", [row]) == set()
    changed = StoredVector("a", "a", "hash-2", np.array([0, 1, 0, 0], np.float32))
    assert vectors.index.save("e", [changed]) == {"a"}
    assert vectors.index.held() == {"a": "hash-2"}


def test_vectors_stored_before_the_extension_are_copied_over_at_load(store: Store) -> None:
    rows = SqlVectorRepository(store)
    rows.save("e", [StoredVector("p/op", "p", "h1", np.array([0, 0, 1, 0], np.float32))])
    vectors = MirroredVectors(rows, PgVectorIndex(store, 4))
    assert vectors.index.held() == {}
    assert set(vectors.load("e")) == {"p/op"}
    assert vectors.index.held() == {"p/op": "h1"}
    query = np.array([0, 0, 1, 0], np.float32)
    assert vectors.index.nearest("e", query, 1, Scope(include_unavailable=True))[0][0] == "p/op"


# --- the search service over pgvector -------------------------------------------------

WORDS = [
    "weather",
    "forecast",
    "rain",
    "city",
    "stock",
    "price",
    "ticker",
    "news",
    "pdf",
    "text",
    "table",
    "translate",
    "language",
    "calendar",
    "meeting",
    "email",
    "send",
    "invoice",
    "payment",
    "map",
    "route",
    "distance",
    "image",
    "resize",
    "photo",
    "music",
    "play",
    "song",
    "database",
    "query",
    "sql",
    "file",
    "upload",
    "download",
    "search",
    "web",
    "page",
    "summary",
]
FAMILIES = ("tool", "kb", "sd")


def _catalog(count: int, seed: int = 3) -> list[RegisteredPlugin]:
    rng = np.random.default_rng(seed)
    plugins = []
    for i in range(count):
        words = [str(w) for w in rng.choice(WORDS, size=6, replace=False)]
        data: dict[str, Any] = {
            "id": f"p{i:03d}",
            "name": " ".join(words[:2]).title(),
            "description": " ".join(words) + ".",
            "family": FAMILIES[i % 3],
            "operations": [
                {"id": f"op{j}", "description": f"{words[j]} {words[j + 3]} now"}
                for j in range(i % 3)
            ],
        }
        if i % 4 == 0:
            data["placement"] = {"capabilities": ["MODEL"] if i % 8 else ["ALL"]}
        descriptor = PluginDescriptor.model_validate(data, strict=False)
        plugin = RegisteredPlugin.of(descriptor, "catalog")
        plugins.append(dataclasses.replace(plugin, available=i % 7 != 0))
    return plugins


def _service(store: Store, plugins: list[RegisteredPlugin], *, pg: bool) -> DiscoveryService:
    registry = Registry.over(store)
    registry.register_many(plugins)
    embedder = HashingEmbedder(dim=64)
    if pg:
        vectors = pgvector.vectors_for(store, embedder.dim)
        source = dense_source_for(vectors, embedder.identity)
        assert source is not None
        svc = DiscoveryService(registry, embedder, vectors, dense_source=source,
                               ann_threshold=0, candidates=40)  # fmt: skip
    else:
        svc = DiscoveryService(registry, embedder)
    svc.start()
    return svc


def _answer(svc: DiscoveryService, query: str, filters: Filters) -> list[tuple[Any, ...]]:
    return [(m.plugin_id, m.operation, round(m.score, 5)) for m in svc.search(query, 5, filters)]


QUERIES = ("rain forecast for my city", "send an email about the invoice", "resize a photo",
           "sql database query", "translate this page", "play a song")  # fmt: skip


def test_pgvector_candidates_give_the_in_process_answers(store: Store) -> None:
    plugins = _catalog(120)
    over_pg = _service(store, plugins, pg=True)
    in_process = _service(store, plugins, pg=False)
    assert over_pg.index.engine._source is not None  # the dense pool comes from SQL
    for filters in (Filters(), Filters(family="kb"), Filters(capability="MODEL"),
                    Filters(include_unavailable=True, family=("tool", "sd"))):  # fmt: skip
        for query in QUERIES:
            assert _answer(over_pg, query, filters) == _answer(in_process, query, filters)


class _Catalog(tuple[DiscoveryService, list[RegisteredPlugin]]):
    def __repr__(self) -> str:  # Hypothesis prints its arguments
        return "<60 plugins>"


@pytest.fixture(scope="module")
def rights_catalog(database: URL) -> Iterator[_Catalog]:
    testing.reset_database(database)
    opened = Store.open(database.render_as_string(hide_password=False))
    plugins = _catalog(60, seed=11)
    try:
        yield _Catalog((_service(opened, plugins, pg=True), plugins))
    finally:
        opened.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    hidden=st.sets(st.integers(0, 59)),
    closed_ops=st.sets(st.tuples(st.integers(0, 59), st.integers(0, 1))),
    query=st.sampled_from(QUERIES),
    family=st.sampled_from((None, "tool", "kb")),
)
def test_rights_in_sql_never_return_what_the_caller_may_not_see(
    rights_catalog: _Catalog,
    hidden: set[int],
    closed_ops: set[tuple[int, int]],
    query: str,
    family: str | None,
) -> None:
    svc, plugins = rights_catalog
    hidden_ids = {f"p{i:03d}" for i in hidden}
    closed = {(f"p{i:03d}", f"op{j}") for i, j in closed_ops}

    def can_see(plugin_id: str, operation: str | None) -> bool:
        return plugin_id not in hidden_ids and (plugin_id, operation) not in closed

    filters = Filters(family=family, can_see=can_see)
    # What the dense source itself returns, before the service looks at it again.
    visible = svc.index
    keys = {d: visible.key(d) for d in visible.doc_ids()}
    scope_entries = {
        d
        for d, key in keys.items()
        if can_see(key.plugin_id, None)
        and (key.operation is None or can_see(key.plugin_id, key.operation))
    }
    engine = visible.engine
    source = engine._source
    assert source is not None
    qv = engine._embed_queries([query])[0]
    scope = _Visibility(visible, filters, filters.families()).scope()
    for doc_id in source.nearest(qv, 40, scope):
        key = visible.key(doc_id)
        plugin = visible.plugin(key.plugin_id)
        assert plugin is not None and plugin.available
        assert doc_id in scope_entries
        assert family is None or plugin.family == family
    by_id = {p.id: p for p in plugins}
    for match in svc.search(query, 10, filters):
        assert match.plugin_id not in hidden_ids
        assert match.operation is None or (match.plugin_id, match.operation) not in closed
        ops = [op.id for op in by_id[match.plugin_id].descriptor.operations]
        assert not ops or any((match.plugin_id, op) not in closed for op in ops)


def test_the_ef_search_setting_reaches_the_query(store: Store) -> None:
    from plugyard.yard import Settings

    assert Settings.from_env({"PLUGYARD_PGVECTOR_EF_SEARCH": "800"}).pgvector_ef_search == 800
    vectors = pgvector.vectors_for(store, DIM, ef_search=800)
    assert isinstance(vectors, pgvector.MirroredVectors)
    assert vectors.index._ef == 800
    with pytest.raises(ValueError, match="ef_search"):
        pgvector.PgVectorIndex(store, DIM, ef_search=0)
