"""Where learned requests are kept: the store's ``remembered_requests`` table, or a list
in memory (tests, benchmarks, hosts without persistence).

A row is one subject's request accepted for one tool. The pair (subject, tool,
normalised request) is unique, so the same feedback sent 10,000 times is one row.
Vectors are a cache: a row whose ``embedder`` is not the current one is embedded again
when the index is built (or the row first read from another replica's change), and the
new vector written back.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from sqlalchemy import delete, func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from plugyard.discovery.embedders import Vectors
from plugyard.discovery.vector_store import from_bytes, to_bytes
from plugyard.store.schema import remembered_requests as table

if TYPE_CHECKING:
    from plugyard.store.store import Store

T = TypeVar("T")

#: The change log topic naming a tool whose rows were added or deleted (migration 0014):
#: what other replicas follow to learn together (Learning.reconcile).
TOPIC = table.name


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


def _parts(items: Sequence[T]) -> Iterator[Sequence[T]]:
    """An ``IN`` list in pieces a database takes."""
    for start in range(0, len(items), 500):
        yield items[start : start + 500]


class MemoryRememberedRepository:
    def __init__(self) -> None:
        self._rows: dict[int, Remembered] = {}
        self._once: dict[tuple[str, str, str], int] = {}  # (subject, tool, digest) -> id
        self._next = 1
        self._lock = threading.Lock()

    def add(self, row: Remembered) -> Remembered | None:
        once = (row.subject, row.doc_id, digest(row.query))
        with self._lock:
            if once in self._once:
                return None
            made = replace(row, id=self._next)
            self._rows[made.id] = made
            self._once[once] = made.id
            self._next += 1
            return made

    def count(self, subject: str, doc_id: str) -> int:
        with self._lock:
            return sum(1 for r in self._rows.values() if (r.subject, r.doc_id) == (subject, doc_id))

    def remove(self, subject: str, doc_id: str, query: str) -> list[int]:
        with self._lock:
            found = self._once.get((subject, doc_id, digest(query)))
        gone = [] if found is None else [found]
        self.delete(gone)
        return gone

    def rows(self, plugin_id: str | None = None, doc_id: str | None = None) -> list[Remembered]:
        with self._lock:
            return [
                r
                for r in sorted(self._rows.values(), key=lambda r: r.id)
                if (plugin_id is None or r.plugin_id == plugin_id)
                and (doc_id is None or r.doc_id == doc_id)
            ]

    def delete(self, ids: Iterable[int]) -> None:
        with self._lock:
            for i in ids:
                gone = self._rows.pop(i, None)
                if gone is not None:
                    del self._once[(gone.subject, gone.doc_id, digest(gone.query))]

    def ids(self, doc_ids: Iterable[str] | None = None) -> set[int]:
        tools = None if doc_ids is None else set(doc_ids)
        with self._lock:
            return {r.id for r in self._rows.values() if tools is None or r.doc_id in tools}

    def by_ids(self, ids: Iterable[int]) -> list[Remembered]:
        with self._lock:
            return [self._rows[i] for i in sorted(set(ids)) if i in self._rows]

    def created_before(self, cutoff: float) -> list[int]:
        with self._lock:
            return [r.id for r in self._rows.values() if r.created_at < cutoff]

    def delete_plugin(self, plugin_id: str, doc_id: str | None = None) -> list[int]:
        gone = [r.id for r in self.rows(plugin_id, doc_id)]
        self.delete(gone)
        return gone

    def save_vectors(self, embedder: str, vectors: Sequence[tuple[int, Vectors]]) -> None:
        with self._lock:
            for i, vector in vectors:
                if i in self._rows:
                    self._rows[i] = replace(self._rows[i], embedder=embedder, vector=vector)


class SqlRememberedRepository:
    def __init__(self, store: Store, dim: int) -> None:
        self._store = store
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
        with self._store.writing() as conn:
            insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            made = conn.execute(
                insert(table).values(values).on_conflict_do_nothing().returning(table.c.id)
            ).scalar_one_or_none()
        return None if made is None else replace(row, id=int(made))

    def count(self, subject: str, doc_id: str) -> int:
        query = select(func.count()).where(table.c.subject == subject, table.c.doc_id == doc_id)
        with self._store.reading() as conn:
            return int(conn.execute(query).scalar_one())

    def remove(self, subject: str, doc_id: str, query: str) -> list[int]:
        where = (
            table.c.subject == subject,
            table.c.doc_id == doc_id,
            table.c.digest == digest(query),
        )
        with self._store.writing() as conn:
            gone = [int(i) for (i,) in conn.execute(select(table.c.id).where(*where))]
            conn.execute(delete(table).where(*where))
        return gone

    def rows(self, plugin_id: str | None = None, doc_id: str | None = None) -> list[Remembered]:
        query = select(table).order_by(table.c.id)
        if plugin_id is not None:
            query = query.where(table.c.plugin_id == plugin_id)
        if doc_id is not None:
            query = query.where(table.c.doc_id == doc_id)
        with self._store.reading() as conn:
            return [self._row(r) for r in conn.execute(query)]

    def _row(self, r: Any) -> Remembered:
        vector = from_bytes(bytes(r.vector), self._dim) if r.vector is not None else None
        return Remembered(int(r.id), r.plugin_id, r.doc_id, r.subject, r.query,
                          float(r.created_at), r.embedder, vector)  # fmt: skip

    def ids(self, doc_ids: Iterable[str] | None = None) -> set[int]:
        if doc_ids is None:
            with self._store.reading() as conn:
                return {int(i) for (i,) in conn.execute(select(table.c.id))}
        tools, found = sorted(set(doc_ids)), set[int]()
        with self._store.reading() as conn:
            for part in _parts(tools):
                query = select(table.c.id).where(table.c.doc_id.in_(part))
                found.update(int(i) for (i,) in conn.execute(query))
        return found

    def by_ids(self, ids: Iterable[int]) -> list[Remembered]:
        found: list[Remembered] = []
        with self._store.reading() as conn:
            for part in _parts(sorted(set(ids))):
                query = select(table).where(table.c.id.in_(part))
                found.extend(self._row(r) for r in conn.execute(query))
        return sorted(found, key=lambda r: r.id)

    def delete(self, ids: Iterable[int]) -> None:
        with self._store.writing() as conn:
            for part in _parts(list(ids)):
                conn.execute(delete(table).where(table.c.id.in_(part)))

    def created_before(self, cutoff: float) -> list[int]:
        query = select(table.c.id).where(table.c.created_at < cutoff)
        with self._store.reading() as conn:
            return [int(i) for (i,) in conn.execute(query)]

    def delete_plugin(self, plugin_id: str, doc_id: str | None = None) -> list[int]:
        where = [table.c.plugin_id == plugin_id]
        if doc_id is not None:
            where.append(table.c.doc_id == doc_id)
        with self._store.writing() as conn:
            gone = [int(i) for (i,) in conn.execute(select(table.c.id).where(*where))]
            conn.execute(delete(table).where(*where))
        return gone

    def save_vectors(self, embedder: str, vectors: Sequence[tuple[int, Vectors]]) -> None:
        if not vectors:
            return
        with self._store.writing() as conn:
            for i, vector in vectors:
                conn.execute(
                    update(table)
                    .where(table.c.id == i)
                    .values(embedder=embedder, vector=to_bytes(vector))
                )
