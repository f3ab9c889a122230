"""Knowledge-base rows: the knowledge bases, their knowledge objects and chunks.

A knowledge base is owned by one plugin (the first to write into it, or the one an
operator names) and read by its owner and the plugins it is shared with. A knowledge
object is one source document, keyed by ``(kb_id, source_id)``; its chunks carry the
text and the embedding (little-endian float32) search reads. :meth:`replace` swaps an
object and all its chunks in one transaction, so a reader sees the old version or the
new one, never a mix, and a failed ingestion leaves the old one whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from plugyard.store.rawdb import RawDb, json_in, json_out, raw_db

if TYPE_CHECKING:
    from plugyard.store.store import Store


@dataclass(frozen=True, slots=True)
class KbInfo:
    kb_id: str
    owner: str
    readers: tuple[str, ...]
    created_at: float

    def readable_by(self, plugin_id: str) -> bool:
        return plugin_id == self.owner or plugin_id in self.readers or "*" in self.readers


@dataclass(frozen=True, slots=True)
class ObjectRow:
    ko_id: str
    kb_id: str
    source_id: str
    document_id: str
    plugin_id: str
    source_type: str
    title: str
    source_url: str | None
    content_hash: str
    attributes: dict[str, Any] = field(default_factory=dict)
    extraction: dict[str, Any] = field(default_factory=dict)
    word_count: int = 0
    character_count: int = 0
    chunk_count: int = 0
    created_at: float = 0.0
    updated_at: float = 0.0


@dataclass(frozen=True, slots=True)
class ChunkRow:
    ko_id: str
    index: int
    text: str
    vector: bytes
    embedder: str


class KbRepository(Protocol):
    def claim(self, kb_id: str, owner: str, at: float) -> KbInfo:
        """The knowledge base, made and owned by ``owner`` when it did not exist."""
        ...

    def info(self, kb_id: str) -> KbInfo | None: ...

    def set_readers(self, kb_id: str, readers: Sequence[str]) -> bool: ...

    def find(self, kb_id: str, source_id: str) -> ObjectRow | None: ...

    def get(self, kb_id: str, ko_id: str) -> ObjectRow | None: ...

    def objects(self, kb_id: str) -> list[ObjectRow]: ...

    def chunks(self, kb_id: str, ko_id: str | None = None) -> list[ChunkRow]: ...

    def replace(self, row: ObjectRow, chunks: Sequence[ChunkRow]) -> None:
        """Upsert ``row`` by ``(kb_id, source_id)`` with exactly ``chunks``, atomically."""
        ...

    def delete(self, kb_id: str, ko_id: str) -> bool: ...


def _order(row: ObjectRow) -> tuple[float, str]:
    return (row.created_at, row.ko_id)


_OBJECT = (
    "ko_id, kb_id, source_id, document_id, plugin_id, source_type, title, source_url, "
    "content_hash, attributes, extraction, word_count, character_count, chunk_count, "
    "created_at, updated_at"
)
_OBJECT_VALUES = ", ".join(f":{c.strip()}" for c in _OBJECT.split(","))


class SqlKbRepository:
    def __init__(self, store: Store) -> None:
        self._db: RawDb = raw_db(store)

    def claim(self, kb_id: str, owner: str, at: float) -> KbInfo:
        with self._db.write() as tx:
            tx.execute(
                "INSERT INTO kbs (kb_id, owner, readers, created_at) VALUES (:k, :o, :r, :at) "
                "ON CONFLICT (kb_id) DO NOTHING",
                {"k": kb_id, "o": owner, "r": json_in([]), "at": at},
            )
            found = tx.one(
                "SELECT kb_id, owner, readers, created_at FROM kbs WHERE kb_id = :k", {"k": kb_id}
            )
        assert found is not None
        return _info(found)

    def info(self, kb_id: str) -> KbInfo | None:
        with self._db.read() as tx:
            found = tx.one(
                "SELECT kb_id, owner, readers, created_at FROM kbs WHERE kb_id = :k", {"k": kb_id}
            )
        return _info(found) if found is not None else None

    def set_readers(self, kb_id: str, readers: Sequence[str]) -> bool:
        with self._db.write() as tx:
            changed = tx.execute(
                "UPDATE kbs SET readers = :r WHERE kb_id = :k",
                {"k": kb_id, "r": json_in(list(readers))},
            )
        return changed == 1

    def find(self, kb_id: str, source_id: str) -> ObjectRow | None:
        return self._one("kb_id = :k AND source_id = :s", {"k": kb_id, "s": source_id})

    def get(self, kb_id: str, ko_id: str) -> ObjectRow | None:
        return self._one("kb_id = :k AND ko_id = :o", {"k": kb_id, "o": ko_id})

    def objects(self, kb_id: str) -> list[ObjectRow]:
        with self._db.read() as tx:
            rows = tx.all(
                f"SELECT {_OBJECT} FROM kb_objects WHERE kb_id = :k ORDER BY created_at, ko_id",
                {"k": kb_id},
            )
        return [_object(r) for r in rows]

    def chunks(self, kb_id: str, ko_id: str | None = None) -> list[ChunkRow]:
        where = "kb_id = :k" + (" AND ko_id = :o" if ko_id is not None else "")
        with self._db.read() as tx:
            rows = tx.all(
                f"SELECT ko_id, idx, text, vector, embedder FROM kb_chunks WHERE {where} "
                "ORDER BY ko_id, idx",
                {"k": kb_id, "o": ko_id},
            )
        return [ChunkRow(k, i, t, bytes(v), e) for k, i, t, v, e in rows]

    def replace(self, row: ObjectRow, chunks: Sequence[ChunkRow]) -> None:
        values: dict[str, Any] = {
            "ko_id": row.ko_id,
            "kb_id": row.kb_id,
            "source_id": row.source_id,
            "document_id": row.document_id,
            "plugin_id": row.plugin_id,
            "source_type": row.source_type,
            "title": row.title,
            "source_url": row.source_url,
            "content_hash": row.content_hash,
            "attributes": json_in(row.attributes),
            "extraction": json_in(row.extraction),
            "word_count": row.word_count,
            "character_count": row.character_count,
            "chunk_count": row.chunk_count,
            "created_at": row.created_at,
            "updated_at": row.updated_at,
        }
        key = {"k": row.kb_id, "s": row.source_id}
        with self._db.write() as tx:
            tx.execute(
                "DELETE FROM kb_chunks WHERE kb_id = :k AND ko_id IN "
                "(SELECT ko_id FROM kb_objects WHERE kb_id = :k AND source_id = :s)",
                key,
            )
            tx.execute("DELETE FROM kb_objects WHERE kb_id = :k AND source_id = :s", key)
            tx.execute(f"INSERT INTO kb_objects ({_OBJECT}) VALUES ({_OBJECT_VALUES})", values)
            if chunks:
                tx.execute_many(
                    "INSERT INTO kb_chunks (ko_id, idx, kb_id, text, vector, embedder) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [(c.ko_id, c.index, row.kb_id, c.text, c.vector, c.embedder) for c in chunks],
                )

    def delete(self, kb_id: str, ko_id: str) -> bool:
        key = {"k": kb_id, "o": ko_id}
        with self._db.write() as tx:
            tx.execute("DELETE FROM kb_chunks WHERE kb_id = :k AND ko_id = :o", key)
            gone = tx.execute("DELETE FROM kb_objects WHERE kb_id = :k AND ko_id = :o", key)
        return gone == 1

    def _one(self, where: str, params: dict[str, Any]) -> ObjectRow | None:
        with self._db.read() as tx:
            found = tx.one(f"SELECT {_OBJECT} FROM kb_objects WHERE {where}", params)
        return _object(found) if found is not None else None


def _info(found: tuple[Any, ...]) -> KbInfo:
    kb_id, owner, readers, created = found
    return KbInfo(kb_id, owner, tuple(json_out(readers) or ()), float(created))


def _object(found: tuple[Any, ...]) -> ObjectRow:
    (
        ko,
        kb,
        source,
        document,
        plugin,
        source_type,
        title,
        url,
        digest,
        attributes,
        extraction,
        words,
        characters,
        count,
        created,
        updated,
    ) = found
    return ObjectRow(
        ko,
        kb,
        source,
        document,
        plugin,
        source_type,
        title,
        url,
        digest,
        json_out(attributes) or {},
        json_out(extraction) or {},
        int(words),
        int(characters),
        int(count),
        float(created),
        float(updated),
    )
