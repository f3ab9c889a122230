"""The host objects a plugin receives: ``host.kb``, ``host.query`` and ``host.ocr``.

Each is scoped to one plugin (what it writes is ``source_type = "plugin:<id>"`` and only
into knowledge bases it owns; what it reads, only those it may read) and ``host.kb`` to
the OCR mode of the call (``params.__host.ocr.mode``). Their methods are coroutines, as
Shu's are; the work (embeddings, the store) runs in a worker thread so the event loop
keeps serving, and extraction and OCR in the cage's worker processes. When the
coroutine is cancelled — its call's deadline passed — the work is stopped with it: the
worker process is killed, embedding stops, and nothing is written.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from plugyard.kb import search as reading
from plugyard.kb.cancel import Cancel
from plugyard.kb.errors import KnowledgeError
from plugyard.kb.records import attributes_of, email_record, text_record
from plugyard.kb.service import KnowledgeBase
from plugyard.store.kb import ObjectRow

#: Shu's page size of field searches.
PAGE_SIZE = 20
_OPERATORS = ("eq", "contains", "icontains", "has_key", "has_any")

_T = TypeVar("_T")


async def stoppable(
    work: Callable[[Cancel], _T], track: Callable[[Cancel], None] | None = None
) -> _T:
    """``work`` in a thread, stopped through its token if this coroutine is cancelled.
    ``track`` is shown the token first: the call's effects ledger, which stops the work
    when the call ends and learns from the token whether its write went ahead."""
    cancel = Cancel()
    if track is not None:
        track(cancel)
    try:
        return await asyncio.to_thread(work, cancel)
    except asyncio.CancelledError:
        cancel.cancel()
        raise


class KbHost:
    """``host.kb``: Shu's ingestion calls, and Shu's field searches over the knowledge
    bases the call is bound to (``params.__host.kb.knowledge_base_ids``, as Shu binds
    them) — each still only if this plugin may read it."""

    def __init__(
        self,
        kb: KnowledgeBase,
        plugin_id: str,
        ocr_mode: str | None = None,
        bound: tuple[str, ...] = (),
        track: Callable[[Cancel], None] | None = None,
    ) -> None:
        self._kb, self._plugin, self.ocr_mode, self._bound = kb, plugin_id, ocr_mode, bound
        self._track = track

    def with_mode(self, ocr_mode: str | None, bound: tuple[str, ...] = ()) -> KbHost:
        return KbHost(self._kb, self._plugin, ocr_mode, bound, self._track)

    def with_effects(self, track: Callable[[Cancel], None]) -> KbHost:
        """The same host for one call, whose ingestions ``track`` is shown."""
        return KbHost(self._kb, self._plugin, self.ocr_mode, self._bound, track)

    async def upsert_knowledge_object(self, knowledge_base_id: str, ko: Mapping[str, Any]) -> str:
        """Shu's knowledge object (``type``, ``external_id``, ``title``, ``content``,
        ``attributes``) stored as a text record; its ``ko_id``."""
        if not isinstance(ko, Mapping):
            raise KnowledgeError("the knowledge object is a mapping", code="invalid_request")
        attributes = dict(attributes_of(ko.get("attributes")))
        if isinstance(ko.get("type"), str):
            attributes.setdefault("type", ko["type"])
        record = text_record(
            "text", ko.get("external_id"), ko.get("title"), ko.get("content"),
            ko.get("source_url"), attributes,
        )  # fmt: skip
        done = await stoppable(
            lambda cancel: self._kb.ingest_record(self._plugin, knowledge_base_id, record, cancel),
            self._track,
        )
        return str(done["ko_id"])

    async def search_chunks(
        self,
        field: str,
        operator: str,
        value: Any,
        page: int = 1,
        sort_order: str = "asc",
    ) -> dict[str, Any]:
        """Shu's field search over chunks (``content``, or an attribute of the object)."""
        return await asyncio.to_thread(
            self._field_search, "chunks", field, operator, value, page, sort_order
        )

    async def search_documents(
        self,
        field: str,
        operator: str,
        value: Any,
        page: int = 1,
        sort_order: str = "asc",
    ) -> dict[str, Any]:
        """Shu's field search over documents (``title``, ``content``, or an attribute)."""
        return await asyncio.to_thread(
            self._field_search, "documents", field, operator, value, page, sort_order
        )

    async def get_document(self, document_id: str) -> dict[str, Any] | None:
        """One document of the bound knowledge bases, by its ``document_id``."""
        if not self._bound:
            return _unbound()
        for kb_id in self._bound:
            self._kb.readable(kb_id, self._plugin)
            for row in self._kb.repository.objects(kb_id):
                if row.document_id == document_id:
                    return await asyncio.to_thread(
                        reading.get, self._kb, self._plugin, kb_id, row.ko_id
                    )
        return None

    def _field_search(
        self, kind: str, field: str, operator: str, value: Any, page: int, order: str
    ) -> dict[str, Any]:
        if not self._bound:
            return _unbound()
        if operator not in _OPERATORS:
            message = f"the operator is one of {', '.join(_OPERATORS)}"
            raise KnowledgeError(message, code="invalid_request", field="operator")
        found: list[tuple[Any, dict[str, Any]]] = []
        for kb_id in self._bound:
            self._kb.readable(kb_id, self._plugin)
            rows = self._kb.repository.objects(kb_id)
            if kind == "documents":
                for row in rows:
                    text = "".join(c.text for c in self._kb.repository.chunks(kb_id, row.ko_id))
                    fields = {"title": row.title, "content": text}
                    have = fields.get(field, row.attributes.get(field))
                    if _holds(have, operator, value):
                        found.append((have, _document(row)))
                continue
            objects = {row.ko_id: row for row in rows}
            for chunk in self._kb.repository.chunks(kb_id):
                owner = objects.get(chunk.ko_id)
                if owner is None:
                    continue
                have = chunk.text if field == "content" else owner.attributes.get(field)
                if _holds(have, operator, value):
                    found.append((have, {**_document(owner), "chunk_index": chunk.index,
                                         "content": chunk.text}))  # fmt: skip
        found.sort(key=lambda item: str(item[0]), reverse=str(order).lower() == "desc")
        page = max(int(page), 1)
        window = found[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        return {
            "results": [item for _, item in window],
            "total_results": len(found),
            "page": page,
            "page_size": PAGE_SIZE,
        }

    async def ingest_document(
        self,
        kb_id: str,
        *,
        file_bytes: bytes,
        filename: str | None = None,
        mime_type: str | None = None,
        source_id: str,
        source_url: str | None = None,
        attributes: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        attrs = attributes_of(attributes)
        return await stoppable(
            lambda cancel: self._kb.ingest_document(
                self._plugin,
                kb_id,
                file_bytes=file_bytes,
                filename=filename,
                mime_type=mime_type,
                source_id=source_id,
                source_url=source_url,
                attributes=attrs,
                ocr_mode=self.ocr_mode,
                cancel=cancel,
            ),
            self._track,
        )

    async def ingest_email(
        self,
        kb_id: str,
        subject: str | None = None,
        sender: str | None = None,
        recipients: Any = None,
        date: str | None = None,
        message_id: str | None = None,
        thread_id: str | None = None,
        body_text: str | None = None,
        labels: Any = None,
        *,
        body_html: str | None = None,
        source_url: str | None = None,
        attributes: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        nodes = self._kb.extractor.budgets.xml_nodes

        def ingest(cancel: Cancel) -> dict[str, Any]:
            record = email_record(  # its HTML body is parsed here, off the event loop
                subject=subject,
                sender=sender,
                recipients=recipients,
                date=date,
                message_id=message_id,
                thread_id=thread_id,
                body_text=body_text,
                body_html=body_html,
                labels=labels,
                source_url=source_url,
                attributes=attributes,
                max_nodes=nodes,
            )
            return self._kb.ingest_record(self._plugin, kb_id, record, cancel)

        return await stoppable(ingest, self._track)

    async def ingest_thread(
        self,
        kb_id: str,
        *,
        title: str,
        content: str,
        thread_id: str,
        source_url: str | None = None,
        attributes: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        record = text_record(
            "thread", thread_id, title, content, source_url, attributes, thread_id=thread_id
        )
        return await stoppable(
            lambda cancel: self._kb.ingest_record(self._plugin, kb_id, record, cancel),
            self._track,
        )

    async def ingest_text(
        self,
        kb_id: str,
        *,
        title: str,
        content: str,
        source_id: str,
        source_url: str | None = None,
        attributes: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        record = text_record("text", source_id, title, content, source_url, attributes)
        return await stoppable(
            lambda cancel: self._kb.ingest_record(self._plugin, kb_id, record, cancel),
            self._track,
        )

    async def ingest(self, kb_id: str, **fields: Any) -> dict[str, Any]:
        """Routed by the fields given: ``file_bytes`` → document, ``message_id`` →
        e-mail, ``thread_id`` with ``content`` → thread, ``content`` → text."""
        if "file_bytes" in fields:
            return await self.ingest_document(kb_id, **fields)
        if "message_id" in fields:
            return await self.ingest_email(kb_id, **fields)
        if "thread_id" in fields and "content" in fields:
            return await self.ingest_thread(kb_id, **fields)
        if "content" in fields:
            return await self.ingest_text(kb_id, **fields)
        raise KnowledgeError(
            "give file_bytes, message_id, thread_id or content", code="invalid_request"
        )


def _unbound() -> dict[str, Any]:
    """Shu's own answer when a search names no knowledge base."""
    message = "No knowledge bases are bound to this execution context."
    return {"status": "error", "error": {"code": "no_knowledge_bases", "message": message}}


def _holds(have: Any, operator: str, value: Any) -> bool:
    if have is None:
        return False
    if operator == "eq":
        return bool(have == value)
    if operator == "has_key":
        return isinstance(have, Mapping) and value in have
    wanted = value if isinstance(value, list) else [value]
    if operator == "has_any":
        return isinstance(have, list) and any(v in have for v in wanted)
    if isinstance(have, list):
        return all(v in have for v in wanted)
    if not isinstance(have, str) or not isinstance(value, str):
        return False
    if operator == "icontains":
        return value.lower() in have.lower()
    return value in have


def _document(row: ObjectRow) -> dict[str, Any]:
    return {
        "document_id": row.document_id,
        "knowledge_base_id": row.kb_id,
        "ko_id": row.ko_id,
        "title": row.title,
        "attributes": dict(row.attributes),
        "word_count": row.word_count,
    }


class QueryHost:
    """``host.query``: search and read the knowledge bases this plugin may read."""

    def __init__(self, kb: KnowledgeBase, plugin_id: str | None) -> None:
        self._kb, self._plugin = kb, plugin_id

    async def search(
        self,
        kb_id: str,
        text: str,
        *,
        k: int = 10,
        filters: Mapping[str, Any] | None = None,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        return await asyncio.to_thread(
            reading.search,
            self._kb,
            self._plugin,
            kb_id,
            text,
            k=k,
            filters=filters,
            cursor=cursor,
        )

    async def get(self, kb_id: str, ko_id: str) -> dict[str, Any] | None:
        return await asyncio.to_thread(reading.get, self._kb, self._plugin, kb_id, ko_id)


class OcrHost:
    """``host.ocr``: direct extraction, with no per-feed policy (mode ``always`` unless
    the caller names one)."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self._kb = kb

    async def extract_text(
        self,
        file_bytes: bytes,
        filename: str | None = None,
        mime_type: str | None = None,
        *,
        mode: str = "always",
    ) -> dict[str, Any]:
        if not isinstance(file_bytes, bytes | bytearray | memoryview):
            raise KnowledgeError("file_bytes must be bytes", code="invalid_request")
        if len(file_bytes) > self._kb.max_document_bytes:
            raise KnowledgeError(
                "the document is too large",
                code="document_too_large",
                size=len(file_bytes),
                max=self._kb.max_document_bytes,
            )
        data = bytes(file_bytes)
        found = await stoppable(
            lambda cancel: self._kb.extractor.extract(data, filename, mime_type, mode, cancel)
        )
        return {"text": found.text, "metadata": found.metadata()}
