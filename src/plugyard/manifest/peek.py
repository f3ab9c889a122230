"""A best-effort look at a manifest that was refused: which dialect and id it seems to
declare, so a report can still say what failed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plugyard.errors import ManifestError
from plugyard.manifest.load import detect
from plugyard.manifest.safeload import parse

_ID_KEYS = ("id", "plugin_id", "name")
_FAMILY_BY_TYPE = {
    "sd-plugin": "sd", "kb-plugin": "kb", "gs-plugin": "gs", "val-plugin": "val",
    "mrp-plan-plugin": "plan",
}  # fmt: skip


def peek(path: Path) -> tuple[str | None, str | None, str | None]:
    """``(dialect, id, family)`` as far as they can be told; ``None`` where they cannot."""
    try:
        document: Any = parse(path.read_bytes()).documents[0]
    except (ManifestError, OSError):
        return None, None, None
    if isinstance(document, list) and document:
        document = document[0]
    if not isinstance(document, dict):
        return None, None, None
    dialect = detect(document)
    nested = document.get("plugin")
    body: dict[str, Any] = nested if isinstance(nested, dict) else document
    plugin_id = next((body[k] for k in _ID_KEYS if isinstance(body.get(k), str)), None)
    family: str | None = None
    if dialect is not None:
        kind = body.get("type")
        family = _FAMILY_BY_TYPE.get(kind, "tool") if isinstance(kind, str) else "tool"
    return (dialect.name if dialect else None), plugin_id, family
