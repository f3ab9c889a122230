"""HomeClaw's persisted file of external registrations (``config/external_plugins.json``).

HomeClaw keeps plugins registered through its API in a JSON file, so a HomeClaw
deployment moved onto plugyard keeps working from that file, and tools that read it
still see what is registered. The store stays plugyard's source of truth; the file is a
mirror in both directions:

- at start, registrations in the file that the store lacks (or holds differently) are
  registered — through the same checks as the API (outbound guard, runtime);
- every registration or removal through plugyard rewrites the file from the store.

The file is HomeClaw's own form, a bare list of registration bodies (HomeClaw's loader
reads nothing else); ``{"plugins": [...]}``, which earlier versions wrote, is read too.
A file that does not parse is refused whole, with the position of the fault (a stray
byte before the list is a common one). It is written whole, to a temporary file renamed
over the old one, so a reader never sees half of it.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from plugyard.errors import ManifestError, Problem
from plugyard.manifest.exporters.dialect import to_dialect
from plugyard.registry.model import RegisteredPlugin

#: Where HomeClaw keeps the file, relative to its working folder.
HOMECLAW_PATH = Path("config") / "external_plugins.json"


def read_bodies(path: Path) -> list[Any]:
    """The registration bodies in the file; none when it does not exist. A file that is
    not JSON, or not a list of bodies, is ``manifest_syntax``/``manifest_invalid_value``
    — it is never half-read."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        found = repr(exc.doc[exc.pos]) if exc.pos < len(exc.doc) else "the end"
        message = (
            f"line {exc.lineno} column {exc.colno} (char {exc.pos}): {exc.msg} "
            f"({found} there); nothing of the file was read"
        )
        raise ManifestError([Problem("manifest_syntax", "", message)], path=str(path)) from None
    bodies = data.get("plugins") if isinstance(data, dict) else data
    if not isinstance(bodies, list):
        problem = Problem("manifest_invalid_value", "", "expected a list of registrations")
        raise ManifestError([problem], path=str(path))
    return bodies


def write(path: Path, plugins: Iterable[RegisteredPlugin]) -> None:
    """Replace the file with the HomeClaw bodies of ``plugins`` (ordered by id)."""
    bodies = [to_dialect(p.descriptor, "homeclaw") for p in sorted(plugins, key=lambda p: p.id)]
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".external_plugins.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(bodies, out, indent=2, ensure_ascii=False)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
