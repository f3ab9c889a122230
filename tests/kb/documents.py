"""Documents made for the tests: PDFs written by hand (a text layer, a page that is only
an image, an encrypted one, a corrupt one), DOCX by python-docx, images from a PDF page."""

from __future__ import annotations

import io
import struct
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
