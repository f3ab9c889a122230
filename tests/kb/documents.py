"""Documents made for the tests: PDFs written by hand (a text layer, a page that is only
an image, an encrypted one, a corrupt one), DOCX by python-docx, images from a PDF page."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

import pypdfium2 as pdfium


def _pdf(objects: list[bytes], trailer: str = "") -> bytes:
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R {trailer}>>\nstartxref\n{xref}\n%%EOF\n"
    ).encode()
    return bytes(out)


def _stream(data: bytes, extra: str = "") -> bytes:
    return f"<< /Length {len(data)} {extra}>>\nstream\n".encode() + data + b"\nendstream"


def text_pdf(*lines: str) -> bytes:
    """One page, Helvetica 18pt, one line each."""
    content = "BT /F1 18 Tf 72 720 Td 24 TL " + " ".join(f"({line}) '" for line in lines) + " ET"
    return _pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>",
            _stream(content.encode()),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ]
    )


def page_pixels(*lines: str) -> tuple[int, int, bytes]:
    """A text page rendered to grayscale pixels: (width, height, bytes)."""
    document = pdfium.PdfDocument(text_pdf(*lines))
    try:
        bitmap = document[0].render(scale=2, grayscale=True)
        array = bitmap.to_numpy()
        height, width = array.shape[:2]
        return width, height, array.reshape(height, width, -1)[:, :, 0].tobytes()
    finally:
        document.close()


def pgm(*lines: str) -> bytes:
    """An image (binary PGM) of text: what a scanner would give."""
    width, height, pixels = page_pixels(*lines)
    return b"P5\n%d %d\n255\n" % (width, height) + pixels


def image_pdf(*lines: str) -> bytes:
    """One page that is only a picture of text: no text layer."""
    width, height, pixels = page_pixels(*lines)
    image = _stream(
        zlib.compress(pixels),
        f"/Type /XObject /Subtype /Image /Width {width} /Height {height} "
        "/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode ",
    )
    return _pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /XObject << /Im1 5 0 R >> >> >>",
            _stream(b"q 612 0 0 792 0 0 cm /Im1 Do Q"),
            image,
        ]
    )


def encrypted_pdf() -> bytes:
    """A PDF under the standard security handler whose user password is not empty."""
    return _pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [] /Count 0 >>",
            b"<< /Filter /Standard /V 1 /R 2 /O <"
            + b"ab" * 32
            + b"> /U <"
            + b"cd" * 32
            + b"> /P -4 >>",
        ],
        "/Encrypt 3 0 R /ID [<0123456789abcdef0123456789abcdef> "
        "<0123456789abcdef0123456789abcdef>] ",
    )


def docx_bytes(*paragraphs: str) -> bytes:
    import docx

    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def png_header(width: int, height: int, body: bytes = b"") -> bytes:
    """A PNG signature and IHDR declaring ``width`` × ``height`` gray pixels (the data
    after it need not be a whole image: budgets are checked from the header)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    chunk = struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr
    return b"\x89PNG\r\n\x1a\n" + chunk + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr)) + body


def page_pdf(content: bytes = b"", box: str = "0 0 612 792", *, flate: bool = False) -> bytes:
    """One page of ``box`` points whose content stream is ``content`` (Flate-packed when
    ``flate``)."""
    stream = (
        _stream(zlib.compress(content, 9), "/Filter /FlateDecode ") if flate else _stream(content)
    )
    return _pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            f"<< /Type /Page /Parent 2 0 R /MediaBox [{box}] /Contents 4 0 R "
            "/Resources << /Font << /F1 5 0 R >> >> >>".encode(),
            stream,
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ]
    )


def page_tree_pdf(levels: int, fanout: int) -> bytes:
    """A page tree whose every node lists the same child ``fanout`` times: a file of a
    few hundred bytes with ``fanout ** levels`` pages."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    for level in range(levels):
        number = 2 + level
        parent = f"/Parent {number - 1} 0 R " if level else ""
        kids = " ".join([f"{number + 1} 0 R"] * fanout)
        count = fanout ** (levels - level)
        objects.append(f"<< /Type /Pages {parent}/Kids [{kids}] /Count {count} >>".encode())
    page = 2 + levels
    objects.append(
        f"<< /Type /Page /Parent {page - 1} 0 R /MediaBox [0 0 612 792] "
        f"/Contents {page + 1} 0 R >>".encode()
    )
    objects.append(_stream(b"BT /F1 12 Tf 72 720 Td (again) Tj ET"))
    return _pdf(objects)


def raw_docx(paragraphs: int, text: str = "a") -> bytes:
    """A DOCX package of ``paragraphs`` one-run paragraphs, zipped without python-docx
    (fast for many)."""
    body = f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>".encode() * paragraphs
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
            'content-types"><Default Extension="rels" ContentType="application/vnd.openxml'
            'formats-package.relationships+xml"/><Default Extension="xml" ContentType="'
            'application/xml"/><Override PartName="/word/document.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
        )
        archive.writestr(
            "_rels/.rels",
            '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/'
            'package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.'
            'openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
            'Target="word/document.xml"/></Relationships>',
        )
        archive.writestr(
            "word/document.xml",
            b'<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/'
            b'wordprocessingml/2006/main"><w:body>' + body + b"</w:body></w:document>",
        )
    return out.getvalue()
