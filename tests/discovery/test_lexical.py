import importlib.util
import random

import numpy as np
import pytest

from plugyard.discovery.documents import Document
from plugyard.discovery.lexical import FieldedBM25, Tokeniser, _FieldIndex, content_words

WORDS = [
    "weather",
    "stock",
    "price",
    "news",
    "hotel",
    "flight",
    "pdf",
    "convert",
    "music",
    "recipe",
    "city",
    "map",
]


def _docs(n: int, seed: int = 0) -> list[Document]:
    rng = random.Random(seed)
    return [
        Document(
            doc_id=f"d{i}",
            name=" ".join(rng.choices(WORDS, k=2)),
            description=" ".join(rng.choices(WORDS, k=rng.randint(3, 9))),
            description_long=" ".join(rng.choices(WORDS, k=12)) if i % 3 else None,
        )
        for i in range(n)
    ]


def test_tokeniser_splits_identifiers_drops_stopwords_and_stems() -> None:
    assert Tokeniser()("getWeather for the city_name Forecasts") == [
        "get",
        "weather",
        "citi",
        "name",
        "forecast",
    ]
    assert Tokeniser(stem=False)("Forecasts") == ["forecasts"]


def test_tokeniser_reads_a_percent_sign_as_the_word() -> None:
    # "what's 20% of 150" has no word for a calculator's "percent of" without it.
    assert Tokeniser(stem=False)("what's 20% of 150") == ["20", "percent", "150"]
    assert Tokeniser()("20%") == Tokeniser()("20 percent")


def test_updates_and_deletes_equal_a_fresh_build() -> None:
    docs = _docs(40)
    live = FieldedBM25()
    for row, doc in enumerate(docs):
        live.set_row(row, doc)
    replacement = _docs(1, seed=9)[0]
    live.set_row(5, replacement)
    live.swap_delete(7)  # last doc moves into row 7
    expected = [*docs]
    expected[5] = replacement
    expected[7] = expected.pop()
    fresh = FieldedBM25()
    for row, doc in enumerate(expected):
        fresh.set_row(row, doc)
    for query in ["weather news", "convert pdf music", "unknown words only", ""]:
        np.testing.assert_allclose(live.scores(query), fresh.scores(query), rtol=1e-6)
        for got, want in zip(live.both_scores(query), fresh.both_scores(query), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-6)


def test_whole_text_channel_is_one_field_over_the_text_as_written() -> None:
    docs = _docs(30, seed=4)
    bm = FieldedBM25()
    single = _FieldIndex()
    for row, doc in enumerate(docs):
        bm.set_row(row, doc)
        # Not the borrowed copies: a document without details is not counted twice.
        single.set_row(row, [t for text in doc.fields().values() for t in bm.tokenise(text)])
    for query in ["weather hotel", "pdf pdf map"]:
        fielded, whole = bm.both_scores(query)
        want = np.zeros(len(docs), dtype=np.float32)
        single.add_scores(bm.tokenise(query), bm.k1, bm.b, want)
        np.testing.assert_allclose(whole, want, rtol=1e-6)
        np.testing.assert_allclose(fielded, bm.scores(query), rtol=1e-6)


def test_scores_rank_matching_document_first() -> None:
    bm = FieldedBM25()
    bm.set_row(0, Document("a", "Weather", "Forecasts for any city"))
    bm.set_row(1, Document("b", "Stocks", "Share prices and market news"))
    assert bm.scores("share price today").argmax() == 1
    assert bm.matched_terms(1, "share price of shares") == ["share", "price"]
    assert not bm.scores("zzz").any()
    with pytest.raises(IndexError):
        bm.set_row(5, Document("c", "x"))


@pytest.mark.skipif(importlib.util.find_spec("bm25s") is None, reason="bm25s not installed")
def test_field_scores_equal_bm25s_lucene() -> None:
    import bm25s  # type: ignore[import-untyped,unused-ignore]

    tok = Tokeniser()
    corpus = [tok(d.description) for d in _docs(300, seed=3)]
    ours = _FieldIndex()
    for row, toks in enumerate(corpus):
        ours.set_row(row, toks)
    ref = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    ref.index(corpus, show_progress=False)
    for query in ["weather price", "pdf pdf convert", "map"]:
        terms = tok(query)
        mine = np.zeros(len(corpus), dtype=np.float32)
        ours.add_scores(terms, 1.5, 0.75, mine)
        np.testing.assert_allclose(
            mine, ref.get_scores_from_ids(ref.get_tokens_ids(terms)), rtol=1e-5, atol=1e-6
        )


def test_absent_field_borrows_the_description() -> None:
    # Without the fallback a plugin with no long text loses a whole field's
    # worth of score to any plugin that has one.
    bm = FieldedBM25()
    bm.set_row(0, Document("short", "Tool A", "weather forecasts"))
    bm.set_row(
        1, Document("long", "Tool B", "weather forecasts", "Also handles many other things.")
    )
    scores = bm.scores("weather")
    assert scores[0] > scores[1] > 0


def test_content_words_drop_function_words_and_keep_the_rest_verbatim() -> None:
    view = content_words("Could you please tell me the weather in São Paulo? It's for my trip.")
    assert view == "please tell weather São Paulo It's trip"


@pytest.mark.parametrize("text", ["weather forecast Paris", "what is it", "", "?!"])
def test_content_words_are_empty_when_they_would_add_nothing(text: str) -> None:
    # Nothing removed (the view would repeat the query) or nothing left.
    assert content_words(text) == ""
