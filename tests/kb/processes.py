"""Waiting for a process to end without polling: a pidfd is readable once it has."""

from __future__ import annotations

import os
import select
from pathlib import Path


class HangingOcr:
    """An OCR binary that never answers: it leaves its pid in a file, then sleeps."""

    def __init__(self, folder: Path) -> None:
        self.pidfile = folder / "ocr.pid"
        self.binary = folder / "hanging-ocr"
        part = f"{self.pidfile}.part"  # renamed when whole: never read half-written
        script = f"#!/bin/sh\necho $$ > {part}\nmv {part} {self.pidfile}\nexec sleep 600\n"
        self.binary.write_text(script)
        self.binary.chmod(0o755)

    @property
    def spec(self) -> dict[str, object]:
        return {"engine": "tesseract", "binary": str(self.binary), "timeout_s": 600}

    def pid(self) -> int:
        assert self.pidfile.exists(), "the OCR never started: the deadline came first"
        return int(self.pidfile.read_text())


def ends(pid: int, within_s: float = 10.0) -> bool:
    """Whether process ``pid`` has ended (or ends within ``within_s``): a SIGKILL is
    delivered when the process is next scheduled, not when it is sent."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([handle], [], [], within_s)
        return bool(ready)
    finally:
        os.close(handle)


class HangsOnceOcr(HangingOcr):
    """An OCR binary that hangs on its first image (leaving its pid, as
    :class:`HangingOcr` does) and reads every later one as the word ``scanned``; each run
    is one line in :attr:`runs`."""

    def __init__(self, folder: Path) -> None:
        self.pidfile = folder / "ocr-once.pid"
        self.runs = folder / "ocr-runs"
        self.binary = folder / "hangs-once-ocr"
        part = f"{self.pidfile}.part"
        row = "5\\t1\\t1\\t1\\t1\\t1\\t0\\t0\\t10\\t10\\t96\\tscanned"
        script = (
            "#!/bin/sh\n"
            f"echo run >> {self.runs}\n"
            "cat > /dev/null\n"
            f"if [ ! -e {self.pidfile} ]; then\n"
            f"  echo $$ > {part}; mv {part} {self.pidfile}; exec sleep 600\n"
            "fi\n"
            f"printf 'level\\tpage_num\\n{row}\\n'\n"
        )
        self.binary.write_text(script)
        self.binary.chmod(0o755)

    def count(self) -> int:
        return len(self.runs.read_text().splitlines()) if self.runs.exists() else 0
