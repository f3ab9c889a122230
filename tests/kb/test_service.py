"""Ingestion as host.kb promises it, on memory and on both store backends: the envelope,
upsert by (kb_id, source_id), dedupe by content hash, chunks replaced atomically,
ownership; then search with filters and cursors, and get."""

from __future__ import annotations

from typing import Any

import pytest

from plugyard.kb import search as reading
from plugyard.kb.budgets import Budgets
from plugyard.kb.cancel import Cancel
from plugyard.kb.chunking import chunks
from plugyard.kb.errors import KnowledgeError
from plugyard.kb.extraction import TextExtractor
from plugyard.kb.ocr import ScriptedOcrEngine
from plugyard.kb.records import email_record, text_record
from plugyard.kb.service import KnowledgeBase, ko_id

from .conftest import EMBEDDER
from .documents import encrypted_pdf, page_tree_pdf, text_pdf


def text(kb: KnowledgeBase, source: str, body: str, plugin: str = "drive", **attrs: object) -> dict:
    record = text_record("text", source, f"Title {source}", body, None, attrs)
    return kb.ingest_record(plugin, "team", record)


def test_the_envelope_of_a_document(kb: KnowledgeBase) -> None:
    out = kb.ingest_document(
        "drive",
        "team",
        file_bytes=text_pdf("Shu roadmap", "Ship the KB"),
        filename="r.pdf",
        mime_type="application/pdf",
        source_id="file-1",
        source_url="https://d/1",
        attributes={"modified_at": "2026-01-01T00:00:00Z"},
        ocr_mode=None,
    )
    assert out["ko_id"] == ko_id("drive", "team", "file-1")
    assert out["document_id"].startswith("doc_")
    assert (out["word_count"], out["character_count"], out["chunk_count"]) == (5, 23, 1)
    assert out["extraction"]["method"] == "pdf_text"
    assert set(out["extraction"]) == {"method", "engine", "confidence", "duration", "details"}
    assert out["unchanged"] is False
    got = reading.get(kb, "drive", "team", out["ko_id"])
    assert got is not None and got["text"] == "Shu roadmap\nShip the KB"
    assert got["source"] == {
        "source_type": "plugin:drive",
        "source_id": "file-1",
        "source_url": "https://d/1",
        "plugin_id": "drive",
    }


def test_upsert_by_source_replaces_every_chunk(kb: KnowledgeBase) -> None:
    first = text(kb, "s1", "alpha " * 1000)
    assert first["chunk_count"] > 3
    second = text(kb, "s1", "beta gamma")
    assert second["ko_id"] == first["ko_id"] and second["chunk_count"] == 1
    assert [c.text for c in kb.repository.chunks("team", first["ko_id"])] == ["beta gamma"]
    assert len(kb.repository.objects("team")) == 1


def test_unchanged_content_is_not_embedded_again(kb: KnowledgeBase) -> None:
    first = text(kb, "s1", "the same words")
    again = text(kb, "s1", "the same words")
    assert again["unchanged"] is True and again["ko_id"] == first["ko_id"]
    moved = text(kb, "s1", "the same words", folder="archive")  # attributes still saved
    assert moved["unchanged"] is True
    assert kb.repository.objects("team")[0].attributes == {"folder": "archive"}


def test_a_failed_update_leaves_the_old_version_whole(kb: KnowledgeBase) -> None:
    before = text(kb, "s1", "kept words")
    for bad, code in ((encrypted_pdf(), "document_unreadable"), (b"", "empty_extraction")):
        with pytest.raises(KnowledgeError) as caught:
            kb.ingest_document(
                "drive",
                "team",
                file_bytes=bad,
                filename="x.pdf" if bad else "e.txt",
                mime_type=None,
                source_id="s1",
                source_url=None,
                attributes={},
                ocr_mode=None,
            )
        assert caught.value.code == code
    got = reading.get(kb, "drive", "team", before["ko_id"])
    assert got is not None and got["text"] == "kept words"


def test_too_large_is_refused_before_anything_is_read(kb: KnowledgeBase) -> None:
    kb.max_document_bytes = 1000
    with pytest.raises(KnowledgeError) as caught:
        kb.ingest_document(
            "drive",
            "team",
            file_bytes=b"x" * 1001,
            filename="a.txt",
            mime_type=None,
            source_id="big",
            source_url=None,
            attributes={},
            ocr_mode=None,
        )
    assert caught.value.code == "document_too_large"
    assert kb.repository.info("team") is None


def test_a_kb_belongs_to_its_first_writer(kb: KnowledgeBase) -> None:
    text(kb, "s1", "mine", plugin="drive")
    with pytest.raises(KnowledgeError) as caught:
        text(kb, "s2", "theirs", plugin="intruder")
    assert caught.value.code == "kb_access_denied"
    with pytest.raises(KnowledgeError) as read:
        reading.search(kb, "intruder", "team", "mine")
    assert read.value.code == "kb_access_denied"
    kb.repository.set_readers("team", ["reader"])
    assert reading.search(kb, "reader", "team", "mine")["results"]


