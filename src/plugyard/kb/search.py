"""Reading the knowledge base: ranked chunks for a text, and one knowledge object.

``search`` embeds the query with the embedder the chunks were made with, scores every
chunk of the knowledge base that passes the filters by cosine, and pages the ranking with
an opaque cursor (bound to the query: a cursor of another query is ``invalid_request``).
Filters match a knowledge object's ``source_type``, ``source_id``, ``ko_id``,
``plugin_id`` or, for any other key, its attributes; a list value matches any of its
items. Exact search over the knowledge base's rows (DESIGN.md §10: 10k rows ≈ 1 ms).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from plugyard.kb.errors import KnowledgeError
from plugyard.kb.records import digest
from plugyard.kb.service import KnowledgeBase
from plugyard.store.kb import ObjectRow

MAX_K = 100
MAX_RANKED = 1000
_FIELDS = ("source_type", "source_id", "ko_id", "plugin_id", "document_id")


def search(
    kb: KnowledgeBase,
    reader: str | None,
    kb_id: str,
    text: str,
    *,
    k: int = 10,
    filters: Mapping[str, Any] | None = None,
    cursor: str | None = None,
) -> dict[str, Any]:
    if not isinstance(text, str) or not text.strip():
        raise KnowledgeError("the query text is empty", code="invalid_request")
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
        raise KnowledgeError(f"k is 1 to {MAX_K}", code="invalid_request")
    if filters is not None and not isinstance(filters, Mapping):
        raise KnowledgeError("filters must be a mapping", code="invalid_request")
    kb.readable(kb_id, reader)
    binding = digest("query", kb_id, text, sorted((filters or {}).items(), key=str), k)[:16]
    offset = _offset(cursor, binding)
    objects = {
        row.ko_id: row for row in kb.repository.objects(kb_id) if _matches(row, filters or {})
    }
    rows = [c for c in kb.repository.chunks(kb_id) if c.ko_id in objects]
    embedder = kb.embedder
    rows = [c for c in rows if c.embedder == embedder.identity]
    if not rows:
        return {"results": [], "next_cursor": None}
    query = np.asarray(embedder.embed([text])[0], dtype=np.float32)
    matrix = np.frombuffer(b"".join(c.vector for c in rows), dtype="<f4").reshape(len(rows), -1)
    scores = matrix @ query
    order = np.argsort(-scores, kind="stable")[:MAX_RANKED]
    page = order[offset : offset + k]
    results = []
    for i in page:
        chunk, row = rows[int(i)], objects[rows[int(i)].ko_id]
        results.append(
            {
                "ko_id": row.ko_id,
                "document_id": row.document_id,
                "title": row.title,
                "text": chunk.text,
                "score": round(float(scores[int(i)]), 6),
                "chunk_index": chunk.index,
                "source": source_of(row),
            }
        )
    more = offset + k < len(order)
    return {"results": results, "next_cursor": _cursor(offset + k, binding) if more else None}


def get(kb: KnowledgeBase, reader: str | None, kb_id: str, ko_id: str) -> dict[str, Any] | None:
    kb.readable(kb_id, reader)
    row = kb.repository.get(kb_id, ko_id)
    if row is None:
        return None
    text = "".join(c.text for c in kb.repository.chunks(kb_id, ko_id))
    return {
        "ko_id": row.ko_id,
        "document_id": row.document_id,
        "kb_id": row.kb_id,
        "title": row.title,
        "text": text,
        "source": source_of(row),
        "attributes": dict(row.attributes),
        "extraction": dict(row.extraction),
        "word_count": row.word_count,
        "character_count": row.character_count,
        "chunk_count": row.chunk_count,
        "content_hash": row.content_hash,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }


def source_of(row: ObjectRow) -> dict[str, Any]:
    """The lineage of a knowledge object: where it came from, and through which plugin."""
    details = row.extraction.get("details") or {}
    out = {
        "source_type": row.source_type,
        "source_id": row.source_id,
        "source_url": row.source_url,
        "plugin_id": row.plugin_id,
    }
    for key in ("message_id", "thread_id"):
        if details.get(key):
            out[key] = details[key]
    return out


def _matches(row: ObjectRow, filters: Mapping[str, Any]) -> bool:
    for key, wanted in filters.items():
        have = getattr(row, key) if key in _FIELDS else row.attributes.get(key)
        options = wanted if isinstance(wanted, list | tuple) else [wanted]
        if have not in options:
            return False
    return True


def _cursor(offset: int, binding: str) -> str:
    raw = json.dumps({"o": offset, "q": binding}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _offset(cursor: str | None, binding: str) -> int:
    if cursor is None:
        return 0
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        found = json.loads(base64.urlsafe_b64decode(padded.encode()))
        offset = found["o"]
        if found["q"] != binding or not isinstance(offset, int) or offset < 0:
            raise ValueError
    except (ValueError, KeyError, TypeError):
        raise KnowledgeError(
            "the cursor is not one of this query's", code="invalid_request"
        ) from None
    return int(offset)
