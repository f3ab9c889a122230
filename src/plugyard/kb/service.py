"""The knowledge base: ingestion as Shu's ``host.kb`` describes it, for one plugin at a
time (the host objects in :mod:`plugyard.kb.host` scope it).

Every ingestion is an upsert keyed by ``(kb_id, source_id)``:

1. the plugin must own the knowledge base (the first writer becomes its owner; an
   operator may name another): otherwise ``kb_access_denied``;
2. the content hash (a document's bytes, a text's title and body) is compared with the
   stored one: unchanged content with the same embedder is not extracted or embedded
   again (``unchanged: true``; changed attributes are still saved);
3. the text is extracted (documents, under the call's OCR mode and the extraction
   budgets, in a caged worker process: :mod:`plugyard.kb.cage`), chunked and embedded —
   all before anything is written; an empty text is ``empty_extraction``, a text over
   the ``text_chars`` budget ``document_too_complex``;
4. the object and all its chunks replace the old ones in one transaction — unless the
   caller gave up meanwhile (its :class:`~plugyard.kb.cage.Cancel` token): then the
   worker is killed, embedding stops at its next batch, and nothing is written.

The envelope: ``ko_id`` (deterministic from plugin, knowledge base and source id),
``document_id``, ``word_count``, ``character_count``, ``chunk_count``, ``extraction``
(method, engine, confidence, duration, details) and ``unchanged``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from plugyard.kb.budgets import Budgets, check
from plugyard.kb.cancel import Cancel
from plugyard.kb.chunking import chunks
from plugyard.kb.errors import KnowledgeError
from plugyard.kb.extraction import Extraction
from plugyard.kb.records import Record, check_id, digest
from plugyard.store.kb import ChunkRow, KbInfo, KbRepository, ObjectRow

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
MAX_TEXT_CHARS = 16 * 1024 * 1024
#: Chunks embedded at a time: a cancelled ingestion stops after the batch in hand.
EMBED_BATCH = 32


class Extractor(Protocol):
    """A document's text under budgets: in-process (``TextExtractor``) or caged."""

    @property
    def budgets(self) -> Budgets: ...

    def extract(
        self,
        data: bytes,
        filename: str | None,
        mime_type: str | None,
        mode: str | None = None,
        cancel: Cancel | None = None,
    ) -> Extraction: ...


class Embedder(Protocol):
    """What the knowledge base needs of discovery's embedder."""

    @property
    def identity(self) -> str: ...

    def embed(self, texts: list[str]) -> NDArray[np.float32]: ...


def ko_id(plugin_id: str, kb_id: str, source_id: str) -> str:
    return "ko_" + digest("ko", plugin_id, kb_id, source_id)[:40]


def document_id(kb_id: str, source_id: str) -> str:
    return "doc_" + digest("document", kb_id, source_id)[:40]


