"""Where learned requests are kept: the store's ``remembered_requests`` table (an
in-memory store's for tests, benchmarks and hosts without persistence).

A row is one subject's request accepted for one tool. The pair (subject, tool,
normalised request) is unique, so the same feedback sent 10,000 times is one row.
Vectors are a cache: a row whose ``embedder`` is not the current one is embedded again
when the index is built (or the row first read from another replica's change), and the
new vector written back.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from plugyard.discovery.embedders import Vectors
from plugyard.discovery.vector_store import from_bytes, to_bytes
from plugyard.store.rawdb import RawDb, matching, raw_db

if TYPE_CHECKING:
    from plugyard.store.store import Store

T = TypeVar("T")

#: The change log topic naming a tool whose rows were added or deleted (migration 0014):
#: what other replicas follow to learn together (Learning.reconcile).
TOPIC = "remembered_requests"


def digest(query: str) -> str:
    """The request's identity: case and spacing do not make a new request."""
    return hashlib.sha256(" ".join(query.lower().split()).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Remembered:
    id: int
    plugin_id: str
    doc_id: str  # the plugin, or plugin/operation (discovery.catalog.doc_id)
    subject: str
    query: str
    created_at: float
    embedder: str | None = None
    vector: Vectors | None = None

    @property
    def operation(self) -> str | None:
        """The operation the request was answered by (``None``: the plugin as a whole)."""
        return None if self.doc_id == self.plugin_id else self.doc_id[len(self.plugin_id) + 1 :]


class RememberedRepository(Protocol):
    def add(self, row: Remembered) -> Remembered | None:
        """Insert (``id`` is assigned); ``None`` when the subject already remembers
        this request for this tool."""
        ...

    def count(self, subject: str, doc_id: str) -> int: ...

    def remove(self, subject: str, doc_id: str, query: str) -> list[int]:
        """The subject's row for this request and tool, if any; the ids removed."""
        ...

    def rows(self, plugin_id: str | None = None, doc_id: str | None = None) -> list[Remembered]:
        """Every row (vectors included), or one plugin's, or one tool's; oldest first."""
        ...

    def delete(self, ids: Iterable[int]) -> None: ...

    def ids(self, doc_ids: Iterable[str] | None = None) -> set[int]:
        """The ids of every row, or of these tools' rows (no vectors read)."""
        ...

    def by_ids(self, ids: Iterable[int]) -> list[Remembered]:
        """These rows (vectors included), oldest first; ids gone are left out."""
        ...

    def created_before(self, cutoff: float) -> list[int]:
        """Ids of rows older than ``cutoff`` (epoch seconds)."""
        ...

    def delete_plugin(self, plugin_id: str, doc_id: str | None = None) -> list[int]:
        """Forget a plugin (or one of its tools); the ids removed."""
        ...

    def save_vectors(self, embedder: str, vectors: Sequence[tuple[int, Vectors]]) -> None: ...


_COLUMNS = "id, plugin_id, doc_id, subject, query, created_at, embedder, vector"
_SELECT = f"SELECT {_COLUMNS} FROM remembered_requests"


def _in(column: str, values: Sequence[object]) -> tuple[str, dict[str, object]]:
    """``column IN (…)`` over ``values`` (at most :data:`_PART` of them) and its
    parameters."""
    names = [f"v{i}" for i in range(len(values))]
    placeholders = ", ".join(f":{n}" for n in names)
    return f"{column} IN ({placeholders})", dict(zip(names, values, strict=True))


#: Values in one ``IN`` list: under SQLite's bound-parameter limit with room to spare.
_PART = 500


def _parts(items: Sequence[T]) -> Iterator[Sequence[T]]:
    """An ``IN`` list in pieces a database takes."""
    for start in range(0, len(items), _PART):
        yield items[start : start + _PART]


class SqlRememberedRepository:
    """The ``remembered_requests`` table, on SQLite or PostgreSQL (an in-memory store for
    a host without persistence)."""

    def __init__(self, store: Store, dim: int) -> None:
        self._db: RawDb = raw_db(store)
        self._dim = dim

    def add(self, row: Remembered) -> Remembered | None:
        values = {
            "plugin_id": row.plugin_id,
            "doc_id": row.doc_id,
            "subject": row.subject,
            "query": row.query,
            "digest": digest(row.query),
            "created_at": row.created_at,
            "embedder": row.embedder,
            "vector": to_bytes(row.vector) if row.vector is not None else None,
        }
        with self._db.write() as tx:
            made = tx.one(
                "INSERT INTO remembered_requests (plugin_id, doc_id, subject, query, digest, "
                "created_at, embedder, vector) VALUES (:plugin_id, :doc_id, :subject, :query, "
                ":digest, :created_at, :embedder, :vector) ON CONFLICT DO NOTHING RETURNING id",
                values,
            )
        return None if made is None else replace(row, id=int(made[0]))

    def count(self, subject: str, doc_id: str) -> int:
        with self._db.read() as tx:
            found = tx.one(
                "SELECT count(*) FROM remembered_requests WHERE subject = :s AND doc_id = :d",
                {"s": subject, "d": doc_id},
            )
        return int(found[0]) if found is not None else 0

    def remove(self, subject: str, doc_id: str, query: str) -> list[int]:
        return self._delete_returning(
            "subject = :s AND doc_id = :d AND digest = :h",
            {"s": subject, "d": doc_id, "h": digest(query)},
        )

    def rows(self, plugin_id: str | None = None, doc_id: str | None = None) -> list[Remembered]:
        where, values = matching(plugin_id=plugin_id, doc_id=doc_id)
        with self._db.read() as tx:
            found = tx.all(f"{_SELECT}{where} ORDER BY id", values)
        return [self._row(r) for r in found]

    def _row(self, r: tuple[Any, ...]) -> Remembered:
        id_, plugin_id, doc_id, subject, query, created_at, embedder, data = r
        vector = from_bytes(bytes(data), self._dim) if data is not None else None
        return Remembered(int(id_), plugin_id, doc_id, subject, query, float(created_at),
                          embedder, vector)  # fmt: skip

    def ids(self, doc_ids: Iterable[str] | None = None) -> set[int]:
        found = set[int]()
        with self._db.read() as tx:
            if doc_ids is None:
                return {int(i) for (i,) in tx.all("SELECT id FROM remembered_requests")}
            for part in _parts(sorted(set(doc_ids))):
                where, params = _in("doc_id", part)
                rows = tx.all(f"SELECT id FROM remembered_requests WHERE {where}", params)
                found.update(int(i) for (i,) in rows)
        return found

    def by_ids(self, ids: Iterable[int]) -> list[Remembered]:
        found: list[Remembered] = []
        with self._db.read() as tx:
            for part in _parts(sorted(set(ids))):
                where, params = _in("id", part)
                found.extend(self._row(r) for r in tx.all(f"{_SELECT} WHERE {where}", params))
        return sorted(found, key=lambda r: r.id)

    def delete(self, ids: Iterable[int]) -> None:
        gone = [(i,) for i in ids]
        if gone:
            with self._db.write() as tx:
                tx.execute_many("DELETE FROM remembered_requests WHERE id = ?", gone)

    def created_before(self, cutoff: float) -> list[int]:
        with self._db.read() as tx:
            found = tx.all(
                "SELECT id FROM remembered_requests WHERE created_at < :c", {"c": cutoff}
            )
        return [int(i) for (i,) in found]

    def delete_plugin(self, plugin_id: str, doc_id: str | None = None) -> list[int]:
        where = "plugin_id = :p" if doc_id is None else "plugin_id = :p AND doc_id = :d"
        return self._delete_returning(where, {"p": plugin_id, "d": doc_id})

    def save_vectors(self, embedder: str, vectors: Sequence[tuple[int, Vectors]]) -> None:
        if not vectors:
            return
        with self._db.write() as tx:
            tx.execute_many(
                "UPDATE remembered_requests SET embedder = ?, vector = ? WHERE id = ?",
                [(embedder, to_bytes(vector), i) for i, vector in vectors],
            )

    def _delete_returning(self, where: str, params: dict[str, Any]) -> list[int]:
        with self._db.write() as tx:
            gone = tx.all(f"DELETE FROM remembered_requests WHERE {where} RETURNING id", params)
        return sorted(int(i) for (i,) in gone)
