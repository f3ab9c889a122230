"""Hostile documents against the knowledge base: what each costs the process that
ingests it, measured from outside that process.

    .venv/bin/python bench/documents.py [--only NAME ...] [--embedder minilm]

Each document is generated here (small files that describe enormous work, and a few
ordinary ones), then ingested by a fresh process that builds a yard the way
``plugyard serve`` does and calls ``host.kb.ingest_document`` through a Shu plugin
(``yard.call``). Before and after the ingestion this script reads that process's
``/proc/<pid>/status`` (VmRSS, VmHWM) and ``/proc/<pid>/stat`` (utime + stime), and
samples the extraction workers under it for their peak. The target: any document of at
most 25 MiB costs the ingesting process at most 512 MiB of extra RSS and 30 s of CPU, or
is refused. Prints one table row per document.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import struct
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
MIB = 1024 * 1024


# ------------------------------------------------------------------------------ documents


def _pdf(objects: list[bytes]) -> bytes:
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
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return bytes(out)


def _stream(data: bytes, extra: str = "") -> bytes:
    return f"<< /Length {len(data)} {extra}>>\nstream\n".encode() + data + b"\nendstream"


def _page_pdf(content: bytes, box: str = "0 0 612 792", flate: bool = False) -> bytes:
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


def huge_page_pdf() -> bytes:
    """One 10,000 × 10,000 pt page without text: OCR renders it."""
    return _page_pdf(b"", box="0 0 10000 10000")


def huge_pages_pdf() -> bytes:
    """Fifty 10,000 × 10,000 pt pages without text: fifty renders and OCRs, which the
    worker's CPU and wall limits cut short."""
    pages = 50
    kids = " ".join(f"{4 + n} 0 R" for n in range(pages))
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10000 10000] /Contents 3 0 R >>"
    return _pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
            _stream(b""),
            *[page] * pages,
        ]
    )


def path_bomb_pdf() -> bytes:
    """A content stream that inflates to 64 MiB of path operators."""
    ops = b"10 10 m 20 20 l S\n" * (64 * MIB // 18)
    return _page_pdf(ops, flate=True)


def page_tree_pdf() -> bytes:
    """A 1 KB page tree that repeats one page 10^6 times (6 levels of 10 kids)."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    levels = 6
    for level in range(levels):
        number = 2 + level
        parent = f"/Parent {number - 1} 0 R " if level else ""
        kids = " ".join([f"{number + 1} 0 R"] * 10)
        objects.append(
            f"<< /Type /Pages {parent}/Kids [{kids}] /Count {10 ** (levels - level)} >>".encode()
        )
    page = 2 + levels
    objects.append(
        f"<< /Type /Page /Parent {page - 1} 0 R /MediaBox [0 0 612 792] /Contents {page + 1} 0 R "
        f"/Resources << /Font << /F1 {page + 2} 0 R >> >> >>".encode()
    )
    objects.append(_stream(b"BT /F1 12 Tf 72 720 Td (again) Tj ET"))
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    return _pdf(objects)


def report_pdf(pages: int = 20) -> bytes:
    """An ordinary text PDF: ``pages`` pages of 40 lines."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b""]
    kids = []
    font = 3
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for n in range(pages):
        lines = " ".join(
            f"(Page {n + 1} line {i}: the quarterly figures grew as planned.) '" for i in range(40)
        )
        content = f"BT /F1 10 Tf 50 760 Td 12 TL {lines} ET".encode()
        objects.append(_stream(content))
        content_ref = len(objects)
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_ref} 0 R "
            f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode()
        )
        kids.append(f"{len(objects)} 0 R")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {pages} >>".encode()
    return _pdf(objects)


def _docx(body: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
            'package/2006/content-types"><Default Extension="rels" ContentType="application/'
            'vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" '
            'ContentType="application/xml"/><Override PartName="/word/document.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.'
            'document.main+xml"/></Types>',
        )
        archive.writestr(
            "_rels/.rels",
            '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.'
            'openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http:'
            '//schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
            'Target="word/document.xml"/></Relationships>',
        )
        archive.writestr(
            "word/document.xml",
            b'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.'
            b'openxmlformats.org/wordprocessingml/2006/main"><w:body>'
            + body
            + b"</w:body></w:document>",
        )
    return out.getvalue()


def tiny_paragraphs_docx() -> bytes:
    """A DOCX of 1.5 million one-letter paragraphs (~150 KB zipped)."""
    return _docx(b"<w:p><w:r><w:t>a</w:t></w:r></w:p>" * 1_500_000)


