"""Where the engine takes its dense candidates from in a large catalog.

Above ``ann_threshold`` entries the engine scores only a pool of candidates: the best
dense ones and the best BM25 ones, re-scored exactly against the catalog statistics
it keeps in memory (vectors.VectorRows.score_stats). By default the dense ones come
from the in-process HNSW graph and filters apply afterwards; a :class:`DenseSource`
replaces that graph, and is handed the search's :class:`Scope`, so a source that can
(pgvector, in SQL) returns only entries the caller may see and the filters admit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from plugyard.discovery.embedders import Vectors


@dataclass(frozen=True, slots=True)
class Scope:
    """What a search may return, in terms a database can test.

    ``entries`` gives the doc ids the caller's rights admit (``None``: every one); it
    is called only when a source needs it, since rights are a function, not a table,
    and listing them costs one check per entry.
    """

    families: frozenset[str] | None = None
    capability: str | None = None
    include_unavailable: bool = False
    entries: Callable[[], frozenset[str]] | None = None


EVERYTHING = Scope(include_unavailable=True)


class DenseSource(Protocol):
    """The ``k`` entries nearest to a query vector within a scope, as doc ids (in any
    order: the engine re-scores them)."""

    def nearest(self, query: Vectors, k: int, scope: Scope) -> Sequence[str]: ...


class MemoryDenseSource:
    """Exact search over vectors held here, with the scope applied to doc ids only
    (tests, and the contract a database source has to equal)."""

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
