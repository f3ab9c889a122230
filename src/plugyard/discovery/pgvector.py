"""Dense search inside PostgreSQL with pgvector: the vectors in a ``vector`` column with
an HNSW index, and the caller's rights and placement filters in the same query.

On PostgreSQL with the extension, :class:`PgVectorCandidates` is the search engine's
dense candidate source (candidates.py); on SQLite the engine keeps its in-process HNSW
graph. That graph would be in every replica's memory and rebuilt by each; here one
copy lives in the database, is written once per change whichever replica embedded the
entry first, and is searched where the filters can be joined against ``plugins``.

The table is made on first use rather than by a migration: the extension is optional
(a PostgreSQL server without it still runs plugyard, searching in process), and its
column needs the embedder's dimension, which the schema cannot know. Replicas making it
at once take turns on an advisory lock.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import text
from sqlalchemy.engine import Connection

from plugyard.discovery.candidates import DenseSource, Scope
from plugyard.discovery.embedders import Vectors
from plugyard.discovery.vector_store import Precomputed, StoredVector, VectorRepository
from plugyard.errors import StoreError

if TYPE_CHECKING:
    from plugyard.store.store import Store

_LOCK_KEY = 0x706C7567766563  # arbitrary, fixed
_CHUNK = 500
_ANALYZE_FROM = 1000
_AVAILABLE = Scope()
#: HNSW build parameters (the in-process graph's; bench/RESULTS.md, Fleet, for the
#: recall they buy): ef_construction 64, pgvector's default, lost recall at 20k+.
HNSW_M, HNSW_EF_CONSTRUCTION = 16, 200
#: The search breadth: recall@10 1.000 on MiniLM vectors of a real catalog; vectors
#: without clusters (random) need 800 for 0.99 at 100k (bench/RESULTS.md, Fleet).
EF_SEARCH = 400


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
    return "[" + ",".join(map(repr, np.asarray(vector, dtype=np.float32).tolist())) + "]"


# On the engine's pool, not the store's held connection (rawdb.py): concurrent searches
# each take a connection, where the held one would queue them behind each other.
class PgVectorIndex:
    """Vectors of one dimension in ``vector_index_<dim>``, cosine distance."""

    def __init__(
        self,
        store: Store,
        dim: int,
        *,
        ef_search: int = EF_SEARCH,
        ef_construction: int = HNSW_EF_CONSTRUCTION,
    ) -> None:
        if store.backend != "postgresql":
            raise StoreError("pgvector needs a PostgreSQL store", code="store_error")
        if int(ef_search) < 1:
            raise ValueError(f"ef_search must be at least 1, not {ef_search}")
        self._store, self.dim, self._ef = store, int(dim), int(ef_search)
        # Read when the index is built (an existing index keeps its own).
        self._ef_construction = int(ef_construction)
        self.table = f"vector_index_{self.dim}"
        self._ready = False

    def ensure(self, *, with_index: bool = True) -> None:
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
            # Tables made before the hash was kept get it here; '' never matches.
            connection.execute(
                text(
                    f"ALTER TABLE {self.table}"
                    " ADD COLUMN IF NOT EXISTS content_hash varchar(64) NOT NULL DEFAULT ''"
                )
            )
            connection.execute(
                text(
                    f"CREATE INDEX IF NOT EXISTS ix_{self.table}_plugin ON {self.table} (plugin_id)"
                )
            )
            if with_index:
                self._build_hnsw(connection)
        self._ready = with_index

    def _build_hnsw(self, connection: Connection) -> None:
        connection.execute(text("SET LOCAL maintenance_work_mem = '256MB'"))
        connection.execute(
            text(
                f"CREATE INDEX IF NOT EXISTS ix_{self.table}_hnsw ON {self.table}"
                " USING hnsw (embedding vector_cosine_ops)"
                f" WITH (m = {HNSW_M}, ef_construction = {self._ef_construction})"
            )
        )

    def save(self, embedder: str, rows: Sequence[StoredVector]) -> set[str]:
        """Write the rows whose text or embedder changed; returns their doc ids.

        Every replica hears of a registration and embeds the entry for its own index;
        the first to get here writes it, and the others find the same hash and write
        nothing — one HNSW insertion per change, not one per replica.
        """
        self.ensure()
        rows = [r for r in rows if int(r.vector.shape[0]) == self.dim]
        statement = text(
            f"INSERT INTO {self.table} AS t (doc_id, plugin_id, embedder, content_hash, embedding)"
            " SELECT d, p, e, h, CAST(v AS vector) FROM unnest(CAST(:d AS text[]),"
            " CAST(:p AS text[]), CAST(:e AS text[]), CAST(:h AS text[]), CAST(:v AS text[]))"
            " AS u(d, p, e, h, v)"
            " ON CONFLICT (doc_id) DO UPDATE SET plugin_id = EXCLUDED.plugin_id,"
            " embedder = EXCLUDED.embedder, content_hash = EXCLUDED.content_hash,"
            " embedding = EXCLUDED.embedding"
            " WHERE (t.embedder, t.content_hash) IS DISTINCT FROM"
            " (EXCLUDED.embedder, EXCLUDED.content_hash)"
            " RETURNING t.doc_id"
        )
        written: set[str] = set()
        with self._store.writing() as connection:
            for start in range(0, len(rows), _CHUNK):
                chunk = rows[start : start + _CHUNK]
                params = {
                    "d": [r.doc_id for r in chunk],
                    "p": [r.plugin_id for r in chunk],
                    "e": [embedder] * len(chunk),
                    "h": [r.content_hash for r in chunk],
                    "v": [literal(r.vector) for r in chunk],
                }
                written.update(d for (d,) in connection.execute(statement, params))
        if len(written) >= _ANALYZE_FROM:
            self.analyze()
        return written

    def analyze(self) -> None:
        # Until autovacuum gets to it, the planner believes the table small and sorts a
        # sequential scan instead of walking the HNSW index (100× slower at 100k rows).
        with self._store.writing() as connection:
            connection.execute(text(f"ANALYZE {self.table}"))

    def bulk_load(self, embedder: str, rows: Iterable[StoredVector]) -> int:
        """Load many rows at once into an empty index (a first build, a benchmark):
        COPY without the HNSW index, then build it in one pass, then ANALYZE — at 100k
        rows minutes faster than inserting into a live graph row by row."""
        self.ensure(with_index=False)
        with self._store.writing() as connection:
            connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK_KEY})
            connection.execute(text(f"DROP INDEX IF EXISTS ix_{self.table}_hnsw"))
            raw: Any = connection.connection.driver_connection
            count = 0
            with raw.cursor() as cursor:
                copy_sql = (
                    f"COPY {self.table} (doc_id, plugin_id, embedder, content_hash, embedding)"
                    " FROM STDIN"
                )
                with cursor.copy(copy_sql) as copy:
                    for r in rows:
                        copy.write_row((r.doc_id, r.plugin_id, embedder, r.content_hash,
                                        literal(r.vector)))  # fmt: skip
                        count += 1
            self._build_hnsw(connection)
        self._ready = True
        self.analyze()
        return count

    def delete(self, doc_ids: Iterable[str]) -> None:
        self.ensure()
        ids = list(doc_ids)
        if not ids:
            return
        with self._store.writing() as connection:
            connection.execute(
                text(f"DELETE FROM {self.table} WHERE doc_id = ANY(:ids)"), {"ids": ids}
            )

    def owners(self, doc_ids: Sequence[str]) -> dict[str, str]:
        """doc id → plugin id, as the ``vectors`` table records them."""
        with self._store.reading() as connection:
            found = connection.execute(
                text("SELECT doc_id, plugin_id FROM vectors WHERE doc_id = ANY(:ids)"),
                {"ids": list(doc_ids)},
            )
            return {str(d): str(p) for d, p in found}

    def held(self) -> dict[str, str]:
        """doc id → content hash of every row (for tests and rebuilds)."""
        self.ensure()
        with self._store.reading() as connection:
            found = connection.execute(text(f"SELECT doc_id, content_hash FROM {self.table}"))
            return {str(d): str(h) for d, h in found}

    def nearest(
        self,
        embedder: str,
        query: Vectors,
        k: int,
        scope: Scope = _AVAILABLE,
    ) -> list[tuple[str, float]]:
        """The ``k`` entries closest to ``query`` (doc id, cosine similarity), best
        first, among those ``scope`` admits: the caller's rights as the doc ids they
        allow, the family, placement and availability as predicates on ``plugins``."""
        self.ensure()
        where = ["v.embedder = :embedder"]
        params: dict[str, object] = {"embedder": embedder, "q": literal(query), "k": int(k)}
        plugin_level = []
        if not scope.include_unavailable:
            plugin_level.append("p.available")
        if scope.families is not None:
            plugin_level.append("p.family = ANY(:families)")
            params["families"] = sorted(scope.families)
        if scope.capability is not None:
            # Placement.allows: a stage plugin listing the capability or ALL (defaults are
            # left out of the stored descriptor, hence the coalesce).
            plugin_level.append(
                "coalesce(p.descriptor->'placement'->>'role', 'CAPABILITY_STAGE')"
                " = 'CAPABILITY_STAGE' AND jsonb_exists_any("
                "coalesce(p.descriptor->'placement'->'capabilities', '[]'::jsonb),"
                " ARRAY[:capability, 'ALL'])"
            )
            params["capability"] = scope.capability
        if plugin_level:
            where.append(
                "EXISTS (SELECT 1 FROM plugins p WHERE p.id = v.plugin_id AND "
                + " AND ".join(plugin_level)
                + ")"
            )
        if scope.entries is not None:
            where.append("v.doc_id = ANY(:ids)")
            params["ids"] = sorted(scope.entries())
        statement = text(
            f"SELECT v.doc_id, 1 - (v.embedding <=> CAST(:q AS vector)) FROM {self.table} v"
            f" WHERE {' AND '.join(where)}"
            " ORDER BY v.embedding <=> CAST(:q AS vector) LIMIT :k"
        )
        with self._store.reading() as connection:
            self._tune(connection, k)
            found = [(d, float(s)) for d, s in connection.execute(statement, params)]
        # The iterative scan may hand rows back slightly out of order.
        return sorted(found, key=lambda pair: -pair[1])

    def _tune(self, connection: Connection, k: int) -> None:
        # A filter applied during the HNSW walk can leave fewer than k rows; pgvector
        # 0.8's iterative scan keeps walking until k pass. ef_search buys recall.
        # Below ~50k rows of 384 dimensions the planner prices a sequential scan and a
        # sort under the HNSW walk and picks it: 13 ms against ~2 at 10k rows. With a
        # selective scope the primary key's index still serves, so only the sequential
        # scan is ruled out. One round trip for all three (SET LOCAL takes one each).
        ef = max(self._ef, 2 * int(k))
        connection.execute(
            text(
                "SELECT set_config('hnsw.ef_search', :ef, true),"
                " set_config('hnsw.iterative_scan', 'relaxed_order', true),"
                " set_config('enable_seqscan', 'off', true)"
            ),
            {"ef": str(ef)},
        )


class PgVectorCandidates:
    """The engine's dense candidates (candidates.DenseSource) from :class:`PgVectorIndex`."""

    def __init__(self, index: PgVectorIndex, embedder: str) -> None:
        self.index, self.embedder = index, embedder

    def nearest(self, query: Vectors, k: int, scope: Scope) -> Sequence[str]:
        return [d for d, _ in self.index.nearest(self.embedder, query, k, scope)]