def letter_docx() -> bytes:
    return _docx(
        b"".join(
            b"<w:p><w:r><w:t>Paragraph %d of an ordinary letter about the budget.</w:t></w:r></w:p>"
            % i
            for i in range(200)
        )
    )


def _png(width: int, height: int, row: Callable[[int], bytes]) -> bytes:
    packer = zlib.compressobj(9)
    chunks = [packer.compress(b"\x00" + row(y)) for y in range(height)]
    data = b"".join(chunks) + packer.flush()

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")
    )


def blank_png() -> bytes:
    """A blank 20,000 × 20,000 gray PNG (~400 KB)."""
    blank = b"\xff" * 20_000
    return _png(20_000, 20_000, lambda y: blank)


def scan_png() -> bytes:
    """A scanned page: one page of the report rendered at 144 dpi, gray, for OCR."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(report_pdf(1))
    try:
        bitmap = document[0].render(scale=2, grayscale=True)
        width, height, stride = bitmap.width, bitmap.height, bitmap.stride
        raw = bytes(bitmap.buffer)
    finally:
        document.close()
    return _png(width, height, lambda y: raw[y * stride : y * stride + width])


def big_text() -> bytes:
    """20 MiB of plain text."""
    line = b"The knowledge base keeps every chunk of this very long text file.\n"
    return line * (20 * MIB // len(line))


def max_text() -> bytes:
    """Plain text exactly at the default text budget (600,000 characters): the most a
    document may cost the host's embedder."""
    line = b"Every sentence of this text is chunked and embedded by the host itself.\n"
    return (line * (600_000 // len(line) + 1))[:600_000]


def tag_soup_html() -> bytes:
    """3 million empty elements (~12 MiB)."""
    return b"<html><body>" + b"<i>x</i>" * 3_000_000 + b"</body></html>"


def page_html() -> bytes:
    body = "".join(
        f"<p>Section {i}: how the team ships the knowledge base.</p>" for i in range(300)
    )
    return f"<html><head><title>Notes</title></head><body>{body}</body></html>".encode()


def notes_txt() -> bytes:
    return b"Meeting notes. Ship the knowledge base on Friday.\n" * 2000


DOCUMENTS: dict[str, tuple[str, Callable[[], bytes], str]] = {
    # name: (file name, generator, OCR mode)
    "huge-page.pdf": ("huge.pdf", huge_page_pdf, "auto"),
    "huge-pages.pdf": ("pages.pdf", huge_pages_pdf, "auto"),
    "path-bomb.pdf": ("paths.pdf", path_bomb_pdf, "never"),
    "page-tree.pdf": ("tree.pdf", page_tree_pdf, "auto"),
    "tiny-paragraphs.docx": ("tiny.docx", tiny_paragraphs_docx, "auto"),
    "blank-20000.png": ("blank.png", blank_png, "auto"),
    "tag-soup.html": ("soup.html", tag_soup_html, "auto"),
    "big-text.txt": ("big.txt", big_text, "auto"),
    "max-text.txt": ("max.txt", max_text, "auto"),
    "report.pdf": ("report.pdf", report_pdf, "auto"),
    "letter.docx": ("letter.docx", letter_docx, "auto"),
    "page.html": ("page.html", page_html, "auto"),
    "notes.txt": ("notes.txt", notes_txt, "auto"),
    "scan.png": ("scan.png", scan_png, "auto"),
}


# ------------------------------------------------------------------------------ the ingester

PLUGIN = """
class Plugin:
    async def execute(self, params, context, host):
        import base64
        return await host.kb.ingest_document(
            "bench", file_bytes=base64.b64decode(params["data"]), filename=params["name"],
            source_id=params["name"])
"""

INGESTER = """
import asyncio, base64, json, sys
from pathlib import Path
from plugyard import Settings, Yard

folder, embedder = Path(sys.argv[1]), sys.argv[2]
settings = Settings(database=str(folder / "kb.db"), builtins=False,
                    plugin_dirs=(folder / "plugins",), embedder=embedder,
                    default_timeout_ms=600_000)
with Yard.from_settings(settings) as yard:
    def ingest(name, data, mode, timeout_ms=600_000):
        params = {"data": base64.b64encode(data).decode(), "name": name,
                  "__host": {"ocr": {"mode": mode}}}
        return asyncio.run(yard.call("bench-ingest", None, params, timeout_ms=timeout_ms))
    ingest("warm.txt", b"warm up the embedder and one extraction worker", "auto")
    ingest("warm.pdf", (folder / "warm.pdf").read_bytes(), "auto")
    print("ready", flush=True)
    for line in sys.stdin:
        name, path, mode = line.split()
        result = ingest(name, Path(path).read_bytes(), mode)
        error = result.error.to_dict() if result.error else None
        chunks = (result.data or {}).get("chunk_count")
        print("done " + json.dumps({"status": result.status, "error": error, "chunks": chunks}),
              flush=True)
"""


def _status(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) * 1024
    return out


def _cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def _descendants(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as children:
                for child in children.read().split():
                    found.append(int(child))
                    found.extend(_descendants(int(child)))
    except OSError:
        pass
    return found


class WorkerPeak(threading.Thread):
    """Samples the extraction workers and Tesseract under the ingester for their peak
    RSS."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak, self.done = pid, 0, threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.05):
            for child in _descendants(self.pid):
                try:
                    # (a child forked but not yet exec'd still shows its parent's memory)
                    command = Path(f"/proc/{child}/cmdline").read_bytes()
                    if b"plugyard.kb.worker" in command or b"tesseract" in command:
                        self.peak = max(self.peak, _status(child).get("VmHWM", 0))
                except OSError:
                    continue


def measure(name: str, folder: Path, embedder: str) -> dict[str, object]:
    filename, make, mode = DOCUMENTS[name]
    data = make()
    path = folder / filename
    path.write_bytes(data)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    log = folder / "ingester.log"  # its warnings (new keys) and, if it fails, why
    with log.open("a") as errors:
        proc = subprocess.Popen(
            [sys.executable, "-c", INGESTER, str(folder), embedder],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            env=env,
        )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "ready", log.read_text()[-2000:]
        before, cpu_before = _status(proc.pid), _cpu(proc.pid)
        peak = WorkerPeak(proc.pid)
        peak.start()
        started = time.perf_counter()
        proc.stdin.write(f"{filename} {path} {mode}\n")
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline().removeprefix("done "))
        wall = time.perf_counter() - started
        peak.done.set()
        peak.join()
        after, cpu_after = _status(proc.pid), _cpu(proc.pid)
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    error = answer.get("error") or {}
    details = error.get("details") or {}
    outcome = (
        f"{error.get('code')} ({details.get('budget') or details.get('reason') or ''})"
        if error
        else f"stored, {answer.get('chunks')} chunks"
    )
    return {
        "document": name,
        "bytes": len(data),
        "outcome": outcome,
        "extra_hwm_mib": (after["VmHWM"] - before["VmHWM"]) / MIB,
        "extra_rss_mib": (after["VmRSS"] - before["VmRSS"]) / MIB,
        "cpu_s": cpu_after - cpu_before,
        "wall_s": wall,
        "worker_peak_mib": peak.peak / MIB,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=None, help="document names")
    parser.add_argument("--embedder", default="minilm")
    args = parser.parse_args()
    names = args.only or list(DOCUMENTS)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        plugin = folder / "plugins" / "bench-ingest"
        (plugin / "bench_ingest").mkdir(parents=True)
        (plugin / "manifest.yaml").write_text(
            textwrap.dedent("""
            name: bench-ingest
            version: 1.0.0
            entrypoints:
              bench-ingest: bench_ingest.plugin:Plugin
            capabilities: [kb]
            """)
        )
        (plugin / "bench_ingest" / "__init__.py").write_text("")
        (plugin / "bench_ingest" / "plugin.py").write_text(PLUGIN)
        (folder / "warm.pdf").write_bytes(report_pdf(1))
        load = Path("/proc/loadavg").read_text().split()[:3]
        print(f"load {' '.join(load)}, embedder {args.embedder}")
        header = ("document", "bytes", "outcome", "server +HWM MiB", "server +RSS MiB",
                  "server CPU s", "wall s", "worker peak MiB")  # fmt: skip
        print(" | ".join(header))
        print(" | ".join("---" for _ in header))
        for name in names:
            row = measure(name, folder, args.embedder)
            print(
                f"{row['document']} | {row['bytes']:,} | {row['outcome']} | "
                f"{row['extra_hwm_mib']:.1f} | {row['extra_rss_mib']:.1f} | {row['cpu_s']:.2f} | "
                f"{row['wall_s']:.2f} | {row['worker_peak_mib']:.0f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
