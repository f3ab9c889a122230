"""The extraction worker: a process of its own that reads documents for the host.

Run as a module (``python -I -m plugyard.kb.worker '<config json>'``) by
:mod:`plugyard.kb.cage`.
Its address space is capped (``RLIMIT_AS``) before it reads anything, and before each
document its CPU limit (``RLIMIT_CPU``) is set to what it has used plus the document's
allowance, so the kernel stops a runaway extraction (``SIGXCPU``) even if the host's
wall-clock deadline were late. Tesseract runs as its child and inherits both.

Frames on stdin and stdout: an 8-byte big-endian length, then a msgpack map. A request is
``{"data", "filename", "mime_type", "mode", "budgets", "cpu_s"}``; a reply is
``{"ok": <extraction>}`` or ``{"error": {"code", "message", "details"}}``. A request that
exhausts memory answers ``document_too_complex`` (budget ``memory_bytes``) with
``"retire": true``, and the worker exits: its heap is not to be trusted after it.
"""

from __future__ import annotations

import json
import math
import os
import resource
import sys
import time
from typing import Any

import msgspec

HEADER = 8
_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder().decode


def _read_exact(stream: Any, size: int) -> bytes | None:
    chunks: list[bytes] = []
    while size:
        chunk = stream.read(size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _send(stream: Any, message: dict[str, Any]) -> None:
    body = _encode(message)
    stream.write(len(body).to_bytes(HEADER, "big") + body)
    stream.flush()


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def serve(config: dict[str, Any]) -> None:
    memory = int(config.get("memory_bytes") or 0)
    if memory > 0:
        _limit(resource.RLIMIT_AS, memory, memory)
    from plugyard.kb.budgets import Budgets
    from plugyard.kb.errors import KnowledgeError
    from plugyard.kb.extraction import TextExtractor
    from plugyard.kb.ocr import OcrEngine, TesseractEngine, UnavailableOcrEngine

    spec = config.get("ocr") or {}
    engine: OcrEngine
    if spec.get("engine") == "tesseract":
        engine = TesseractEngine(
            spec.get("binary", "tesseract"),
            spec.get("language", "eng"),
            float(spec.get("timeout_s", 60)),
        )
    else:
        engine = UnavailableOcrEngine()
    stdin = sys.stdin.buffer
    stdout = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a library's print cannot corrupt the frames
    while True:
        header = _read_exact(stdin, HEADER)
        if header is None:
            return
        body = _read_exact(stdin, int.from_bytes(header, "big"))
        if body is None:
            return
        request = _decode(body)
        allowance = max(1, math.ceil(float(request.get("cpu_s") or 30)))
        soft = math.ceil(_cpu_used()) + allowance
        _limit(resource.RLIMIT_CPU, soft, resource.RLIM_INFINITY)
        extractor = TextExtractor(engine, budgets=Budgets.from_data(request.get("budgets") or {}))
        started = time.perf_counter()
        try:
            found = extractor.extract(
                request["data"], request.get("filename"), request.get("mime_type"),
                request.get("mode"),
            )  # fmt: skip
        except KnowledgeError as exc:
            _send(stdout, {"error": {"code": exc.code, "message": str(exc),
                                     "details": exc.details}})  # fmt: skip
            continue
        except MemoryError:
            _send(stdout, {"error": _out_of_memory(memory), "retire": True})
            return
        except Exception as exc:  # a reader bug on a hostile document is still an answer
            error = {"code": "document_unreadable", "message": f"{type(exc).__name__}: {exc}",
                     "details": {"reason": "corrupt"}}  # fmt: skip
            _send(stdout, {"error": error})
            continue
        reply = {"text": found.text, "method": found.method, "engine": found.engine,
                 "confidence": found.confidence, "duration": time.perf_counter() - started,
                 "details": found.details}  # fmt: skip
        try:
            _send(stdout, {"ok": reply})
        except MemoryError:
            _send(stdout, {"error": _out_of_memory(memory), "retire": True})
            return


def _limit(which: int, soft: int, hard: int) -> None:
    """Set a limit, never above a hard limit this process was started under."""
    _, current = resource.getrlimit(which)
    if current != resource.RLIM_INFINITY:
        soft = min(soft, current)
        hard = current if hard == resource.RLIM_INFINITY else min(hard, current)
    resource.setrlimit(which, (soft, hard))


def _out_of_memory(memory: int) -> dict[str, Any]:
    return {
        "code": "document_too_complex",
        "message": "reading the document needs more memory than the worker has",
        "details": {"budget": "memory_bytes", "value": None, "limit": memory},
    }


if __name__ == "__main__":
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    serve(json.loads(sys.argv[1]) if len(sys.argv) > 1 else {})
