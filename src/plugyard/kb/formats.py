"""Reading each document format: what kind a document is, and its text.

- PDF: pypdfium2 (PDFium) — the text layer page by page, and a page rendered to a
  grayscale image for OCR. PDFium is not thread-safe: one lock serialises it.
- HTML: selectolax (lexbor) — the body's text, without scripts, styles and templates.
- DOCX: python-docx — paragraphs and table cells; the zip is measured before it is
  opened, so a compression bomb is ``document_too_large``, not memory exhausted.
- Plain text: UTF-8 (BOM stripped), else Latin-1.

An encrypted or corrupt document is ``document_unreadable`` with ``details.reason``.
"""

from __future__ import annotations

import io
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import PurePosixPath
from typing import Any, Literal

from plugyard.kb.errors import KnowledgeError

Kind = Literal["pdf", "html", "docx", "text", "image"]
MAX_UNZIPPED = 256 * 1024 * 1024
_PDFIUM = threading.Lock()
_IMAGE_TYPES = {
    "image/png",
    "image/jpeg",
    "image/tiff",
    "image/bmp",
    "image/gif",
    "image/x-portable-anymap",
    "image/webp",
}
_EXTENSIONS: dict[str, Kind] = {
    ".pdf": "pdf",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".docx": "docx",
    ".txt": "text",
    ".md": "text",
    ".csv": "text",
    ".json": "text",
    ".log": "text",
    ".png": "image",
    ".jpg": "image",
    ".jpeg": "image",
    ".tif": "image",
    ".tiff": "image",
    ".bmp": "image",
    ".gif": "image",
    ".pgm": "image",
    ".pnm": "image",
    ".webp": "image",
}
_BLOCKS = (
    "p, div, br, li, dt, dd, h1, h2, h3, h4, h5, h6, tr, ul, ol, table, section, article, "
    "header, footer, pre, blockquote, hr"
)
_DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def kind_of(data: bytes, filename: str | None, mime_type: str | None) -> Kind:
    """The document's kind, from its MIME type, its name, then its first bytes."""
    mime = (mime_type or "").split(";")[0].strip().lower()
    if mime == "application/pdf":
        return "pdf"
    if mime in {"text/html", "application/xhtml+xml"}:
        return "html"
    if mime == _DOCX:
        return "docx"
    if mime in _IMAGE_TYPES:
        return "image"
    suffix = PurePosixPath(filename or "").suffix.lower()
    if suffix in _EXTENSIONS:
        return _EXTENSIONS[suffix]
    head = data[:512].lstrip()
    if head.startswith(b"%PDF"):
        return "pdf"
    if (head[:1] == b"<" and b"<html" in head.lower()) or head.lower().startswith(b"<!doctype"):
        return "html"
    if data.startswith((b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"II*\x00", b"MM\x00*", b"BM")):
        return "image"
    if data.startswith(b"PK\x03\x04"):
        return "docx"
    if mime.startswith("text/") or _texty(data):
        return "text"
    raise KnowledgeError(
        f"cannot read {mime or filename or 'this document'}",
        code="unsupported_format",
        mime_type=mime,
        filename=filename,
    )


def _texty(data: bytes) -> bool:
    return b"\x00" not in data[:4096]


def plain_text(data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def html_text(markup: str) -> tuple[str, str | None]:
    """The visible text and the ``<title>`` of an HTML document."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(markup)
    title_node = tree.css_first("title")
    title = title_node.text(strip=True) if title_node is not None else None
    for node in tree.css("script, style, noscript, template, head"):
        node.decompose()
    for node in tree.css(_BLOCKS):  # a block ends a line; inline elements do not
        node.insert_after("\n")
    root = tree.body or tree.root
    text = root.text(separator="") if root is not None else ""
    return _tidy(text), title or None


def docx_text(data: bytes) -> str:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        total = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise _unreadable("corrupt", f"not a DOCX file: {exc}") from None
    if total > MAX_UNZIPPED:
        raise KnowledgeError(
            f"the DOCX unpacks to {total} bytes",
            code="document_too_large",
            reason="unpacked_size",
            size=total,
            max=MAX_UNZIPPED,
        )
    import docx

    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:  # python-docx raises many kinds for a broken package
        raise _unreadable("corrupt", f"not a DOCX document: {type(exc).__name__}") from None
    parts = [p.text for p in document.paragraphs]
    for table in document.tables:
        for row in table.rows:
            parts.append("\t".join(cell.text for cell in row.cells))
    return _tidy("\n".join(parts))


@contextmanager
def pdf_document(data: bytes) -> Iterator[Any]:
    """An open PDFium document (under the PDFium lock)."""
    import pypdfium2 as pdfium

    with _PDFIUM:
        try:
            document = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            reason = "encrypted" if "password" in str(exc).lower() else "corrupt"
            raise _unreadable(reason, f"cannot open the PDF: {exc}") from None
        try:
            yield document
        finally:
            document.close()


def pdf_page_text(document: Any, index: int) -> str:
    page = document[index]
    try:
        textpage = page.get_textpage()
        try:
            return _tidy(str(textpage.get_text_range()))
        finally:
            textpage.close()
    finally:
        page.close()


def pdf_page_image(document: Any, index: int, scale: float = 2.0) -> bytes:
    """One page as a binary PGM image (grayscale), the way Tesseract reads it."""
    page = document[index]
    try:
        bitmap = page.render(scale=scale, grayscale=True)
        array = bitmap.to_numpy()
        height, width = array.shape[:2]
        pixels = array.reshape(height, width, -1)[:, :, 0].tobytes()
        return bytes(b"P5\n%d %d\n255\n" % (width, height) + pixels)
    finally:
        page.close()


def _tidy(text: str) -> str:
    lines = (" ".join(line.split()) for line in text.replace("\r\n", "\n").split("\n"))
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()


def _unreadable(reason: str, message: str) -> KnowledgeError:
    return KnowledgeError(message, code="document_unreadable", reason=reason)
