import numpy as np
import pytest

from plugyard.discovery.embedders import Embedder, HashingEmbedder, l2_normalise


def test_hashing_is_deterministic_normalised_and_named() -> None:
    emb = HashingEmbedder(dim=64)
    a = emb.embed(["weather forecast for Paris", ""])
    b = HashingEmbedder(dim=64).embed(["weather forecast for Paris", ""])
    assert a.dtype == np.float32
    assert a.shape == (2, 64)
    np.testing.assert_array_equal(a, b)
    assert np.linalg.norm(a[0]) == pytest.approx(1.0, abs=1e-6)
    assert not a[1].any()  # empty text: zero vector, not NaN
    assert emb.identity.endswith(":64")
    assert isinstance(emb, Embedder)


def test_hashing_reflects_word_overlap() -> None:
    emb = HashingEmbedder(dim=512)
    q, near, far = emb.embed(["stock price", "latest stock prices", "bake a cake"])
    assert q @ near > q @ far


def test_l2_normalise_keeps_zero_rows() -> None:
    out = l2_normalise(np.array([[3.0, 4.0], [0.0, 0.0]]))
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]])


def test_dim_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        HashingEmbedder(dim=0)
