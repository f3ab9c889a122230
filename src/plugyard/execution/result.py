"""The result envelope every call returns (Shu ``ToolResult`` plus DS027 statuses)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from plugyard.runtimes.base import ErrorInfo


@dataclass(frozen=True, slots=True)
class Result:
    """What a call produced.

    ``status`` is ``success``, ``error``, ``timeout`` or ``pending_approval``, or a DS027
    family status (``insufficient``, ``no-context``, ``needs-decomposition``,
    ``accepted``, ``rejected``, ``unsupported``, ``skipped-budget`` …). ``diagnostics``
    are kept only when the call asked for debug. ``payload_ref`` names the full payload
    when ``data`` was cut for size.
    """

    status: str
    data: Any = None
    error: ErrorInfo | None = None
    cost: Mapping[str, float] = field(default_factory=dict)
    diagnostics: tuple[str, ...] = ()
    skips: tuple[Mapping[str, Any], ...] = ()
    citations: tuple[Mapping[str, Any], ...] = ()
    next_cursor: str | None = None
    plugin_id: str | None = None
    operation: str | None = None
    request_id: str | None = None
    payload_ref: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.status not in {"error", "timeout"}

    @property
    def ran_ok(self) -> bool:
        """It ran and did not fail (``ok``, and not merely waiting for an approval)."""
        return self.ok and self.status != "pending_approval"

    def to_dict(self) -> dict[str, Any]:
        """The JSON envelope; optional members appear only when they carry something."""
        out: dict[str, Any] = {"status": self.status, "data": self.data}
        if self.error is not None:
            out["error"] = self.error.to_dict()
        out["cost"] = dict(self.cost)
        for key in ("diagnostics", "skips", "citations"):
            value = getattr(self, key)
            if value:
                out[key] = [dict(v) if isinstance(v, Mapping) else v for v in value]
        for key in ("next_cursor", "plugin_id", "operation", "request_id", "payload_ref"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


def failure(code: str, message: str, **details: Any) -> Result:
    """An error result of the call path itself (not of the plugin)."""
    status = "timeout" if code == "timeout" else "error"
    return Result(status=status, error=ErrorInfo(code, message, details))
