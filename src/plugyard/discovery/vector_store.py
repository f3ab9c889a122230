"""Where the discovery index keeps its vectors between runs: the store's ``vectors``
table, or a dictionary in memory (tests, benchmarks, hosts without persistence).

A vector is only worth loading if the same text was embedded by the same model, so
each row carries the entry's content hash and the embedder's identity. :meth:`load`
returns only rows of the asked-for identity; the index then reuses a vector only where
the hash still matches, and everything else is embedded again and overwritten.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection

from plugyard.discovery.embedders import Vectors
from plugyard.store.schema import vectors as table

if TYPE_CHECKING:
    from plugyard.store.store import Store

# Rows per INSERT statement: large enough to amortise the round trip, small enough to
# stay under SQLite's bound-parameter limit (7 columns x 500 = 3500 < 32766).
_CHUNK = 500


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


class MemoryVectorRepository:
    """The same contract in process memory."""

    def __init__(self) -> None:
        self._rows: dict[str, tuple[str, StoredVector]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rows)

    def load(self, embedder: str) -> Precomputed:
        with self._lock:
            return {
                doc_id: (row.content_hash, row.vector.copy())
                for doc_id, (who, row) in self._rows.items()
                if who == embedder
            }

    def save(self, embedder: str, rows: Sequence[StoredVector]) -> None:
        with self._lock:
            for row in rows:
                self._rows[row.doc_id] = (embedder, row)

    def delete(self, doc_ids: Iterable[str]) -> None:
        with self._lock:
            for doc_id in doc_ids:
                self._rows.pop(doc_id, None)

    def doc_ids(self) -> set[str]:
        with self._lock:
            return set(self._rows)

    def embedders(self) -> set[str]:
        with self._lock:
            return {who for who, _ in self._rows.values()}


class SqlVectorRepository:
    """The ``vectors`` table, on SQLite or PostgreSQL; read once when an index is
    built, written only for entries that were (re-)embedded or removed."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def load(self, embedder: str) -> Precomputed:
        query = select(table.c.doc_id, table.c.content_hash, table.c.dim, table.c.vector).where(
            table.c.embedder == embedder
        )
        out: Precomputed = {}
        with self._store.reading() as conn:
            for doc_id, content_hash, dim, data in conn.execute(query):
                vector = from_bytes(bytes(data), int(dim))
                if vector is not None:
                    out[doc_id] = (content_hash, vector)
        return out

    def save(self, embedder: str, rows: Sequence[StoredVector]) -> None:
        if not rows:
            return
        now = self._store.clock()
        values = [
            {
                "doc_id": row.doc_id,
                "plugin_id": row.plugin_id,
                "content_hash": row.content_hash,
                "embedder": embedder,
                "dim": int(row.vector.shape[0]),
                "vector": to_bytes(row.vector),
                "updated_at": now,
            }
            for row in rows
        ]
        with self._store.writing() as conn:
            for start in range(0, len(values), _CHUNK):
                conn.execute(_upsert(conn), values[start : start + _CHUNK])

    def delete(self, doc_ids: Iterable[str]) -> None:
        ids = list(doc_ids)
        if not ids:
            return
        with self._store.writing() as conn:
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start : start + _CHUNK]
                conn.execute(delete(table).where(table.c.doc_id.in_(chunk)))

    def doc_ids(self) -> set[str]:
        with self._store.reading() as conn:
            return {d for (d,) in conn.execute(select(table.c.doc_id))}

    def embedders(self) -> set[str]:
        with self._store.reading() as conn:
            return {e for (e,) in conn.execute(select(table.c.embedder).distinct())}


def _upsert(conn: Connection) -> Any:
    """One statement executed with many parameter sets: compiled once (and cached),
    where a multi-row VALUES clause was compiled anew for every batch."""
    insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    statement = insert(table)
    changed = {
        name: statement.excluded[name]
        for name in ("plugin_id", "content_hash", "embedder", "dim", "vector", "updated_at")
    }
    return statement.on_conflict_do_update(index_elements=["doc_id"], set_=changed)
