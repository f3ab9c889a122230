"""Small documents that describe enormous work are refused from what they declare —
a page count, a page size, an image header, a tag count, an inflated stream measured only
up to its limit — with ``document_too_complex`` and the budget, value and limit; a page
too large to render at 144 dpi is rendered smaller, never larger."""

from __future__ import annotations

import struct
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plugyard.kb.budgets import Budgets, image_size
from plugyard.kb.errors import KnowledgeError
from plugyard.kb.extraction import TextExtractor
from plugyard.kb.ocr import OcrText, ScriptedOcrEngine

from .documents import page_pdf, page_tree_pdf, png_header, raw_docx, text_pdf


class RecordingOcr(ScriptedOcrEngine):
    """Keeps the images it was handed, to look at their declared size."""

    def __init__(self) -> None:
        super().__init__(default="seen")
        self.images: list[bytes] = []

    def read(self, image: bytes) -> OcrText:
        self.images.append(image)
        return super().read(image)


def refused(extractor: TextExtractor, data: bytes, name: str, mode: str = "auto") -> dict:
    with pytest.raises(KnowledgeError) as caught:
        extractor.extract(data, name, None, mode)
    assert caught.value.code == "document_too_complex"
    return caught.value.details


def test_a_page_tree_repeating_one_page_is_refused_by_its_page_count() -> None:
    engine = RecordingOcr()
    details = refused(TextExtractor(engine), page_tree_pdf(6, 10), "tree.pdf")
    assert details == {"budget": "pages", "value": 1_000_000, "limit": Budgets().pages}
    assert engine.reads == 0


def test_a_huge_page_is_rendered_within_the_pixel_budget_never_above_144_dpi() -> None:
    engine = RecordingOcr()
    budgets = Budgets(page_pixels=1_000_000)
    found = TextExtractor(engine, budgets=budgets).extract(
        page_pdf(box="0 0 10000 10000"), "huge.pdf", None
    )
    assert found.text == "seen"
    width, height = image_size(engine.images[0]) or (0, 0)
    assert width * height <= 1_000_000 and width > 900  # scaled down to fit, not further
    small = RecordingOcr()
    TextExtractor(small, budgets=budgets).extract(page_pdf(box="0 0 100 50"), "s.pdf", None)
    assert image_size(small.images[0]) == (200, 100)  # 144 dpi: never scaled up


def test_a_content_stream_that_inflates_past_its_budget_is_refused_before_pdfium() -> None:
    bomb = page_pdf(b"10 10 m 20 20 l S\n" * 100_000, flate=True)  # ~1.8 MB inflated
    assert len(bomb) < 20_000
    budgets = Budgets(page_content_bytes=1_000_000)
    details = refused(TextExtractor(RecordingOcr(), budgets=budgets), bomb, "p.pdf", "never")
    assert details["budget"] == "page_content_bytes" and details["limit"] == 1_000_000
    assert details["value"] == 1_000_001  # inflation stopped one byte past the limit


def test_an_embedded_image_declaring_too_many_pixels_is_refused() -> None:
    image = (
        b"<< /Type /XObject /Subtype /Image /Width 50000 /Height 50000 /ColorSpace /DeviceGray "
        b"/BitsPerComponent 8 /Length 3 >>\nstream\nabc\nendstream"
    )
    pdf = text_pdf("x").replace(b"5 0 obj\n", b"6 0 obj\n" + image + b"\nendobj\n5 0 obj\n")
    details = refused(TextExtractor(RecordingOcr()), pdf, "i.pdf")
    assert details == {"budget": "image_pixels", "value": 2_500_000_000, "limit": 40_000_000}


def test_a_png_header_claiming_20000_squared_pixels_never_reaches_ocr() -> None:
    engine = RecordingOcr()
    details = refused(TextExtractor(engine), png_header(20_000, 20_000), "blank.png")
    assert details == {"budget": "image_pixels", "value": 400_000_000, "limit": 40_000_000}
    assert engine.reads == 0


def test_an_image_whose_size_cannot_be_read_is_not_handed_to_ocr() -> None:
    engine = RecordingOcr()
    with pytest.raises(KnowledgeError) as caught:
        TextExtractor(engine).extract(b"\x89PNG\r\n\x1a\nbroken", "b.png", None)
    assert caught.value.code == "document_unreadable"
    assert engine.reads == 0


