"""OCR engines: a small protocol, Tesseract (Debian's ``tesseract-ocr``, run as a
process) and a scripted in-memory engine for tests.

An engine reads one image (PNG, JPEG, TIFF, BMP, GIF or PNM bytes) and answers its text
with a mean word confidence in 0..1. Tesseract runs with a cleared environment, no
shell, a deadline and its output capped; a missing binary is ``ocr_unavailable``.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from plugyard.kb.errors import KnowledgeError

MAX_OUTPUT = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class OcrText:
    text: str
    confidence: float | None


class OcrEngine(Protocol):
    @property
    def name(self) -> str: ...

    def available(self) -> bool: ...

    def read(self, image: bytes) -> OcrText:
        """The text of one image; ``KnowledgeError`` when the engine cannot run."""
        ...


class TesseractEngine:
    """``tesseract stdin stdout tsv``: words with their confidences, joined by line."""

    name = "tesseract"

    def __init__(self, binary: str = "tesseract", language: str = "eng", timeout_s: float = 60):
        self._binary, self._language, self._timeout = binary, language, timeout_s

    def spec(self) -> dict[str, object]:
        """What a worker process needs to make the same engine."""
        return {"engine": "tesseract", "binary": self._binary, "language": self._language,
                "timeout_s": self._timeout}  # fmt: skip

    def available(self) -> bool:
        return shutil.which(self._binary) is not None

    def read(self, image: bytes) -> OcrText:
        found = shutil.which(self._binary)
        if found is None:
            raise KnowledgeError("tesseract is not installed", code="ocr_unavailable")
        try:
            done = subprocess.run(
                [found, "stdin", "stdout", "-l", self._language, "tsv"],
                input=image,
                capture_output=True,
                timeout=self._timeout,
                check=False,
                env={"PATH": "/usr/bin:/bin", "OMP_THREAD_LIMIT": "1"},
            )
        except subprocess.TimeoutExpired:
            raise KnowledgeError(
                "OCR took too long", code="document_unreadable", reason="ocr_timeout"
            ) from None
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
            raise KnowledgeError(
                f"tesseract failed: {' '.join(message)}",
                code="document_unreadable",
                reason="unsupported_image",
            )
        return parse_tsv(done.stdout[:MAX_OUTPUT].decode("utf-8", "replace"))


def parse_tsv(tsv: str) -> OcrText:
    """Tesseract's TSV: words (level 5) grouped into lines; the mean confidence."""
    lines: dict[tuple[str, ...], list[str]] = {}
    confidences: list[float] = []
    for row in tsv.splitlines()[1:]:
        cells = row.split("\t")
        if len(cells) < 12 or cells[0] != "5" or not cells[11].strip():
            continue
        lines.setdefault(tuple(cells[1:5]), []).append(cells[11].strip())
        try:
            confidences.append(float(cells[10]))
        except ValueError:
            continue
    text = "\n".join(" ".join(words) for words in lines.values())
    mean = round(sum(confidences) / len(confidences) / 100.0, 4) if confidences else None
    return OcrText(text, mean)


class UnavailableOcrEngine:
    """No OCR on this host: every read is ``ocr_unavailable``."""

    name = "none"

    def available(self) -> bool:
        return False

    def read(self, image: bytes) -> OcrText:
        raise KnowledgeError("no OCR engine here", code="ocr_unavailable")


class ScriptedOcrEngine:
    """In memory: the text given for an image's exact bytes (else none)."""

    name = "scripted"

    def __init__(self, texts: Mapping[bytes, str] | None = None, default: str = "") -> None:
        self.texts = dict(texts or {})
        self.default = default
        self.reads = 0

    def available(self) -> bool:
        return True

    def read(self, image: bytes) -> OcrText:
        self.reads += 1
        text = self.texts.get(image, self.default)
        return OcrText(text, 1.0 if text else None)