class KnowledgeBase:
    def __init__(
        self,
        repository: KbRepository,
        embedder: Callable[[], Embedder],
        extractor: Extractor,
        *,
        max_document_bytes: int = MAX_DOCUMENT_BYTES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.repository = repository
        self._embedder = embedder
        self.extractor = extractor
        self.max_document_bytes = max_document_bytes
        self._clock = clock

    @property
    def embedder(self) -> Embedder:
        return self._embedder()

    def close(self) -> None:
        """Stop the extractor's worker processes, if it has any."""
        close = getattr(self.extractor, "close", None)
        if callable(close):
            close()

    # ------------------------------------------------------------------ ownership

    def writable(self, kb_id: str, plugin_id: str) -> KbInfo:
        check_id(kb_id, "kb_id")
        info = self.repository.info(kb_id) or self.repository.claim(kb_id, plugin_id, self._clock())
        if info.owner != plugin_id:
            raise KnowledgeError(
                f"the knowledge base {kb_id!r} belongs to another plugin",
                code="kb_access_denied",
                kb_id=kb_id,
            )
        return info

    def readable(self, kb_id: str, plugin_id: str | None) -> KbInfo:
        """``plugin_id`` ``None`` is the application itself (an admin, a flow)."""
        info = self.repository.info(check_id(kb_id, "kb_id"))
        if info is None or (plugin_id is not None and not info.readable_by(plugin_id)):
            raise KnowledgeError(
                f"no knowledge base {kb_id!r} this plugin may read",
                code="kb_access_denied",
                kb_id=kb_id,
            )
        return info

    def create(self, kb_id: str, owner: str, readers: tuple[str, ...] = ()) -> KbInfo:
        """An operator makes a knowledge base for ``owner`` (and shares it)."""
        info = self.repository.claim(check_id(kb_id, "kb_id"), owner, self._clock())
        if readers:
            self.repository.set_readers(kb_id, readers)
        return self.repository.info(kb_id) or info

    # ------------------------------------------------------------------ ingestion

    def ingest_document(
        self,
        plugin_id: str,
        kb_id: str,
        *,
        file_bytes: bytes,
        filename: str | None,
        mime_type: str | None,
        source_id: str,
        source_url: str | None,
        attributes: dict[str, Any],
        ocr_mode: str | None,
        cancel: Cancel | None = None,
    ) -> dict[str, Any]:
        if not isinstance(file_bytes, bytes | bytearray | memoryview):
            raise KnowledgeError("file_bytes must be bytes", code="invalid_request")
        size = len(file_bytes)
        if size > self.max_document_bytes:
            raise KnowledgeError(
                f"the document is {size} bytes; at most {self.max_document_bytes}",
                code="document_too_large",
                size=size,
                max=self.max_document_bytes,
            )
        self.writable(kb_id, plugin_id)
        source = check_id(source_id, "source_id")
        data = bytes(file_bytes)
        url = source_url or attributes.get("source_url")
        content_hash = digest("document", data, ocr_mode or "auto")
        unchanged = self._unchanged(
            plugin_id, kb_id, source, content_hash, filename or "", url, attributes
        )
        if unchanged is not None:
            return unchanged
        extraction = self.extractor.extract(data, filename, mime_type, ocr_mode, cancel)
        title = filename or extraction.details.get("title") or source
        record = Record(
            "document",
            source,
            str(title),
            extraction.text,
            content_hash,
            url if isinstance(url, str) else None,
            attributes,
        )
        return self._store(plugin_id, kb_id, record, extraction, cancel)

    def ingest_record(
        self, plugin_id: str, kb_id: str, record: Record, cancel: Cancel | None = None
    ) -> dict[str, Any]:
        if len(record.text) > MAX_TEXT_CHARS:
            raise KnowledgeError(
                f"the text is longer than {MAX_TEXT_CHARS} characters",
                code="document_too_large",
                size=len(record.text),
            )
        self.writable(kb_id, plugin_id)
        unchanged = self._unchanged(
            plugin_id,
            kb_id,
            record.source_id,
            record.content_hash,
            record.title,
            record.source_url,
            record.attributes,
        )
        if unchanged is not None:
            return unchanged
        extraction = Extraction(record.text, "text", "host", 1.0, 0.0, dict(record.details))
        return self._store(plugin_id, kb_id, record, extraction, cancel)

    # ------------------------------------------------------------------ helpers

    def _unchanged(
        self,
        plugin_id: str,
        kb_id: str,
        source_id: str,
        content_hash: str,
        title: str,
        url: Any,
        attributes: dict[str, Any],
    ) -> dict[str, Any] | None:
        old = self.repository.find(kb_id, source_id)
        if old is None or old.content_hash != content_hash:
            return None
        stored = self.repository.chunks(kb_id, old.ko_id)
        if any(c.embedder != self.embedder.identity for c in stored):
            return None
        new = replace(
            old,
            title=title or old.title,
            attributes=_with_extra(attributes, old),
            source_url=url if isinstance(url, str) else old.source_url,
            plugin_id=plugin_id,
            updated_at=self._clock(),
        )
        if (new.title, new.attributes, new.source_url) != (
            old.title,
            old.attributes,
            old.source_url,
        ):
            self.repository.replace(new, stored)
        return envelope(new, unchanged=True)

    def _store(
        self,
        plugin_id: str,
        kb_id: str,
        record: Record,
        extraction: Extraction,
        cancel: Cancel | None,
    ) -> dict[str, Any]:
        text = extraction.text
        if not text.strip():
            raise KnowledgeError(
                "no text could be extracted",
                code="empty_extraction",
                extraction=extraction.metadata(),
            )
        # Embedding is the host's own CPU: its cost is bounded by the text's length.
        check("text_chars", len(text), self.extractor.budgets.text_chars)
        cancel = cancel or Cancel()
        pieces = chunks(text)
        embedder = self.embedder
        batches = []
        for start in range(0, len(pieces), EMBED_BATCH):
            cancel.check()
            batch = embedder.embed(pieces[start : start + EMBED_BATCH])
            batches.append(np.asarray(batch, dtype="<f4"))
        vectors = np.concatenate(batches) if batches else np.zeros((0, 0), dtype="<f4")
        ident = ko_id(plugin_id, kb_id, record.source_id)
        now = self._clock()
        old = self.repository.find(kb_id, record.source_id)
        meta = extraction.metadata()
        extra = record.attributes.get("extraction_metadata")
        if isinstance(extra, dict):
            meta["details"] = {**extra, **meta["details"]}
        row = ObjectRow(
            ko_id=ident,
            kb_id=kb_id,
            source_id=record.source_id,
            document_id=document_id(kb_id, record.source_id),
            plugin_id=plugin_id,
            source_type=f"plugin:{plugin_id}",
            title=record.title or record.source_id,
            source_url=record.source_url,
            content_hash=record.content_hash,
            attributes=record.attributes,
            extraction=meta,
            word_count=len(text.split()),
            character_count=len(text),
            chunk_count=len(pieces),
            created_at=old.created_at if old is not None else now,
            updated_at=now,
        )
        rows = [
            ChunkRow(ident, i, piece, vectors[i].tobytes(), embedder.identity)
            for i, piece in enumerate(pieces)
        ]
        cancel.commit()
        self.repository.replace(row, rows)
        return envelope(row, unchanged=False)


def _with_extra(attributes: dict[str, Any], old: ObjectRow) -> dict[str, Any]:
    return attributes if attributes else old.attributes


def envelope(row: ObjectRow, *, unchanged: bool) -> dict[str, Any]:
    return {
        "ko_id": row.ko_id,
        "document_id": row.document_id,
        "kb_id": row.kb_id,
        "source_id": row.source_id,
        "word_count": row.word_count,
        "character_count": row.character_count,
        "chunk_count": row.chunk_count,
        "extraction": dict(row.extraction),
        "unchanged": unchanged,
    }