def test_a_docx_of_many_tiny_paragraphs_is_refused_by_its_node_count() -> None:
    budgets = Budgets(xml_nodes=10_000)
    details = refused(TextExtractor(RecordingOcr(), budgets=budgets), raw_docx(5_000), "t.docx")
    assert details["budget"] == "xml_nodes" and details["limit"] == 10_000
    assert details["value"] > 10_000 and details["part"] == "word/document.xml"
    fine = TextExtractor(RecordingOcr(), budgets=budgets).extract(raw_docx(100), "f.docx", None)
    assert fine.text.count("a") == 100


def test_html_with_too_many_tags_is_refused_before_it_is_parsed() -> None:
    budgets = Budgets(xml_nodes=1_000)
    soup = b"<html><body>" + b"<i>x</i>" * 2_000 + b"</body></html>"
    details = refused(TextExtractor(RecordingOcr(), budgets=budgets), soup, "s.html")
    assert (details["budget"], details["value"], details["limit"]) == ("xml_nodes", 1_001, 1_000)


def test_extracted_text_over_the_text_budget_is_refused() -> None:
    budgets = Budgets(text_chars=1_000)
    details = refused(TextExtractor(RecordingOcr(), budgets=budgets), b"word " * 500, "a.txt")
    assert details == {"budget": "text_chars", "value": 2_499, "limit": 1_000}


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


@pytest.mark.parametrize(
    ("data", "size"),
    [
        (png_header(640, 480), (640, 480)),
        (b"GIF89a" + struct.pack("<HH", 300, 200) + b"\x00" * 8, (300, 200)),
        (b"BM" + b"\x00" * 16 + struct.pack("<ii", 120, -80), (120, 80)),
        (b"P5\n# a comment\n64 32\n255\n" + b"\x00" * 10, (64, 32)),
        (
            b"\xff\xd8\xff\xe0\x00\x04ab\xff\xc0\x00\x11\x08" + struct.pack(">HH", 90, 160),
            (160, 90),
        ),
        (
            b"II*\x00\x08\x00\x00\x00\x02\x00"
            + struct.pack("<HHII", 256, 3, 1, 50)
            + struct.pack("<HHII", 257, 4, 1, 70)
            + b"\x00\x00\x00\x00",
            (50, 70),
        ),
        (
            b"RIFF\x00\x00\x00\x00WEBPVP8X"
            + b"\x00" * 8
            + (99).to_bytes(3, "little")
            + (49).to_bytes(3, "little"),
            (100, 50),
        ),
        (b"not an image at all", None),
    ],
)
def test_image_headers_give_their_size(data: bytes, size: tuple[int, int] | None) -> None:
    assert image_size(data) == size


@given(st.binary(max_size=200))
def test_image_size_never_raises_on_arbitrary_bytes(data: bytes) -> None:
    found = image_size(data)
    assert found is None or (found[0] >= 0 and found[1] >= 0)


@given(st.sampled_from([b"\x89PNG\r\n\x1a\n", b"GIF89a", b"BM", b"\xff\xd8", b"II*\x00",
                        b"MM\x00*", b"P5", b"RIFF\x00\x00\x00\x00WEBP"]),
       st.binary(max_size=120))  # fmt: skip
def test_image_size_never_raises_on_a_known_signature_with_junk(head: bytes, tail: bytes) -> None:
    found = image_size(head + tail)
    assert found is None or (found[0] >= 0 and found[1] >= 0)


def test_an_email_html_body_is_held_to_the_node_budget() -> None:
    from plugyard.kb.records import email_record

    names = "sender recipients date thread_id body_text labels source_url attributes"
    fields: dict = dict.fromkeys(names.split())
    fields.update(subject="s", message_id="m")
    with pytest.raises(KnowledgeError) as caught:
        email_record(body_html="<p>x</p>" * 50, max_nodes=10, **fields)
    assert caught.value.code == "document_too_complex"
    assert caught.value.details == {"budget": "xml_nodes", "value": 11, "limit": 10}
    assert "x" in email_record(body_html="<p>x</p>" * 5, max_nodes=10, **fields).text


@given(st.binary(max_size=400), st.binary(max_size=400))
def test_the_stream_scanner_refuses_only_with_a_budget(head: bytes, body: bytes) -> None:
    from plugyard.kb.formats import check_pdf_streams

    data = head + b"1 0 obj << /Filter /FlateDecode /Subtype /Image /Width 9 >>\nstream\n" + body
    refusals: list[KnowledgeError] = []
    try:
        check_pdf_streams(data + zlib.compress(body * 50), 1, 1_000, 10)
    except KnowledgeError as exc:
        refusals.append(exc)
    for refusal in refusals:
        assert refusal.code == "document_too_complex"
        assert refusal.details["budget"] in ("page_content_bytes", "image_pixels")
