"""Reading each document format: what kind a document is, and its text.

- PDF: pypdfium2 (PDFium) — the text layer page by page, and a page rendered to a
  grayscale image for OCR, scaled down to the page-pixel budget. PDFium is not
  thread-safe: one lock serialises each use of it, and is never held while a page is
  OCR'd. Before a page is loaded, the page count, each embedded image's declared size
  and each content stream's inflated size (inflated only up to the budget) are measured.
- HTML: selectolax (lexbor) — the body's text, without scripts, styles and templates;
  its tags are counted before it is parsed.
- DOCX: python-docx — paragraphs and table cells; the zip is measured before it is
  opened, so a compression bomb is ``document_too_large``, not memory exhausted, and its
  XML elements are counted (streamed, never parsed) before python-docx builds them.
- Plain text: UTF-8 (BOM stripped), else Latin-1.

An encrypted or corrupt document is ``document_unreadable`` with ``details.reason``.
"""

from __future__ import annotations

import io
import re
import threading
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import PurePosixPath
from typing import Literal

from plugyard.kb.budgets import check, too_complex
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


_TAG = re.compile(r"<[A-Za-z]")


def html_text(markup: str, max_nodes: int | None = None) -> tuple[str, str | None]:
    """The visible text and the ``<title>`` of an HTML document; more than
    ``max_nodes`` start tags is ``document_too_complex`` before anything is parsed."""
    from selectolax.lexbor import LexborHTMLParser

    if max_nodes is not None:
        for nodes, _ in enumerate(_TAG.finditer(markup), 1):
            if nodes > max_nodes:
                raise too_complex("xml_nodes", nodes, max_nodes)

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


def docx_text(data: bytes, max_nodes: int | None = None) -> str:
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
    if max_nodes is not None:
        try:
            _count_xml_nodes(archive, max_nodes)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, zlib.error) as exc:
            raise _unreadable("corrupt", f"not a DOCX file: {exc}") from None
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


def _count_xml_nodes(archive: zipfile.ZipFile, limit: int) -> None:
    """Count the start tags of every XML part, streamed a block at a time: python-docx
    parses every part of the package, so all of them count."""
    nodes = 0
    for info in archive.infolist():
        if not info.filename.lower().endswith((".xml", ".rels")):
            continue
        with archive.open(info) as part:
            last = b""
            while block := part.read(1 << 20):
                window = last + block
                # "<" followed by a name: neither "</", "<?" nor "<!"
                nodes += window.count(b"<") - window.count(b"</") - window.count(b"<?")
                nodes -= window.count(b"<!")
                if last == b"<":  # counted in the previous block already
                    nodes -= 1
                last = block[-1:]
                if nodes > limit:
                    raise too_complex("xml_nodes", nodes, limit, part=info.filename)


class PdfReader:
    """One PDFium document; every use of PDFium takes the lock, and releases it before
    the caller does anything else (OCR above all)."""

    def __init__(self, data: bytes) -> None:
        import pypdfium2 as pdfium

        with _PDFIUM:
            try:
                self._document = pdfium.PdfDocument(data)
            except pdfium.PdfiumError as exc:
                reason = "encrypted" if "password" in str(exc).lower() else "corrupt"
                raise _unreadable(reason, f"cannot open the PDF: {exc}") from None
            self.pages = len(self._document)

    def close(self) -> None:
        with _PDFIUM:
            self._document.close()

    def page_text(self, index: int) -> str:
        with _PDFIUM:
            page = self._document[index]
            try:
                textpage = page.get_textpage()
                try:
                    return _tidy(str(textpage.get_text_range()))
                finally:
                    textpage.close()
            finally:
                page.close()

    def page_image(self, index: int, max_pixels: int, scale: float = 2.0) -> bytes:
        """One page as a binary PGM image (grayscale), the way Tesseract reads it: at
        ``scale`` (144 dpi), or smaller when that would exceed ``max_pixels``."""
        with _PDFIUM:
            width_pt, height_pt = self._document.get_page_size(index)
            area = max(width_pt, 1.0) * max(height_pt, 1.0)
            scale = min(scale, (max_pixels / area) ** 0.5)
            page = self._document[index]
            try:
                bitmap = page.render(scale=scale, grayscale=True)
                try:
                    width, height, stride = bitmap.width, bitmap.height, bitmap.stride
                    raw = bytes(bitmap.buffer)
                finally:
                    bitmap.close()
            finally:
                page.close()
        step = bitmap.n_channels
        if stride == width and step == 1:
            pixels = raw
        else:
            pixels = b"".join(
                raw[r * stride : r * stride + width * step : step] for r in range(height)
            )
        return b"P5\n%d %d\n255\n" % (width, height) + pixels


@contextmanager
def pdf_document(data: bytes) -> Iterator[PdfReader]:
    reader = PdfReader(data)
    try:
        yield reader
    finally:
        reader.close()


_STREAM = re.compile(rb"stream\r?\n")
_OBJ = re.compile(rb"\d+\s+\d+\s+obj\b")
_INT = {
    name: re.compile(rb"/" + name + rb"\s+(\d+)(?!\s+\d+\s+R)") for name in (b"Width", b"Height")
}


def check_pdf_streams(data: bytes, pages: int, content_limit: int, image_limit: int) -> None:
    """Measure the streams of a PDF before PDFium loads a page: an image whose declared
    pixels exceed ``image_limit``, or Flate content that inflates to more than
    ``content_limit`` in one stream or ``content_limit`` × ``pages`` in all, is
    ``document_too_complex``. Inflation stops at the limit, so this costs at most the
    budget itself. (Streams under other filters, or encrypted, are not measured here;
    the worker's memory and CPU limits bound them.)"""
    total_limit = content_limit * max(pages, 1)
    total = 0
    for match in _STREAM.finditer(data):
        start = match.end()
        head = data[max(0, match.start() - 4096) : match.start()]
        objects = list(_OBJ.finditer(head))
        if not objects or not head.rstrip().endswith(b">>"):
            continue
        header = head[objects[-1].end() :]
        if b"/Image" in header:
            sizes = [_INT[name].search(header) for name in (b"Width", b"Height")]
            if sizes[0] is not None and sizes[1] is not None:
                pixels = int(sizes[0].group(1)) * int(sizes[1].group(1))
                check("image_pixels", pixels, image_limit)
            continue
        if b"/FlateDecode" not in header and b"/Fl " not in header and b"/Fl]" not in header:
            continue
        end = data.find(b"endstream", start)
        inflated = _inflated_size(data[start : end if end >= 0 else len(data)], content_limit)
        check("page_content_bytes", inflated, content_limit)
        total += inflated
        check("page_content_bytes", total, total_limit, scope="document", pages=pages)


def _inflated_size(raw: bytes, limit: int) -> int:
    """How many bytes ``raw`` inflates to, counting no further than ``limit`` + 1."""
    inflater = zlib.decompressobj()
    size = 0
    try:
        out = inflater.decompress(raw, limit + 1)
        size += len(out)
        while inflater.unconsumed_tail and size <= limit:
            out = inflater.decompress(inflater.unconsumed_tail, limit + 1 - size)
            if not out:
                break
            size += len(out)
    except zlib.error:
        pass  # a broken stream is PDFium's to refuse
    return size


def _tidy(text: str) -> str:
    lines = (" ".join(line.split()) for line in text.replace("\r\n", "\n").split("\n"))
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()


def _unreadable(reason: str, message: str) -> KnowledgeError:
    return KnowledgeError(message, code="document_unreadable", reason=reason)
