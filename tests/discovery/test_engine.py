import numpy as np
import pytest

from plugyard.discovery.documents import Document, from_mapping
from plugyard.discovery.embedders import HashingEmbedder
from plugyard.discovery.engine import HybridIndex

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

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.texts += len(texts)
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


def test_decompose_brings_both_intents() -> None:
    ix = _index()
    hits = ix.search("find a recipe for pasta and also search flights to Rome", k=2, decompose=True)
    assert {m.doc_id for m in hits} == {"recipes", "flights"}


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
