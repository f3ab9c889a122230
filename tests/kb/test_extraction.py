"""Text from PDF, HTML, DOCX, plain text and images, under Shu's four OCR modes; bad
documents answer documented codes."""

from __future__ import annotations

import pytest

from plugyard.kb.errors import KnowledgeError
from plugyard.kb.extraction import TextExtractor
from plugyard.kb.ocr import ScriptedOcrEngine, TesseractEngine, parse_tsv

from .documents import docx_bytes, encrypted_pdf, image_pdf, pgm, png_header, text_pdf


def extractor(text: str = "scanned words") -> tuple[TextExtractor, ScriptedOcrEngine]:
    engine = ScriptedOcrEngine(default=text)
    return TextExtractor(engine), engine


def test_pdf_text_layer_is_read_directly_in_auto_mode() -> None:
    ex, engine = extractor()
    found = ex.extract(text_pdf("Quarterly report", "Revenue grew"), "r.pdf", "application/pdf")
    assert found.text == "Quarterly report\nRevenue grew"
    assert (found.method, found.engine, engine.reads) == ("pdf_text", "pdfium", 0)
    assert found.details["pages"] == 1


@pytest.mark.parametrize(
    ("mode", "method", "reads"),
    [
        ("always", "ocr", 1),
        ("auto", "pdf_text", 0),
        ("fallback", "pdf_text", 0),
        ("never", "pdf_text", 0),
    ],
)
def test_ocr_modes_on_a_pdf_with_text(mode: str, method: str, reads: int) -> None:
    ex, engine = extractor()
    found = ex.extract(text_pdf("hello"), "a.pdf", None, mode)
    assert (found.method, engine.reads, found.details["ocr_mode"]) == (method, reads, mode)


@pytest.mark.parametrize(
    ("mode", "text", "reads"),
    [
        ("always", "scanned words", 1),
        ("auto", "scanned words", 1),
        ("fallback", "scanned words", 1),
        ("never", "", 0),
    ],
)
def test_ocr_modes_on_a_scanned_pdf(mode: str, text: str, reads: int) -> None:
    ex, engine = extractor()
    found = ex.extract(image_pdf("hello"), "scan.pdf", "application/pdf", mode)
    assert (found.text, engine.reads) == (text, reads)


def test_images_are_read_by_ocr_unless_mode_is_never() -> None:
    ex, engine = extractor("receipt total 12")
    image = png_header(40, 20)
    assert ex.extract(image, "r.png", "image/png").text == "receipt total 12"
    assert ex.extract(image, "r.png", "image/png", "never").text == ""
    assert engine.reads == 1


def test_html_docx_and_plain_text() -> None:
    ex, engine = extractor()
    html = (
        b"<html><head><title>T</title><style>x{}</style></head><body><p>One</p>"
        b"<script>evil()</script><div>Two</div></body></html>"
    )
    found = ex.extract(html, "p.html", "text/html", "always")
    assert (found.text, found.details["title"], found.method) == ("One\nTwo", "T", "html")
    assert ex.extract(docx_bytes("Alpha", "Beta"), "d.docx", None).text == "Alpha\nBeta"
    assert ex.extract("naïve\r\n".encode(), "n.txt", None).text == "naïve"
    assert engine.reads == 0


@pytest.mark.parametrize(
    ("data", "name", "code", "reason"),
    [
        (encrypted_pdf(), "e.pdf", "document_unreadable", "encrypted"),
        (b"%PDF-1.4 not really", "c.pdf", "document_unreadable", "corrupt"),
        (b"PK\x03\x04broken", "c.docx", "document_unreadable", "corrupt"),
        (b"\x00\x01\x02binary", "blob.bin", "unsupported_format", None),
    ],
)
def test_bad_documents_answer_codes(data: bytes, name: str, code: str, reason: str | None) -> None:
    ex, _ = extractor()
    with pytest.raises(KnowledgeError) as caught:
        ex.extract(data, name, None)
    assert caught.value.code == code
    assert caught.value.details.get("reason") == reason


def test_an_unknown_ocr_mode_is_refused() -> None:
    ex, _ = extractor()
    with pytest.raises(KnowledgeError) as caught:
        ex.extract(b"x", "a.txt", None, "sometimes")
    assert caught.value.code == "invalid_request"


def test_tesseract_reads_a_scanned_page(tesseract: TesseractEngine) -> None:
    found = TextExtractor(tesseract).extract(image_pdf("Invoice number 4711"), "s.pdf", None)
    assert "Invoice" in found.text and "4711" in found.text
    assert found.method == "ocr" and found.engine == "pdfium+tesseract"
    assert found.confidence is not None and 0.5 < found.confidence <= 1.0


def test_tesseract_on_an_image_without_text(tesseract: TesseractEngine) -> None:
    blank = b"P5\n64 64\n255\n" + b"\xff" * 64 * 64
    assert TextExtractor(tesseract).extract(blank, "blank.pgm", None).text == ""
    assert "Hello" in TextExtractor(tesseract).ocr_image(pgm("Hello world")).text


def test_missing_tesseract_is_ocr_unavailable() -> None:
    engine = TesseractEngine(binary="no-such-tesseract-binary")
    with pytest.raises(KnowledgeError) as caught:
        TextExtractor(engine).extract(image_pdf("x"), "s.pdf", None)
    assert caught.value.code == "ocr_unavailable"


def test_tesseract_tsv_is_read_into_lines_and_a_mean_confidence() -> None:
    tsv = (
        "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tl\tt\tw\th\tconf\ttext\n"
        "5\t1\t1\t1\t1\t1\t0\t0\t1\t1\t90\tHello\n5\t1\t1\t1\t1\t2\t0\t0\t1\t1\t80\tthere\n"
        "5\t1\t1\t1\t2\t1\t0\t0\t1\t1\t70\tagain\n"
    )
    found = parse_tsv(tsv)
    assert (found.text, found.confidence) == ("Hello there\nagain", 0.8)