class MirroredVectors:
    """The ``vectors`` table (what an index build reloads) with every write mirrored
    into :class:`PgVectorIndex`, so the shared copy follows whichever replica embeds."""

    def __init__(self, rows: VectorRepository, index: PgVectorIndex) -> None:
        self.rows, self.index = rows, index

    def load(self, embedder: str) -> Precomputed:
        stored = self.rows.load(embedder)
        # Vectors stored before the extension was there (or by an older plugyard) are
        # reused by the index build and never saved again: copy them over now, or the
        # dense source would not know them.
        held = self.index.held()
        missing = [d for d, (digest, _) in stored.items() if held.get(d) != digest]
        if missing:
            owners = self.index.owners(missing)
            self.index.save(embedder, [
                StoredVector(d, owners[d], stored[d][0], stored[d][1])
                for d in missing if d in owners
            ])  # fmt: skip
        return stored

    def save(self, embedder: str, rows: Sequence[StoredVector]) -> None:
        # What another replica wrote already is in both tables.
        written = self.index.save(embedder, rows)
        self.rows.save(embedder, [r for r in rows if r.doc_id in written])

    def delete(self, doc_ids: Iterable[str]) -> None:
        ids = list(doc_ids)
        self.rows.delete(ids)
        self.index.delete(ids)

    def doc_ids(self) -> set[str]:
        return self.rows.doc_ids()


def vectors_for(store: Store, dim: int, *, ef_search: int = EF_SEARCH) -> VectorRepository:
    """What the yard keeps vectors in: mirrored to pgvector when the server has it."""
    from plugyard.discovery.vector_store import SqlVectorRepository

    rows = SqlVectorRepository(store)
    if not available(store):
        return rows
    return MirroredVectors(rows, PgVectorIndex(store, dim, ef_search=ef_search))


def dense_source_for(vectors: VectorRepository, embedder: str) -> DenseSource | None:
    """The engine's dense candidates from pgvector when ``vectors`` are mirrored
    there (vectors_for); ``None``: the in-process graph."""
    if isinstance(vectors, MirroredVectors):
        return PgVectorCandidates(vectors.index, embedder)
    return None
