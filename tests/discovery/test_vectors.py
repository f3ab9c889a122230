import numpy as np
import pytest

from plugyard.discovery.embedders import l2_normalise
from plugyard.discovery.vectors import HnswIndex, VectorRows, top_k


def test_moments_give_exact_score_stats_after_edits() -> None:
    rng = np.random.default_rng(0)
    rows = VectorRows(dim=8, capacity=2)  # forces growth
    for i in range(50):
        rows.set_row(i, rng.normal(size=8).astype(np.float32))
    rows.set_row(3, rng.normal(size=8).astype(np.float32))
    rows.swap_delete(10)
    rows.swap_delete(len(rows) - 1)
    q = rng.normal(size=8).astype(np.float32)
    scores = rows.scores(q)
    mean, std = rows.score_stats(q)
    assert len(rows) == 48
    assert mean == pytest.approx(float(scores.mean()), abs=1e-4)
    assert std == pytest.approx(float(scores.std()), abs=1e-4)
    with pytest.raises(ValueError, match="shape"):
        rows.set_row(0, np.zeros(3, dtype=np.float32))
    with pytest.raises(IndexError):
        rows.set_row(99, np.zeros(8, dtype=np.float32))


def test_appending_a_block_equals_appending_row_by_row() -> None:
    rng = np.random.default_rng(2)
    data = rng.normal(size=(40, 8)).astype(np.float32)
    one, block = VectorRows(dim=8, capacity=2), VectorRows(dim=8, capacity=2)
    for i in range(5):
        one.set_row(i, data[i])
        block.set_row(i, data[i])
    for i in range(5, 40):
        one.set_row(i, data[i])
    block.append_rows(data[5:])
    q = rng.normal(size=8).astype(np.float32)
    np.testing.assert_array_equal(one.matrix, block.matrix)
    assert block.score_stats(q) == pytest.approx(one.score_stats(q), abs=1e-6)
    with pytest.raises(ValueError, match="shape"):
        block.append_rows(np.zeros((2, 3), dtype=np.float32))


def test_top_k_orders_best_first() -> None:
    assert top_k(np.array([0.1, 0.9, 0.5, 0.7]), 3).tolist() == [1, 3, 2]
    assert top_k(np.array([0.1]), 5).tolist() == [0]
    assert top_k(np.array([0.1]), 0).tolist() == []


def test_hnsw_matches_exact_and_follows_updates() -> None:
    rng = np.random.default_rng(1)
    data = l2_normalise(rng.normal(size=(3000, 32)))
    ann = HnswIndex(dim=32)
    ann.upsert(list(range(3000)), data)
    queries = l2_normalise(rng.normal(size=(50, 32)))
    hits = [len(set(ann.search(q, 10)) & set(top_k(data @ q, 10))) for q in queries]
    assert np.mean(hits) / 10 >= 0.95
    q = queries[0]
    ann.upsert([7], q[None, :])  # row 7 now equals the query
    assert ann.search(q, 1)[0] == 7
    ann.delete(7)
    assert 7 not in ann.search(q, 10)
    assert len(ann) == 2999
