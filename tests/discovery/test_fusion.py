import numpy as np
import pytest

from plugyard.discovery import fusion


def test_zscore_and_flat_channel() -> None:
    s = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    np.testing.assert_allclose(fusion.zscore(s, 2.0, 1.0), [-1, 0, 1])
    assert not fusion.zscore(s, 2.0, 0.0).any()


def test_convex_weights() -> None:
    d = np.array([1.0, 0.0], dtype=np.float32)
    lx = np.array([0.0, 1.0], dtype=np.float32)
    np.testing.assert_allclose(fusion.convex(d, lx, 0.2), [0.8, 0.2])


def test_rrf_prefers_agreement() -> None:
    out = fusion.rrf([np.array([0, 1, 2]), np.array([1, 0, 2])], 3)
    assert out[2] < out[0] == pytest.approx(out[1])


@pytest.mark.parametrize(
    ("query", "n_parts"),
    [
        ("Show me the stock price of Apple and also find news about the company", 2),
        ("I want salt and pepper", 0),
        ("Book a flight to Rome. Then find a hotel near the Colosseum.", 2),
        ("What is the weather like today?", 0),
    ],
)
def test_decompose(query: str, n_parts: int) -> None:
    assert len(fusion.decompose(query)) == n_parts


def test_combine_parts_lets_each_intent_lift_its_document() -> None:
    full = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    parts = [np.array([0.0, 2.0, 0.0], np.float32), np.array([0.0, 0.0, 3.0], np.float32)]
    np.testing.assert_allclose(fusion.combine_parts(full, parts), [0.5, 1.0, 1.5])
    assert fusion.combine_parts(full, []) is full
