from collections.abc import Sequence

import numpy as np
import pytest

from plugyard.discovery import documents, fusion
from plugyard.discovery.candidates import Scope
from plugyard.discovery.documents import Document, from_mapping
from plugyard.discovery.embedders import HashingEmbedder, Vectors
from plugyard.discovery.engine import HybridIndex
from plugyard.discovery.fusion import decompose

CATALOG = [
    Document("weather", "Weather Tool", "Forecasts and current weather for any city."),
    Document(
        "stocks",
        "Finance Tool",
        "Stock prices, market news and crypto quotes.",
        operations=("Get the latest share price for a ticker",),
        parameters=("ticker",),
    ),
    Document("pdf", "PDF Reader", "Extract text from PDF documents.", tags=("files",)),
    Document("recipes", "Recipe Finder", "Find recipes by ingredient or diet."),
    Document("flights", "Flight Search", "Search and compare flights between airports."),
]


class CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(dim=256)
        self.texts = 0
        self.calls: list[list[str]] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.texts += len(texts)
        self.calls.append(list(texts))
        return super().embed(texts)


def _index(**kwargs: object) -> HybridIndex:
    ix = HybridIndex(HashingEmbedder(dim=256), **kwargs)  # type: ignore[arg-type]
    ix.upsert(CATALOG)
    return ix


def test_search_ranks_and_explains() -> None:
    ix = _index()
    top = ix.search("what is the share price of AAPL", k=2)
    assert top[0].doc_id == "stocks"
    assert top[0].score >= top[1].score
    assert "price" in top[0].terms
    assert "keywords" in top[0].why
    assert ix.search("anything", k=0) == []


def test_a_long_query_is_fused_with_the_long_blend() -> None:
    keywords_only = fusion.Blend(dense=0.0, keywords=1.0)
    dense_only = fusion.Blend(dense=1.0, keywords=0.0)
    ix = _index(policy=fusion.Policy(short=dense_only, long=keywords_only, long_query=3))
    short = ix.search("share price", k=1)[0]
    assert short.score == pytest.approx(short.dense, abs=1e-5)
    long = ix.search("share price for ticker with market news", k=1)[0]
    assert long.score == pytest.approx(long.lexical, abs=1e-5)


def test_unchanged_documents_are_not_re_embedded() -> None:
    emb = CountingEmbedder()
    ix = HybridIndex(emb)
    assert ix.upsert(CATALOG) == len(CATALOG)
    seen = emb.texts
    assert ix.upsert(CATALOG) == 0
    assert emb.texts == seen
    edited = Document("pdf", "PDF Reader", "Extract text and tables from PDF documents.")
    assert ix.upsert([edited]) == 1
    assert ix.hashes()["pdf"] == edited.content_hash()


def test_precomputed_vectors_are_reused_only_when_hash_matches() -> None:
    first = _index()
    stored = {d.doc_id: (d.content_hash(), first.vector(d.doc_id)) for d in CATALOG}
    emb = CountingEmbedder()
    second = HybridIndex(emb)
    assert second.upsert(CATALOG, precomputed=stored) == 0
    stale = {"pdf": ("other-hash", stored["pdf"][1])}
    assert HybridIndex(emb).upsert(CATALOG[2:3], precomputed=stale) == 1
    np.testing.assert_allclose(second.vector("stocks"), first.vector("stocks"))


def test_delete_moves_rows_consistently() -> None:
    ix = _index()
    before = ix.vector("flights")
    assert ix.delete(["weather", "missing"]) == 1
    assert "weather" not in ix and len(ix) == 4
    assert all(m.doc_id != "weather" for m in ix.search("weather forecast city", k=4))
    # The last document took the freed row; it must still be found by its text.
    assert ix.search("compare flights between airports", k=1)[0].doc_id == "flights"
    np.testing.assert_array_equal(ix.vector("flights"), before)
    assert ix.delete(["flights"]) == 1
    assert {m.doc_id for m in ix.search("flights", k=10)} == {"stocks", "pdf", "recipes"}


def test_allowed_filter_applies_before_top_k() -> None:
    ix = _index()
    hits = ix.search("share price", k=2, allowed=lambda d: d != "stocks")
    assert len(hits) == 2 and "stocks" not in {m.doc_id for m in hits}
    assert ix.search("share price", k=3, allowed=lambda d: d == "pdf")[0].doc_id == "pdf"


