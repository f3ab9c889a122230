"""What one document may cost to read (and what the worker reading it may use), and the
cheap measurements that are taken before the expensive work they guard.

A small document can describe an enormous one: a 339-byte PDF with one 10,000-point
page, a 130 KB content stream that inflates to 64 MB of path operators, a DOCX of a
million tiny paragraphs, a PNG header claiming 20,000 × 20,000 pixels, a page tree that
repeats one page a million times. Each budget below is checked from what the document
*says* (a page count, a page size, an image header, a tag count, a stream inflated only
up to the limit) before anything is rendered, parsed into objects or handed to OCR. A
document over a budget is ``document_too_complex`` with ``details.budget``, ``value``
and ``limit``; nothing is stored.

Rendering is the exception: a page too large for ``page_pixels`` at the usual 144 dpi is
rendered at a smaller scale instead (never a larger one), because its text is still
worth reading.
"""

from __future__ import annotations

import struct
from dataclasses import asdict, dataclass
from typing import Any

from plugyard.kb.errors import KnowledgeError


@dataclass(frozen=True, slots=True)
class Budgets:
    """The limits one extraction runs under (``Settings.kb_*``, docs/shu.md)."""

    pages: int = 1000  # pages in a PDF
    page_pixels: int = 10_000_000  # pixels of one page rendered for OCR (scaled down to fit)
    page_content_bytes: int = 8 * 1024 * 1024  # inflated content streams, per page
    xml_nodes: int = 500_000  # elements in a DOCX package or an HTML document
    image_pixels: int = 40_000_000  # pixels of an image handed to OCR (or embedded in a PDF)
    text_chars: int = 600_000  # characters of extracted text to chunk and embed (in the host)

    def to_data(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Budgets:
        return cls(**{k: int(v) for k, v in data.items() if k in cls.__dataclass_fields__})


@dataclass(frozen=True, slots=True)
class CageLimits:
    """What one worker may use (``Settings.kb_worker_*``, docs/shu.md)."""

    memory_mb: int = 1024  # address space of a worker (and of Tesseract under it)
    cpu_s: float = 30.0  # CPU seconds per document
    wall_s: float = 60.0  # wall-clock seconds per document
    workers: int = 2  # workers at most, spawned when first needed


def too_complex(budget: str, value: int | None, limit: int, **more: Any) -> KnowledgeError:
    """``value`` is ``None`` when a worker was stopped at the limit (CPU, wall, memory)."""
    said = f"{value} > {limit}" if value is not None else f"the limit is {limit}"
    return KnowledgeError(
        f"reading the document exceeds the {budget} budget ({said})",
        code="document_too_complex",
        budget=budget,
        value=value,
        limit=limit,
        **more,
    )


def check(budget: str, value: int, limit: int, **more: Any) -> None:
    if value > limit:
        raise too_complex(budget, value, limit, **more)


# ---------------------------------------------------------------------------- image headers


def image_size(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` from an image's header — the largest frame for a multi-page
    TIFF counts all its pages' pixels as its height — or ``None`` when the header is not
    one of PNG, JPEG, GIF, BMP, TIFF, PNM or WebP."""
    try:
        if data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR":
            width, height = struct.unpack(">II", data[16:24])
            return width, height
        if data.startswith((b"GIF87a", b"GIF89a")):
            width, height = struct.unpack("<HH", data[6:10])
            return width, height
        if data.startswith(b"BM") and len(data) >= 26:
            width, height = struct.unpack("<ii", data[18:26])
            return abs(width), abs(height)
        if data.startswith(b"\xff\xd8"):
            return _jpeg_size(data)
        if data.startswith((b"II*\x00", b"MM\x00*")):
            return _tiff_size(data)
        if data[:1] == b"P" and data[1:2] in b"123456" and len(data) > 2:
            return _pnm_size(data)
        if data.startswith(b"RIFF") and data[8:12] == b"WEBP":
            return _webp_size(data)
    except (struct.error, ValueError, IndexError):
        return None
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 9 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            at += 2
            continue
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        at += 2 + length
    return None


def _tiff_size(data: bytes) -> tuple[int, int] | None:
    order = "<" if data[:2] == b"II" else ">"
    (offset,) = struct.unpack(order + "I", data[4:8])
    width = total_height = 0
    frames = 0
    seen: set[int] = set()
    while offset and offset not in seen and frames < 10_000:
        seen.add(offset)
        frames += 1
        (count,) = struct.unpack(order + "H", data[offset : offset + 2])
        found: dict[int, int] = {}
        for i in range(count):
            entry = data[offset + 2 + 12 * i : offset + 14 + 12 * i]
            tag, kind = struct.unpack(order + "HH", entry[:4])
            if tag in (256, 257):
                fmt = "H" if kind == 3 else "I"
                (found[tag],) = struct.unpack(order + fmt, entry[8 : 8 + struct.calcsize(fmt)])
        if 256 not in found or 257 not in found:
            return None
        width = max(width, found[256])
        total_height += found[257]
        (offset,) = struct.unpack(
            order + "I", data[offset + 2 + 12 * count : offset + 6 + 12 * count]
        )
    return (width, total_height) if frames else None


def _pnm_size(data: bytes) -> tuple[int, int] | None:
    tokens: list[bytes] = []
    for line in data[2:4096].splitlines():
        tokens.extend(line.split(b"#", 1)[0].split())
        if len(tokens) >= 2:
            return int(tokens[0]), int(tokens[1])
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    return None
