"""Dense search inside PostgreSQL with pgvector: the vectors in a ``vector`` column with
an HNSW index, and the caller's rights and placement filters in the same query.

The in-process index (engine.py) stays the default, and the only path on SQLite. On a
fleet it would hold every vector in every replica's memory and be rebuilt by each; here
one copy lives in the database, is written once by whichever replica embedded the
entry, and is searched where the filters can be joined against ``plugins``.

The table is made on first use rather than by a migration: the extension is optional
(a PostgreSQL server without it still runs plugyard, searching in process), and its
column needs the embedder's dimension, which the schema cannot know. Replicas making it
at once take turns on an advisory lock.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import text
from sqlalchemy.engine import Connection

from plugyard.discovery.embedders import Vectors
from plugyard.discovery.vector_store import Precomputed, StoredVector, VectorRepository
from plugyard.errors import StoreError

if TYPE_CHECKING:
    from plugyard.store.store import Store

_LOCK_KEY = 0x706C7567766563  # arbitrary, fixed
_CHUNK = 500
_ANALYZE_FROM = 1000


def available(store: Store) -> bool:
    """Whether the server can run pgvector (installed, whether or not created yet)."""
    if store.backend != "postgresql":
        return False
    with store.reading() as connection:
        found = connection.execute(
            text("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        ).scalar()
    return found is not None


def literal(vector: Vectors) -> str:
    """pgvector's text form; repr of a float32 round-trips exactly."""
    return "[" + ",".join(repr(float(x)) for x in np.asarray(vector, dtype=np.float32)) + "]"


class PgVectorIndex:
    """Vectors of one dimension in ``vector_index_<dim>``, cosine distance."""

    def __init__(self, store: Store, dim: int, *, ef_search: int = 200) -> None:
        if store.backend != "postgresql":
            raise StoreError("pgvector needs a PostgreSQL store", code="store_error")
        self._store, self.dim, self._ef = store, int(dim), int(ef_search)
        self.table = f"vector_index_{self.dim}"
        self._ready = False

    def ensure(self) -> None:
        if self._ready:
            return
        with self._store.writing() as connection:
            connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK_KEY})
            connection.execute(text("CREATE EXTENSION IF NOT EXISTS vector"))
            connection.execute(
                text(
                    f"CREATE TABLE IF NOT EXISTS {self.table} ("
                    " doc_id varchar(401) PRIMARY KEY, plugin_id varchar(200) NOT NULL,"
                    f" embedder varchar(500) NOT NULL, embedding vector({self.dim}) NOT NULL)"
                )
            )
            connection.execute(
                text(
                    f"CREATE INDEX IF NOT EXISTS ix_{self.table}_hnsw ON {self.table}"
                    # The in-process index's build quality (vectors.py: M 16, ef 200);
                    # pgvector's default ef_construction of 64 loses recall at 20k+.
                    " USING hnsw (embedding vector_cosine_ops)"
                    " WITH (m = 16, ef_construction = 200)"
                )
            )
            connection.execute(
                text(
                    f"CREATE INDEX IF NOT EXISTS ix_{self.table}_plugin ON {self.table} (plugin_id)"
                )
            )
        self._ready = True

    def save(self, embedder: str, rows: Sequence[StoredVector]) -> None:
        self.ensure()
        values = [
            {"d": r.doc_id, "p": r.plugin_id, "e": embedder, "v": literal(r.vector)}
            for r in rows
            if int(r.vector.shape[0]) == self.dim
        ]
        statement = text(
            f"INSERT INTO {self.table} (doc_id, plugin_id, embedder, embedding)"
            " VALUES (:d, :p, :e, CAST(:v AS vector)) ON CONFLICT (doc_id) DO UPDATE SET"
            " plugin_id = EXCLUDED.plugin_id, embedder = EXCLUDED.embedder,"
            " embedding = EXCLUDED.embedding"
        )
        with self._store.writing() as connection:
            for start in range(0, len(values), _CHUNK):
                connection.execute(statement, values[start : start + _CHUNK])
        if len(values) >= _ANALYZE_FROM:
            # Until autovacuum gets to it, the planner believes the table small and
            # sorts a sequential scan instead of walking the HNSW index (100× slower
            # at 100k rows).
            with self._store.writing() as connection:
                connection.execute(text(f"ANALYZE {self.table}"))

    def delete(self, doc_ids: Iterable[str]) -> None:
        self.ensure()
        ids = list(doc_ids)
        with self._store.writing() as connection:
            connection.execute(
                text(f"DELETE FROM {self.table} WHERE doc_id = ANY(:ids)"), {"ids": ids}
            )

    def nearest(
        self,
        embedder: str,
        query: Vectors,
        k: int,
        *,
        plugin_ids: Collection[str] | None = None,
        families: Collection[str] | None = None,
        available_only: bool = True,
    ) -> list[tuple[str, float]]:
        """The ``k`` entries closest to ``query`` (doc id, cosine similarity), best
        first, among those of ``plugin_ids`` (the caller's rights) and ``families``
        (placement), available plugins only unless told otherwise."""
        self.ensure()
        where = ["v.embedder = :embedder"]
        params: dict[str, object] = {"embedder": embedder, "q": literal(query), "k": int(k)}
        join = ""
        if families is not None or available_only:
            join = " JOIN plugins p ON p.id = v.plugin_id"
            if available_only:
                where.append("p.available")
            if families is not None:
                where.append("p.family = ANY(:families)")
                params["families"] = list(families)
        if plugin_ids is not None:
            where.append("v.plugin_id = ANY(:ids)")
            params["ids"] = list(plugin_ids)
        statement = text(
            f"SELECT v.doc_id, 1 - (v.embedding <=> CAST(:q AS vector)) FROM {self.table} v"
            f"{join} WHERE {' AND '.join(where)}"
            " ORDER BY v.embedding <=> CAST(:q AS vector) LIMIT :k"
        )
        with self._store.reading() as connection:
            self._tune(connection, k)
            return [(d, float(s)) for d, s in connection.execute(statement, params)]

    def _tune(self, connection: Connection, k: int) -> None:
        # A filter applied after the HNSW walk can leave fewer than k rows; pgvector
        # 0.8's iterative scan keeps walking until k pass. ef_search buys recall.
        ef = max(self._ef, 2 * int(k))
        connection.execute(text(f"SET LOCAL hnsw.ef_search = {ef}"))
        connection.execute(text("SET LOCAL hnsw.iterative_scan = relaxed_order"))


class MirroredVectors:
    """The ``vectors`` table (what an index build reloads) with every write mirrored
    into :class:`PgVectorIndex`, so the shared copy follows whichever replica embeds."""

    def __init__(self, rows: VectorRepository, index: PgVectorIndex) -> None:
        self.rows, self.index = rows, index

    def load(self, embedder: str) -> Precomputed:
        return self.rows.load(embedder)

    def save(self, embedder: str, rows: Sequence[StoredVector]) -> None:
        self.rows.save(embedder, rows)
        self.index.save(embedder, rows)

    def delete(self, doc_ids: Iterable[str]) -> None:
        ids = list(doc_ids)
        self.rows.delete(ids)
        self.index.delete(ids)

    def doc_ids(self) -> set[str]:
        return self.rows.doc_ids()


def vectors_for(store: Store, dim: int) -> VectorRepository:
    """What the yard keeps vectors in: mirrored to pgvector when the server has it."""
    from plugyard.discovery.vector_store import SqlVectorRepository

    rows = SqlVectorRepository(store)
    if not available(store):
        return rows
    return MirroredVectors(rows, PgVectorIndex(store, dim))