def test_email_source_is_the_message_id_or_external_id(kb: KnowledgeBase) -> None:
    mail = email_record(
        subject="Budget",
        sender="a@x",
        recipients={"to": ["b@x"], "cc": ["c@x"]},
        date="2026-01-02",
        message_id="m-1",
        thread_id="t-1",
        body_text=None,
        body_html="<p>Numbers <b>attached</b></p>",
        labels=["INBOX"],
        source_url=None,
        attributes=None,
    )
    out = kb.ingest_record("gmail", "mail", mail)
    got = reading.get(kb, "gmail", "mail", out["ko_id"])
    assert got is not None
    assert got["text"].splitlines()[:3] == ["Subject: Budget", "From: a@x", "To: b@x"]
    assert "Numbers attached" in got["text"]
    assert got["source"]["message_id"] == "m-1" and got["source"]["thread_id"] == "t-1"
    assert got["extraction"]["details"]["labels"] == ["INBOX"]
    other = email_record(
        subject="Budget",
        sender=None,
        recipients=None,
        date=None,
        message_id="m-1",
        thread_id=None,
        body_text="x",
        body_html=None,
        labels=None,
        source_url=None,
        attributes={"external_id": "ext-9"},
    )
    assert kb.ingest_record("gmail", "mail", other)["source_id"] == "ext-9"


def test_search_ranks_filters_and_pages(kb: KnowledgeBase) -> None:
    for n in range(5):
        text(kb, f"doc-{n}", f"invoice payment number {n} " + "filler " * n, kind="bill")
    text(kb, "other", "holiday pictures from the beach", kind="photo")
    first = reading.search(kb, "drive", "team", "invoice payment", k=2, filters={"kind": "bill"})
    assert len(first["results"]) == 2 and first["next_cursor"]
    top = first["results"][0]
    assert set(top) == {"ko_id", "document_id", "title", "text", "score", "chunk_index", "source"}
    assert top["score"] >= first["results"][1]["score"]
    seen = [r["ko_id"] for r in first["results"]]
    cursor = first["next_cursor"]
    while cursor:
        page = reading.search(
            kb, "drive", "team", "invoice payment", k=2, filters={"kind": "bill"}, cursor=cursor
        )
        seen += [r["ko_id"] for r in page["results"]]
        cursor = page["next_cursor"]
    assert len(seen) == len(set(seen)) == 5
    photos = reading.search(kb, "drive", "team", "beach", filters={"kind": ["photo"]})
    assert [r["source"]["source_id"] for r in photos["results"]] == ["other"]
    with pytest.raises(KnowledgeError) as caught:
        reading.search(kb, "drive", "team", "other query", k=2, cursor=first["next_cursor"])
    assert caught.value.code == "invalid_request"


def test_get_of_a_missing_object_is_none(kb: KnowledgeBase) -> None:
    text(kb, "s1", "x")
    assert reading.get(kb, "drive", "team", "ko_missing") is None


def test_chunks_cover_the_text_exactly() -> None:
    body = ("word " * 700 + "\n\n" + "other sentence. " * 200).strip()
    pieces = chunks(body, 500)
    assert "".join(pieces) == body
    assert all(len(p) <= 500 for p in pieces)


def test_an_over_budget_document_is_refused_and_the_old_version_kept(kb: KnowledgeBase) -> None:
    before = text(kb, "s1", "kept words")
    kb.extractor = TextExtractor(ScriptedOcrEngine(), budgets=Budgets(pages=10))
    with pytest.raises(KnowledgeError) as caught:
        kb.ingest_document(
            "drive", "team", file_bytes=page_tree_pdf(2, 10), filename="t.pdf", mime_type=None,
            source_id="s1", source_url=None, attributes={}, ocr_mode=None,
        )  # fmt: skip
    assert caught.value.code == "document_too_complex"
    assert caught.value.details == {"budget": "pages", "value": 100, "limit": 10}
    got = reading.get(kb, "drive", "team", before["ko_id"])
    assert got is not None and got["text"] == "kept words"


def test_a_text_over_the_text_budget_is_refused_before_it_is_embedded(kb: KnowledgeBase) -> None:
    kb.extractor = TextExtractor(ScriptedOcrEngine(), budgets=Budgets(text_chars=100))
    with pytest.raises(KnowledgeError) as caught:
        text(kb, "long", "word " * 100)
    assert caught.value.code == "document_too_complex"
    assert caught.value.details["budget"] == "text_chars"
    assert kb.repository.find("team", "long") is None


class CancellingEmbedder:
    """Embeds like the tests' embedder, but the caller gives up during the first batch."""

    def __init__(self, cancel: Cancel) -> None:
        self.cancel, self.batches = cancel, 0

    @property
    def identity(self) -> str:
        return EMBEDDER.identity

    def embed(self, texts: list[str]) -> Any:
        self.batches += 1
        self.cancel.cancel()
        return EMBEDDER.embed(texts)


def test_an_ingestion_cancelled_while_embedding_stops_and_writes_nothing(
    kb: KnowledgeBase,
) -> None:
    before = text(kb, "s1", "kept words")
    cancel = Cancel()
    embedder = CancellingEmbedder(cancel)
    kb._embedder = lambda: embedder  # type: ignore[assignment]
    record = text_record("text", "s1", "Title s1", "new words " * 2000, None, {})
    with pytest.raises(KnowledgeError) as caught:
        kb.ingest_record("drive", "team", record, cancel)
    assert caught.value.code == "cancelled"
    assert embedder.batches == 1  # stopped at the next batch, not after all of them
    got = reading.get(kb, "drive", "team", before["ko_id"])
    assert got is not None and got["text"] == "kept words"
