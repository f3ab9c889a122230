"""Where the discovery index keeps its vectors between runs: the store's ``vectors``
table (an in-memory store's for tests, benchmarks and hosts without persistence).

A vector is only worth loading if the same text was embedded by the same model, so
each row carries the entry's content hash and the embedder's identity. :meth:`load`
returns only rows of the asked-for identity; the index then reuses a vector only where
the hash still matches, and everything else is embedded again and overwritten.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from plugyard.discovery.embedders import Vectors
from plugyard.store.rawdb import RawDb, raw_db, time_in

if TYPE_CHECKING:
    from plugyard.store.store import Store


@dataclass(frozen=True, slots=True)
class StoredVector:
    """One index entry's embedding and what it was made from."""

    doc_id: str
    plugin_id: str
    content_hash: str
    vector: Vectors


#: doc_id -> (content hash, vector): what :meth:`HybridIndex.upsert` takes as precomputed.
Precomputed = dict[str, tuple[str, Vectors]]


class VectorRepository(Protocol):
    def load(self, embedder: str) -> Precomputed:
        """Every vector made by ``embedder`` (an identity string)."""
        ...

    def save(self, embedder: str, rows: Sequence[StoredVector]) -> None:
        """Insert or overwrite rows by ``doc_id``."""
        ...

    def delete(self, doc_ids: Iterable[str]) -> None: ...

    def doc_ids(self) -> set[str]:
        """Every stored entry, whatever its embedder."""
        ...


def to_bytes(vector: Vectors) -> bytes:
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def from_bytes(data: bytes, dim: int) -> Vectors | None:
    """The vector, or ``None`` when the bytes do not hold ``dim`` floats (a damaged or
    foreign row is re-embedded rather than trusted)."""
    if len(data) != 4 * dim:
        return None
    return np.frombuffer(data, dtype="<f4").astype(np.float32)


class SqlVectorRepository:
    """The ``vectors`` table, on SQLite or PostgreSQL (an in-memory store for a host
    without persistence); read once when an index is built, written only for entries
    that were (re-)embedded or removed."""

    def __init__(self, store: Store) -> None:
        self._db: RawDb = raw_db(store)
        self._clock = store.clock

    def load(self, embedder: str) -> Precomputed:
        with self._db.read() as tx:
            rows = tx.all(
                "SELECT doc_id, content_hash, dim, vector FROM vectors WHERE embedder = :e",
                {"e": embedder},
            )
        out: Precomputed = {}
        for doc_id, content_hash, dim, data in rows:
            vector = from_bytes(bytes(data), int(dim))
            if vector is not None:
                out[doc_id] = (content_hash, vector)
        return out

    def save(self, embedder: str, rows: Sequence[StoredVector]) -> None:
        if not rows:
            return
        now = time_in(self._clock(), self._db.postgres)
        values = [
            (row.doc_id, row.plugin_id, row.content_hash, embedder, int(row.vector.shape[0]),
             to_bytes(row.vector), now)
            for row in rows
        ]  # fmt: skip
        with self._db.write() as tx:
            tx.execute_many(_UPSERT, values)

    def delete(self, doc_ids: Iterable[str]) -> None:
        ids = [(d,) for d in doc_ids]
        if not ids:
            return
        with self._db.write() as tx:
            tx.execute_many("DELETE FROM vectors WHERE doc_id = ?", ids)

    def doc_ids(self) -> set[str]:
        with self._db.read() as tx:
            return {d for (d,) in tx.all("SELECT doc_id FROM vectors")}

    def embedders(self) -> set[str]:
        with self._db.read() as tx:
            return {e for (e,) in tx.all("SELECT DISTINCT embedder FROM vectors")}


_UPSERT = (
    "INSERT INTO vectors (doc_id, plugin_id, content_hash, embedder, dim, vector, updated_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (doc_id) DO UPDATE SET "
    "plugin_id = excluded.plugin_id, content_hash = excluded.content_hash, "
    "embedder = excluded.embedder, dim = excluded.dim, vector = excluded.vector, "
    "updated_at = excluded.updated_at"
)
