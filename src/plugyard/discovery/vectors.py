"""Vector rows for the catalog: exact search by one matrix product, an
optional HNSW index for large catalogs, and running moments of the rows.

The moments (sum and second-moment matrix of the rows) give the mean and
standard deviation of a query's scores over the whole catalog in O(dim^2),
without scoring every row. Score fusion needs exactly those two numbers to
put dense scores on the same scale as BM25, so the ANN path fuses with the
same statistics the exact path uses.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

Vectors = NDArray[np.float32]


class VectorRows:
    """Dense float32 rows with amortised O(1) append and swap-delete."""

    def __init__(self, dim: int, capacity: int = 1024, *, moments: bool = True) -> None:
        self.dim = dim
        self._data = np.zeros((capacity, dim), dtype=np.float32)
        self._n = 0
        # The moments serve score_stats; a store that never asks skips their upkeep
        # (a rank-1 update of dim x dim per row: most of adding 100k rows one by one).
        self._moments = moments
        # float64 so that thousands of rank-1 updates do not drift.
        self._sum = np.zeros(dim, dtype=np.float64)
        self._second = np.zeros((dim, dim), dtype=np.float64)

    def __len__(self) -> int:
        return self._n

    @property
    def matrix(self) -> Vectors:
        return self._data[: self._n]

    def _account(self, vector: Vectors, sign: float) -> None:
        if not self._moments:
            return
        v = vector.astype(np.float64)
        self._sum += sign * v
        self._second += sign * np.outer(v, v)

    def set_row(self, row: int, vector: Vectors) -> None:
        """Write `vector` at `row`; `row == len(self)` appends."""
        if vector.shape != (self.dim,):
            raise ValueError(f"expected shape ({self.dim},), got {vector.shape}")
        if row == self._n:
            if self._n == len(self._data):
                grown = np.zeros((2 * len(self._data), self.dim), dtype=np.float32)
                grown[: self._n] = self._data[: self._n]
                self._data = grown
            self._n += 1
        elif 0 <= row < self._n:
            self._account(self._data[row], -1.0)
        else:
            raise IndexError(row)
        self._data[row] = vector
        self._account(self._data[row], 1.0)

    def append_rows(self, vectors: Vectors) -> None:
        """Append many rows at once: one product for the moments instead of a rank-1
        update per row (1.3 s of a 4,076-entry build otherwise)."""
        n = len(vectors)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise ValueError(f"expected shape (n, {self.dim}), got {vectors.shape}")
        if self._n + n > len(self._data):
            grown = np.zeros((max(2 * len(self._data), self._n + n), self.dim), np.float32)
            grown[: self._n] = self._data[: self._n]
            self._data = grown
        self._data[self._n : self._n + n] = vectors
        if self._moments:
            block = self._data[self._n : self._n + n].astype(np.float64)
            self._sum += block.sum(axis=0)
            self._second += block.T @ block
        self._n += n

    def swap_delete(self, row: int) -> None:
        last = self._n - 1
        self._account(self._data[row], -1.0)
        if row != last:
            self._data[row] = self._data[last]
        self._n -= 1

    def scores(self, query: Vectors) -> Vectors:
        """Inner product of the query with every row (exact search).

        einsum, not `@`: above ~1k rows OpenBLAS hands a matrix-vector
        product to a second thread that then spins and steals the core the
        query encoder runs on. On 2 shared cores that raised p95 search
        latency at 10k plugins from 8 ms to 16-20 ms; einsum's own loop is
        single-threaded and as fast as one BLAS thread (0.55 ms at 10k x 384).
        """
        out: Vectors = np.einsum("ij,j->i", self.matrix, query)
        return out

    def score_stats(self, query: Vectors) -> tuple[float, float]:
        """Mean and standard deviation of `scores(query)`, from the moments."""
        if self._n == 0:
            return 0.0, 1.0
        if not self._moments:
            raise RuntimeError("these rows keep no moments")
        q = query.astype(np.float64)
        mean = float(q @ self._sum) / self._n
        var = float(q @ self._second @ q) / self._n - mean * mean
        return mean, max(var, 0.0) ** 0.5


def top_k(scores: NDArray[np.floating], k: int) -> NDArray[np.int64]:
    """Indices of the k largest scores, best first (argpartition, then sort)."""
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    part = np.argpartition(-scores, k - 1)[:k]
    return part[np.argsort(-scores[part], kind="stable")].astype(np.int64)


class HnswIndex:
    """Approximate inner-product search (hnswlib) keyed by row number.

    hnswlib won the measurement in DISCOVERY_LAB.md (recall and latency at
    10k/100k); it supports deleting and replacing labels in place, which a
    catalog that changes one plugin at a time needs.
    """

    def __init__(self, dim: int, m: int = 16, ef_construction: int = 200, ef: int = 128) -> None:
        import hnswlib  # type: ignore[import-untyped,unused-ignore]

        self._index = hnswlib.Index(space="ip", dim=dim)
        self._capacity = 1024
        self._index.init_index(
            max_elements=self._capacity,
            M=m,
            ef_construction=ef_construction,
            allow_replace_deleted=True,
        )
        self._index.set_ef(ef)
        self._index.set_num_threads(1)
        self._labels: set[int] = set()

    def __len__(self) -> int:
        return len(self._labels)

    def upsert(self, labels: Sequence[int], vectors: Vectors) -> None:
        # A label already present is updated in place (and undeleted).
        need = len(self._labels) + sum(1 for label in labels if label not in self._labels)
        if need > self._capacity:
            self._capacity = max(need, 2 * self._capacity)
            self._index.resize_index(self._capacity)
        self._index.add_items(vectors, np.asarray(labels), replace_deleted=True)
        self._labels.update(labels)

    def delete(self, label: int) -> None:
        self._index.mark_deleted(label)
        self._labels.discard(label)

    def search(self, query: Vectors, k: int) -> NDArray[np.int64]:
        k = min(k, len(self._labels))
        if k <= 0:
            return np.zeros(0, dtype=np.int64)
        labels, _ = self._index.knn_query(query[None, :], k=k)
        return np.asarray(labels[0], dtype=np.int64)
