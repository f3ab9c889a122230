"""Documents are read in worker processes: the host gets text or a code, never the bill.
A worker stopped by its memory, CPU or wall limit answers ``document_too_complex``; a
caller that gives up has the worker (and its Tesseract) killed; the pool carries on."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plugyard.kb.budgets import Budgets, CageLimits
from plugyard.kb.cage import Cage, CagedExtractor
from plugyard.kb.cancel import Cancel
from plugyard.kb.errors import KnowledgeError
from plugyard.kb.ocr import TesseractEngine
from plugyard.kb.service import KnowledgeBase
from plugyard.store.kb import SqlKbRepository
from plugyard.store.store import Store

from .conftest import EMBEDDER
from .documents import docx_bytes, page_pdf, page_tree_pdf, pgm, png_header, raw_docx, text_pdf
from .processes import HangingOcr, ends

#: Budgets out of the way, to reach the worker's own limits.
UNBUDGETED = Budgets(10**9, 10**12, 10**12, 10**12, 10**12, 10**12)


@pytest.fixture
def caged() -> Iterator[CagedExtractor]:
    extractor = CagedExtractor(Cage(CageLimits(workers=1)))
    yield extractor
    extractor.close()


def test_ordinary_documents_are_read_in_the_worker(caged: CagedExtractor) -> None:
    assert caged.extract(text_pdf("Quarterly report"), "r.pdf", None).text == "Quarterly report"
    assert caged.extract(docx_bytes("Alpha", "Beta"), "d.docx", None).text == "Alpha\nBeta"
    found = caged.extract(b"<p>One</p><p>Two</p>", "p.html", None)
    assert (found.text, found.method, found.engine) == ("One\nTwo", "html", "selectolax")
    assert len(caged.cage.pids) == 1  # one worker, reused
    assert caged.cage.pids[0] != os.getpid()


def test_hostile_documents_are_refused_by_the_worker_with_their_budget(
    caged: CagedExtractor,
) -> None:
    for data, name, budget in (
        (page_tree_pdf(6, 10), "tree.pdf", "pages"),
        (png_header(20_000, 20_000), "blank.png", "image_pixels"),
    ):
        with pytest.raises(KnowledgeError) as caught:
            caged.extract(data, name, None)
        assert caught.value.code == "document_too_complex"
        assert caught.value.details["budget"] == budget
    small = CagedExtractor(caged.cage, Budgets(xml_nodes=1_000))
    with pytest.raises(KnowledgeError) as nodes:
        small.extract(raw_docx(2_000), "t.docx", None)
    assert nodes.value.details["budget"] == "xml_nodes"
    assert nodes.value.details["limit"] == 1_000


def test_a_worker_out_of_memory_is_document_too_complex_and_replaced() -> None:
    never_reached = {"engine": "tesseract", "binary": "/bin/true"}
    cage = Cage(CageLimits(memory_mb=300, workers=1), ocr=never_reached)
    extractor = CagedExtractor(cage, UNBUDGETED)
    try:
        # A 10,000-pt page rendered at 144 dpi for OCR: 400 million pixels, more than a
        # 300 MB address space holds.
        with pytest.raises(KnowledgeError) as caught:
            extractor.extract(page_pdf(box="0 0 10000 10000"), "huge.pdf", None)
        assert caught.value.code == "document_too_complex"
        assert caught.value.details["budget"] == "memory_bytes"
        assert caught.value.details["limit"] == 300 * 1024 * 1024
        assert extractor.extract(text_pdf("after"), "a.pdf", None).text == "after"
    finally:
        extractor.close()


def test_a_worker_stopped_by_its_cpu_limit_is_document_too_complex() -> None:
    extractor = CagedExtractor(Cage(CageLimits(cpu_s=1, workers=1)), UNBUDGETED)
    try:
        with pytest.raises(KnowledgeError) as caught:
            extractor.extract(raw_docx(150_000), "t.docx", None)
        assert caught.value.code == "document_too_complex"
        assert caught.value.details["budget"] == "cpu_seconds"
        assert caught.value.details["limit"] == 1
        assert extractor.extract(docx_bytes("after"), "a.docx", None).text == "after"
    finally:
        extractor.close()


def test_the_wall_deadline_kills_the_worker_and_its_ocr(tmp_path: Path) -> None:
    ocr = HangingOcr(tmp_path)
    extractor = CagedExtractor(Cage(CageLimits(wall_s=2, workers=1), ocr=ocr.spec))
    try:
        assert extractor.extract(b"warm", "a.txt", None).text == "warm"  # a worker ready
        with pytest.raises(KnowledgeError) as caught:
            extractor.extract(png_header(40, 20), "scan.png", None)
        assert caught.value.code == "document_too_complex"
        assert caught.value.details == {"budget": "wall_seconds", "value": None, "limit": 2}
        assert ends(ocr.pid())
        assert extractor.extract(b"still here", "a.txt", None).text == "still here"
    finally:
        extractor.close()


def test_a_cancelled_ingestion_kills_its_worker_and_stores_nothing(tmp_path: Path) -> None:
    ocr = HangingOcr(tmp_path)
    extractor = CagedExtractor(Cage(CageLimits(workers=1), ocr=ocr.spec))
    kb = KnowledgeBase(SqlKbRepository(Store.open(":memory:")), lambda: EMBEDDER, extractor)
    cancel = Cancel()
    outcome: list[Any] = []

    def ingest() -> None:
        try:
            outcome.append(kb.ingest_document(
                "drive", "team", file_bytes=pgm("Hello"), filename="scan.pgm", mime_type=None,
                source_id="scan", source_url=None, attributes={}, ocr_mode=None, cancel=cancel,
            ))  # fmt: skip
        except KnowledgeError as exc:
            outcome.append(exc)
        finally:  # an ingestion that never reached OCR must not leave the test waiting
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    worker = threading.Thread(target=ingest)
    fifo = tmp_path / "started"
    os.mkfifo(fifo)
    ocr.binary.write_text(f"#!/bin/sh\necho $$ > {fifo}\nexec sleep 600\n")
    worker.start()
    try:
        engine = int(fifo.read_text() or 0)  # blocks until the OCR runs (or never will)
        assert engine, f"the OCR never started: {outcome}"
        assert cancel.cancel() is True
        worker.join()
        assert isinstance(outcome[0], KnowledgeError) and outcome[0].code == "cancelled"
        assert ends(engine)
        assert kb.repository.find("team", "scan") is None
        done = kb.ingest_document(
            "drive", "team", file_bytes=b"next one", filename="n.txt", mime_type=None,
            source_id="next", source_url=None, attributes={}, ocr_mode=None,
        )  # fmt: skip
        assert done["chunk_count"] == 1 and kb.repository.find("team", "next") is not None
    finally:
        extractor.close()


def test_tesseract_reads_a_scan_in_the_worker(tesseract: TesseractEngine) -> None:
    extractor = CagedExtractor(Cage(CageLimits(workers=1), ocr=tesseract.spec()))
    try:
        found = extractor.extract(pgm("Invoice number 4711"), "scan.pgm", None)
        assert "4711" in found.text and found.engine == "tesseract"
    finally:
        extractor.close()


def test_a_document_that_finds_every_worker_busy_times_out_without_blame(
    tmp_path: Path,
) -> None:
    ocr = HangingOcr(tmp_path)
    fifo = tmp_path / "started"
    os.mkfifo(fifo)
    ocr.binary.write_text(f"#!/bin/sh\necho $$ > {fifo}\nexec sleep 600\n")
    extractor = CagedExtractor(Cage(CageLimits(wall_s=1, workers=1), ocr=ocr.spec))
    outcomes: list[str] = []

    def scan() -> None:
        try:
            extractor.extract(png_header(40, 20), "scan.png", None)
        except KnowledgeError as exc:
            outcomes.append(f"{exc.code}:{exc.details.get('budget') or exc.details['reason']}")
        finally:  # whoever waits on the FIFO is let go
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    try:
        assert extractor.extract(b"warm", "a.txt", None).text == "warm"  # a worker ready
        holder = threading.Thread(target=scan)
        holder.start()
        assert int(fifo.read_text() or 0), f"the OCR never started: {outcomes}"
        # Two more while the only worker is held: one gets it when the holder's wall
        # deadline kills it, and holds it past the other's wait.
        queued = [threading.Thread(target=scan) for _ in range(2)]
        for thread in queued:
            thread.start()
        for thread in (holder, *queued):
            thread.join()
        assert sorted(outcomes) == [
            "document_too_complex:wall_seconds",
            "document_too_complex:wall_seconds",
            "timeout:workers_busy",
        ]
    finally:
        extractor.close()
