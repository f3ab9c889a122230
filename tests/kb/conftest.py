"""A knowledge base over a memory repository or a store (SQLite and PostgreSQL), with
the hashing embedder and a scripted OCR engine unless a test asks for Tesseract."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from plugyard.discovery.embedders import HashingEmbedder
from plugyard.kb.extraction import TextExtractor
from plugyard.kb.ocr import ScriptedOcrEngine, TesseractEngine
from plugyard.kb.service import KnowledgeBase
from plugyard.store.kb import SqlKbRepository
from plugyard.store.store import Store
from store.conftest import backend_url

EMBEDDER = HashingEmbedder(dim=128)


def knowledge(repository: object, ocr: object | None = None) -> KnowledgeBase:
    engine = ocr if ocr is not None else ScriptedOcrEngine()
    return KnowledgeBase(repository, lambda: EMBEDDER, TextExtractor(engine))  # type: ignore[arg-type]


@pytest.fixture(params=["sqlite in memory", "sqlite", "postgresql"])
def kb(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KnowledgeBase]:
    memory = request.param == "sqlite in memory"
    for url in [":memory:"] if memory else backend_url(request, request.param, tmp_path):
        store = Store.open(url)
        try:
            yield knowledge(SqlKbRepository(store))
        finally:
            store.close()


@pytest.fixture
def tesseract() -> TesseractEngine:
    engine = TesseractEngine()
    if not engine.available():
        # scripts/setup.sh installs Debian's tesseract-ocr; only where apt cannot run
        # (not CI, which runs setup.sh) is it missing.
        pytest.skip("tesseract is not installed here (scripts/setup.sh installs it)")
    assert shutil.which("tesseract")
    return engine