def test_ann_path_agrees_with_exact_path() -> None:
    docs = [
        Document(f"d{i}", f"tool {i}", f"handles topic{i % 37} and topic{(i * 7) % 41} tasks")
        for i in range(400)
    ]
    exact = HybridIndex(HashingEmbedder(dim=128), ann_threshold=10_000)
    approx = HybridIndex(HashingEmbedder(dim=128), ann_threshold=100, candidates=100)
    exact.upsert(docs)
    approx.upsert(docs)
    assert approx._ann is not None and exact._ann is None
    approx.delete(["d3"])
    exact.delete(["d3"])
    for q in ["topic5 tasks", "handles topic12", "tool 77"]:
        want = [m.doc_id for m in exact.search(q, k=5)]
        got = [m.doc_id for m in approx.search(q, k=5)]
        assert got == want
        scores = [m.score for m in approx.search(q, k=5)]
        assert scores == pytest.approx([m.score for m in exact.search(q, k=5)], abs=1e-4)


class ExactSource:
    """A dense source doing exact search over vectors held here, the scope applied to doc
    ids only (what pgvector answers, without a server)."""

    def __init__(self) -> None:
        self.rows: dict[str, Vectors] = {}

    def nearest(self, query: Vectors, k: int, scope: Scope) -> Sequence[str]:
        allowed = scope.entries() if scope.entries is not None else None
        scored = [
            (float(vector @ query), doc_id)
            for doc_id, vector in self.rows.items()
            if allowed is None or doc_id in allowed
        ]
        return [doc_id for _, doc_id in sorted(scored, reverse=True)[:k]]


def test_a_dense_source_replaces_the_graph_and_gets_the_scope() -> None:
    docs = [
        Document(f"d{i}", f"tool {i}", f"handles topic{i % 37} and topic{(i * 7) % 41} tasks")
        for i in range(400)
    ]
    source = ExactSource()
    exact = HybridIndex(HashingEmbedder(dim=128), ann_threshold=10_000)
    sourced = HybridIndex(HashingEmbedder(dim=128), ann_threshold=100, dense_source=source)
    exact.upsert(docs)
    sourced.upsert(docs)
    source.rows = {d: sourced.vector(d) for d in sourced.hashes()}
    assert sourced._ann is None  # no in-process graph beside the source
    for q in ["topic5 tasks", "handles topic12"]:
        assert [m.doc_id for m in sourced.search(q, k=5)] == [
            m.doc_id for m in exact.search(q, k=5)
        ]
    # The scope reaches the source: what it leaves out is no dense candidate.
    odd = frozenset(f"d{i}" for i in range(1, 400, 2))
    scope = Scope(entries=lambda: odd)
    hits = sourced.search("topic5 tasks", k=5, allowed=odd.__contains__, scope=scope)
    assert hits and all(m.doc_id in odd for m in hits)


def test_decompose_brings_both_intents() -> None:
    ix = _index()
    hits = ix.search("find a recipe for pasta and also search flights to Rome", k=2, decompose=True)
    assert {m.doc_id for m in hits} == {"recipes", "flights"}


def test_a_quoted_text_counts_less_than_what_the_request_asks() -> None:
    ix = _index()
    quoted = 'Extract the text of "weather forecast for the city"'
    assert ix.search(quoted.replace('"', ""), k=1)[0].doc_id == "weather"
    top = ix.search(quoted, k=1)[0]
    assert top.doc_id == "pdf"
    # The floor's evidence is the request as written, quote and all.
    assert "weather" in top.terms or "weather" in ix.search(quoted, k=2)[1].terms


def test_an_entry_the_view_by_kind_admits_is_relevant() -> None:
    json_tool = Document("jq", "JSON Query", "Query a JSON document with an expression.")
    ix = HybridIndex(HashingEmbedder(dim=256))
    ix.upsert([*CATALOG, json_tool])

    def relevant(query: str) -> set[str]:
        return {m.doc_id for m in ix.search(query, k=6) if m.relevant}

    # The request's words match no entry; its object is a JSON document.
    assert "jq" in relevant('Take the first element of {"xs": [9, 8, 7]} using xs[0]')
    assert "jq" not in relevant("Take the first element of xs using xs[0]")


def test_only_a_request_that_quotes_is_embedded_a_second_time() -> None:
    embedder = CountingEmbedder()
    ix = HybridIndex(embedder)
    ix.upsert(CATALOG)
    before = embedder.texts
    ix.search("share price of AAPL", k=1)
    once = embedder.texts - before
    ix.search('share price of "AAPL"', k=1)
    assert embedder.texts - before - once == once + 1


