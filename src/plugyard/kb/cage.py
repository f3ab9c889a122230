"""The cage: documents are read in worker processes, never in the host's.

A document is read by a :mod:`plugyard.kb.worker` process with an address-space limit
(``RLIMIT_AS``), a CPU limit (``RLIMIT_CPU``) and a wall-clock deadline, so a hostile
document costs the host its bytes on a pipe, not its memory. A small pool of workers is
spawned lazily and reused; each runs in a process group of its own (Tesseract is its
child) and the whole group is killed:

- when the wall deadline passes → ``document_too_complex`` (budget ``wall_seconds``) —
  waiting that long for a free worker is ``timeout`` (reason ``workers_busy``) instead;
- when the caller gives up (its call's deadline passed, or it was cancelled) →
  ``cancelled``, through a :class:`Cancel` token;
- when the kernel stops it for CPU (``SIGXCPU``) → ``document_too_complex`` (budget
  ``cpu_seconds``); when it dies of memory → ``document_too_complex`` (``memory_bytes``).

A worker that grew large is retired after its job rather than kept. Nothing here writes
anywhere: the knowledge base stores a document only after the cage answered, in one
transaction (:mod:`plugyard.kb.service`).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import msgspec

from plugyard.kb.budgets import Budgets, CageLimits, too_complex
from plugyard.kb.cancel import Cancel
from plugyard.kb.errors import KnowledgeError
from plugyard.kb.extraction import Extraction, check_mode

HEADER = 8
MAX_REPLY = 256 * 1024 * 1024
#: A worker whose resident memory is above this after a job is retired, not reused.
RETIRE_RSS = 256 * 1024 * 1024
_SOURCE = str(Path(__file__).resolve().parents[2])
_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder().decode


class _Worker:
    def __init__(self, config: dict[str, Any]) -> None:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "OMP_THREAD_LIMIT": "1",
               "OPENBLAS_NUM_THREADS": "1", "LC_ALL": "C.UTF-8"}  # fmt: skip
        # This plugyard's own code, wherever it is imported from (an install or a source
        # tree on PYTHONPATH, which -I would ignore).
        boot = (
            f"import sys, runpy; sys.path.insert(0, {_SOURCE!r}); "
            "runpy.run_module('plugyard.kb.worker', run_name='__main__')"
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-c", boot, json.dumps(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,  # its own group: Tesseract dies with it
        )
        self.killed: str | None = None  # why the host killed it
        self.jobs = 0

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self, why: str) -> None:
        if self.killed is None:
            self.killed = why
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def reap(self) -> None:
        self.kill(self.killed or "closed")
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)

    def rss(self) -> int:
        try:
            with open(f"/proc/{self.proc.pid}/status", encoding="ascii") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) * 1024
        except (OSError, ValueError):
            pass
        return 0

    def exchange(self, request: bytes, deadline: float) -> dict[str, Any] | None:
        """Send one request and read its reply; ``None`` when the worker died or the
        deadline passed (it is killed then)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(len(request).to_bytes(HEADER, "big") + request)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return None
        fd = self.proc.stdout.fileno()
        header = self._read(fd, HEADER, deadline)
        if header is None:
            return None
        size = int.from_bytes(header, "big")
        if size > MAX_REPLY:
            self.kill("protocol")
            return None
        body = self._read(fd, size, deadline)
        if body is None:
            return None
        reply = _decode(body)
        return reply if isinstance(reply, dict) else None

    def _read(self, fd: int, size: int, deadline: float) -> bytes | None:
        out = bytearray()
        while len(out) < size:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill("deadline")
                return None
            try:
                ready, _, _ = select.select([fd], [], [], left)
                if not ready:
                    continue
                chunk = os.read(fd, min(size - len(out), 1 << 20))
            except (OSError, ValueError):  # the pipe closed under us: the worker is gone
                return None
            if not chunk:
                return None
            out += chunk
        return bytes(out)


