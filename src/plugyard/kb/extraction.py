"""From a document's bytes to its text, under one of Shu's four OCR modes.

=========  ==============================================================
``always``  OCR every PDF page and every image.
``auto``    (default) PDF pages without a text layer are OCR'd, the others read
            directly; images are OCR'd; text-born formats are read directly.
``fallback``  read directly; only when that gives no text at all, OCR.
``never``   never OCR (an image then has no text).
=========  ==============================================================

HTML, DOCX and plain text are never OCR'd. The result carries the extraction metadata
Shu's ``host.ocr`` and ``host.kb`` return: ``method`` (``text``, ``html``, ``docx``,
``pdf_text``, ``ocr`` or ``pdf_text+ocr``), ``engine``, ``confidence``, ``duration``
(seconds) and ``details``.

Every read is under :class:`~plugyard.kb.budgets.Budgets`, measured before the work it
guards. In a yard this runs in a caged worker process (:mod:`plugyard.kb.cage`); the
class itself is the same code in-process, for tests and for the worker.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from plugyard.kb import formats
from plugyard.kb.budgets import Budgets, check, image_size
from plugyard.kb.cancel import Cancel
from plugyard.kb.errors import KnowledgeError
from plugyard.kb.ocr import OcrEngine

OcrMode = Literal["always", "auto", "fallback", "never"]
OCR_MODES: tuple[str, ...] = get_args(OcrMode)
DEFAULT_MODE: OcrMode = "auto"
MAX_OCR_PAGES = 100


@dataclass(frozen=True, slots=True)
class Extraction:
    text: str
    method: str
    engine: str
    confidence: float | None = None
    duration: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)

    def metadata(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "engine": self.engine,
            "confidence": self.confidence,
            "duration": round(self.duration, 4),
            "details": dict(self.details),
        }


def check_mode(mode: str | None) -> OcrMode:
    if mode is None:
        return DEFAULT_MODE
    if mode not in OCR_MODES:
        raise KnowledgeError(
            f"OCR mode {mode!r} is not one of {', '.join(OCR_MODES)}", code="invalid_request"
        )
    return mode  # type: ignore[return-value]


class TextExtractor:
    def __init__(
        self,
        ocr: OcrEngine,
        *,
        max_ocr_pages: int = MAX_OCR_PAGES,
        budgets: Budgets | None = None,
    ) -> None:
        self.ocr = ocr
        self._max_pages = max_ocr_pages
        self.budgets = budgets or Budgets()

    def extract(
        self,
        data: bytes,
        filename: str | None,
        mime_type: str | None,
        mode: str | None = None,
        cancel: Cancel | None = None,
    ) -> Extraction:
        """The document's text; ``cancel`` is looked at between pages (in-process
        nothing else can stop PDFium or Tesseract: the cage kills its worker)."""
        chosen = check_mode(mode)
        cancel = cancel or Cancel()
        started = time.perf_counter()
        kind = formats.kind_of(data, filename, mime_type)
        details: dict[str, Any] = {"format": kind, "ocr_mode": chosen, "bytes": len(data)}
        if kind == "pdf":
            found = self._pdf(data, chosen, details, cancel)
        elif kind == "image":
            found = self._image(data, chosen, details)
        elif kind == "html":
            markup = formats.plain_text(data)
            text, title = formats.html_text(markup, self.budgets.xml_nodes)
            if title:
                details["title"] = title
            found = Extraction(text, "html", "selectolax")
        elif kind == "docx":
            found = Extraction(
                formats.docx_text(data, self.budgets.xml_nodes), "docx", "python-docx"
            )
        else:
            found = Extraction(formats.plain_text(data).strip(), "text", "plain")
        check("text_chars", len(found.text), self.budgets.text_chars)
        return Extraction(
            found.text,
            found.method,
            found.engine,
            found.confidence,
            time.perf_counter() - started,
            {**details, **found.details},
        )

    def ocr_image(self, image: bytes) -> Extraction:
        """OCR of one image whose header declares at most the image-pixel budget; an
        image whose size cannot be read from its header is not handed to OCR."""
        size = image_size(image)
        if size is None:
            raise KnowledgeError(
                "the image's size cannot be read from its header",
                code="document_unreadable",
                reason="unsupported_image",
            )
        check("image_pixels", size[0] * size[1], self.budgets.image_pixels)
        result = self.ocr.read(image)
        return Extraction(result.text.strip(), "ocr", self.ocr.name, result.confidence)

    # ------------------------------------------------------------------------ formats

    def _image(self, data: bytes, mode: OcrMode, details: dict[str, Any]) -> Extraction:
        if mode == "never":
            details["ocr_skipped"] = "mode never"
            return Extraction("", "none", "none")
        return self.ocr_image(data)

    def _pdf(
        self, data: bytes, mode: OcrMode, details: dict[str, Any], cancel: Cancel
    ) -> Extraction:
        budgets = self.budgets
        with formats.pdf_document(data) as document:
            count = document.pages
            check("pages", count, budgets.pages)
            formats.check_pdf_streams(data, count, budgets.page_content_bytes, budgets.image_pixels)
            details["pages"] = count
            texts = []
            for index in range(count):
                cancel.check()
                texts.append(document.page_text(index))
            if mode == "never" or (mode == "fallback" and any(texts)):
                return Extraction("\n\n".join(t for t in texts if t), "pdf_text", "pdfium")
            wanted = [i for i, t in enumerate(texts) if mode in ("always", "fallback") or not t]
            if not wanted:
                return Extraction("\n\n".join(t for t in texts if t), "pdf_text", "pdfium")
            if not self.ocr.available():
                raise KnowledgeError("no OCR engine here", code="ocr_unavailable")
            skipped = wanted[self._max_pages :]
            confidences: list[float] = []
            for index in wanted[: self._max_pages]:
                cancel.check()
                # (page_image releases PDFium's lock before OCR starts)
                read = self.ocr.read(document.page_image(index, budgets.page_pixels))
                texts[index] = read.text.strip()
                if read.confidence is not None:
                    confidences.append(read.confidence)
        details["ocr_pages"] = len(wanted) - len(skipped)
        if skipped:
            details["ocr_pages_skipped"] = len(skipped)
        method = "ocr" if len(wanted) == count else "pdf_text+ocr"
        confidence = round(sum(confidences) / len(confidences), 4) if confidences else None
        text = "\n\n".join(t for t in texts if t)
        return Extraction(text, method, f"pdfium+{self.ocr.name}", confidence)