def test_fields_and_hash() -> None:
    doc = from_mapping(
        "x",
        {
            "name": "X",
            "description": "d",
            "description_long": "d",
            "operations": ["op one"],
            "parameters": ["city_name"],
            "tags": ["t"],
        },
    )
    fields = doc.fields()
    assert fields == {
        "name": "X (t)",
        "description": "d",
        "details": "op one Parameters: city_name",
    }
    assert doc.content_hash() != from_mapping("x", {"name": "X"}).content_hash()

    assert doc.filled_fields() == fields


def test_an_absent_field_borrows_the_next_shorter_one() -> None:
    bare = Document("bare", "Sky", "Forecasts the weather.")
    assert bare.filled_fields() == {
        "name": "Sky",
        "description": "Forecasts the weather.",
        "details": "Forecasts the weather.",
    }
    assert Document("n", "Sky").filled_fields()["details"] == "Sky"


def test_a_borrowed_field_is_embedded_once_and_counted_twice() -> None:
    emb = CountingEmbedder()
    ix = HybridIndex(emb)
    ix.upsert([Document("bare", "Sky", "Forecasts the weather.")])
    assert emb.calls == [["Sky", "Forecasts the weather."]]
    name, description = HashingEmbedder(dim=256).embed(["Sky", "Forecasts the weather."])
    np.testing.assert_allclose(ix.vector("bare"), (name + 2 * description) / 3, atol=1e-6)
    ix.upsert([Document("only-name", "Sky")])
    np.testing.assert_allclose(ix.vector("only-name"), name, atol=1e-6)


def test_a_text_that_documents_share_is_embedded_once() -> None:
    emb = CountingEmbedder()
    ix = HybridIndex(emb)
    docs = [
        Document("a", "Match Info", "Football match facts."),
        Document("b", "Game Info", "Football match facts."),
    ]
    ix.upsert(docs)
    assert sorted(emb.calls[0]) == ["Football match facts.", "Game Info", "Match Info"]
    alone = HybridIndex(HashingEmbedder(dim=256))
    alone.upsert(docs[1:])
    np.testing.assert_allclose(ix.vector("b"), alone.vector("b"), atol=1e-6)


def test_the_hash_changes_with_the_vector_recipe(monkeypatch: pytest.MonkeyPatch) -> None:
    # Vectors stored under an older recipe must not be reused as current.
    doc = CATALOG[0]
    before = doc.content_hash()
    monkeypatch.setattr(documents, "RECIPE", "another-recipe")
    assert doc.content_hash() != before


def test_a_chatty_query_also_embeds_its_content_words() -> None:
    emb = CountingEmbedder()
    ix = HybridIndex(emb)
    ix.upsert(CATALOG)
    emb.calls.clear()
    query = "could you tell me the share price of a ticker"
    assert ix.search(query, k=1)[0].doc_id == "stocks"
    assert emb.calls == [[query], ["tell share price ticker"]]
    emb.calls.clear()
    ix.search("share price ticker", k=1)  # nothing to drop: one text
    assert emb.calls == [["share price ticker"]]
    off = HybridIndex(emb, query_view=False)
    off.upsert(CATALOG)
    emb.calls.clear()
    off.search("could you tell me the share price", k=1)
    assert emb.calls == [["could you tell me the share price"]]


def test_decomposed_parts_follow_the_whole_query_and_its_view() -> None:
    emb = CountingEmbedder()
    ix = HybridIndex(emb)
    ix.upsert(CATALOG)
    emb.calls.clear()
    query = "find a recipe for pasta and also search flights to Rome"
    hits = ix.search(query, k=2, decompose=True)
    assert {m.doc_id for m in hits} == {"recipes", "flights"}
    assert emb.calls == [[query, *decompose(query)], ["find recipe pasta also search flights Rome"]]


def test_memory_lifts_short_requests_but_not_long_messages() -> None:
    index = HybridIndex(HashingEmbedder(dim=256))
    index.upsert(
        [
            Document("weather", name="Weather", description="Forecasts and temperatures."),
            Document("tides", name="Tides", description="Tide tables for harbours."),
        ]
    )
    index.lift = lambda _vector, _cosine: {"tides": 50.0}
    assert index.search("forecast for tomorrow", k=1)[0].doc_id == "tides"
    long_message = " ".join(f"forecast temperature city{n}" for n in range(12))
    assert index.search(long_message, k=1)[0].doc_id == "weather"