class Cage:
    """A lazily spawned pool of at most ``limits.workers`` extraction workers."""

    def __init__(self, limits: CageLimits | None = None, ocr: dict[str, Any] | None = None):
        self.limits = limits or CageLimits()
        self._config = {"memory_bytes": self.limits.memory_mb * 1024 * 1024, "ocr": ocr or {}}
        self._cond = threading.Condition()
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._closed = False

    @property
    def pids(self) -> list[int]:
        """The worker processes alive now (idle or busy)."""
        with self._cond:
            return [w.pid for w in [*self._idle, *self._busy] if w.alive]

    def run(self, request: dict[str, Any], cancel: Cancel | None = None) -> dict[str, Any]:
        """One request, answered by a worker: the reply's ``ok`` value, or the
        ``KnowledgeError`` it (or its death) stands for."""
        limits = self.limits
        cancel = cancel or Cancel()
        worker = self._take(cancel, time.monotonic() + limits.wall_s)
        deadline = time.monotonic() + limits.wall_s  # the document's own, from now
        reply: dict[str, Any] | None = None
        try:
            with cancel.stopping(lambda: worker.kill("cancelled")):
                reply = worker.exchange(_encode({**request, "cpu_s": limits.cpu_s}), deadline)
        finally:
            self._give_back(worker, healthy=reply is not None and not reply.get("retire"))
        if reply is None:
            raise self._death(worker, cancel)
        if "error" in reply:
            error = reply["error"]
            details = error.get("details") if isinstance(error.get("details"), dict) else {}
            raise KnowledgeError(str(error.get("message")), code=str(error.get("code")), **details)
        ok = reply.get("ok")
        if not isinstance(ok, dict):
            raise KnowledgeError("the extraction worker answered nonsense", code="internal_error")
        return ok

    def close(self) -> None:
        with self._cond:
            self._closed = True
            idle, busy = list(self._idle), list(self._busy)
            self._idle.clear()
            self._cond.notify_all()
        for worker in busy:  # its caller reaps it, and answers cancelled
            worker.kill("cancelled")
        for worker in idle:
            worker.reap()

    # ---------------------------------------------------------------------------- internals

    def _take(self, cancel: Cancel, deadline: float) -> _Worker:
        with cancel.stopping(self._wake), self._cond:
            while True:
                cancel.check()
                if self._closed:
                    raise KnowledgeError("the knowledge base is closed", code="cancelled")
                while self._idle:
                    worker = self._idle.pop()
                    if worker.alive:
                        self._busy.add(worker)
                        return worker
                    worker.reap()
                if len(self._busy) < self.limits.workers:
                    worker = _Worker(self._config)
                    self._busy.add(worker)
                    return worker
                left = deadline - time.monotonic()
                if left <= 0:  # not the document's fault: every worker stayed busy
                    raise KnowledgeError(
                        "no extraction worker was free in time",
                        code="timeout",
                        reason="workers_busy",
                        waited_s=self.limits.wall_s,
                    )
                self._cond.wait(left)

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def _give_back(self, worker: _Worker, *, healthy: bool) -> None:
        worker.jobs += 1
        keep = healthy and worker.alive and worker.rss() < RETIRE_RSS
        with self._cond:
            self._busy.discard(worker)
            if keep and not self._closed:
                self._idle.append(worker)
            self._cond.notify_all()
        if not keep:
            worker.reap()

    def _death(self, worker: _Worker, cancel: Cancel) -> KnowledgeError:
        worker.reap()
        limits = self.limits
        if worker.killed == "cancelled" or cancel.cancelled:
            return KnowledgeError("the ingestion was cancelled", code="cancelled")
        if worker.killed == "deadline":
            return too_complex("wall_seconds", None, int(limits.wall_s))
        code = worker.proc.returncode
        if code == -signal.SIGXCPU:
            return too_complex("cpu_seconds", None, int(limits.cpu_s))
        if code in (-signal.SIGKILL, -signal.SIGABRT, -signal.SIGSEGV, -signal.SIGBUS):
            # Out of address space, PDFium and Tesseract abort (or fault on a failed
            # allocation); the kernel's OOM killer sends SIGKILL.
            return too_complex("memory_bytes", None, limits.memory_mb * 1024 * 1024, exit=code)
        return KnowledgeError(
            f"the extraction worker exited ({code})",
            code="document_unreadable",
            reason="worker_exited",
            exit=code,
        )


class CagedExtractor:
    """:class:`~plugyard.kb.extraction.TextExtractor`'s ``extract``, in the cage."""

    def __init__(self, cage: Cage, budgets: Budgets | None = None) -> None:
        self.cage = cage
        self.budgets = budgets or Budgets()

    def extract(
        self,
        data: bytes,
        filename: str | None,
        mime_type: str | None,
        mode: str | None = None,
        cancel: Cancel | None = None,
    ) -> Extraction:
        chosen = check_mode(mode)
        found = self.cage.run(
            {
                "data": bytes(data),
                "filename": filename,
                "mime_type": mime_type,
                "mode": chosen,
                "budgets": self.budgets.to_data(),
            },
            cancel,
        )
        confidence = found.get("confidence")
        return Extraction(
            str(found.get("text") or ""),
            str(found.get("method")),
            str(found.get("engine")),
            float(confidence) if isinstance(confidence, int | float) else None,
            float(found.get("duration") or 0.0),
            dict(found.get("details") or {}),
        )

    def close(self) -> None:
        self.cage.close()
