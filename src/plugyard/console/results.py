"""A result envelope as the run page shows it.

Data is shown as JSON text (escaped by the template like everything else); citations
become links only when they point to ``http(s)`` (a ``javascript:`` reference stays
text); skips become a table; diagnostics appear only for a debug call (the executor
keeps them only then). An ``output_validation_error`` is one short summary line with
the raw details behind a toggle, as the Shu contract asks of a UI.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from plugyard.execution.result import Result

SUMMARY_CHARS = 200
MAX_SHOWN = 200_000  # characters of JSON shown inline; the rest is cut with a note


def pretty(value: Any, limit: int = MAX_SHOWN) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str, sort_keys=False)
    if len(text) > limit:
        return text[:limit] + f"\n… ({len(text) - limit} more characters)"
    return text


def safe_href(ref: Any) -> str | None:
    """A link target only for web addresses."""
    if not isinstance(ref, str):
        return None
    try:
        parts = urlsplit(ref.strip())
    except ValueError:
        return None
    return ref.strip() if parts.scheme in ("http", "https") and parts.netloc else None


def summary_of(message: str) -> str:
    first = message.strip().splitlines()[0] if message.strip() else ""
    return first if len(first) <= SUMMARY_CHARS else first[: SUMMARY_CHARS - 1] + "…"


def view(result: Result | Mapping[str, Any]) -> dict[str, Any]:
    """The template's view of a result (or of its envelope as a dict)."""
    envelope = result.to_dict() if isinstance(result, Result) else dict(result)
    status = str(envelope.get("status", "error"))
    out: dict[str, Any] = {
        "status": status,
        "data": pretty(envelope.get("data")) if envelope.get("data") is not None else None,
        "cost": envelope.get("cost") or {},
        "request_id": envelope.get("request_id"),
        "next_cursor": envelope.get("next_cursor"),
        "diagnostics": [str(d) for d in envelope.get("diagnostics") or ()],
        "skips": [_skip(s) for s in envelope.get("skips") or () if isinstance(s, Mapping)],
        "citations": [
            _citation(c) for c in envelope.get("citations") or () if isinstance(c, Mapping)
        ],
        "error": None,
        "pending": None,
    }
    error = envelope.get("error")
    if isinstance(error, Mapping):
        message = str(error.get("message", ""))
        out["error"] = {
            "code": str(error.get("code", "internal_error")),
            "message": message,
            "summary": summary_of(message),
            "raw": pretty(error),
        }
    if status == "pending_approval" and isinstance(envelope.get("data"), Mapping):
        data = envelope["data"]
        out["pending"] = {
            "action_id": data.get("action_id"),
            "expires_at": data.get("expires_at"),
            "preview": pretty(data.get("preview")),
        }
        out["data"] = None  # the receipt is kept by the session, never shown
    return out


def _citation(item: Mapping[str, Any]) -> dict[str, Any]:
    ref = item.get("ref")
    label = item.get("label") or ref
    return {"type": item.get("type"), "label": str(label), "ref": str(ref), "href": safe_href(ref)}


def _skip(item: Mapping[str, Any]) -> dict[str, Any]:
    details = item.get("details")
    return {
        "id": str(item.get("id", "")),
        "name": str(item.get("name") or ""),
        "reason": str(item.get("reason", "other")),
        "details": pretty(details, 2000) if details is not None else "",
    }
