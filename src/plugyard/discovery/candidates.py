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
