"""Shu's host-only overlay: ``params.__host``, read by the host and never seen by the
plugin (its schema does not name it). Today it carries one knob, the OCR mode
``host.kb`` applies (``__host.ocr.mode``: ``always | auto | fallback | never``); any
other key, or a mode outside the four, is ``invalid_parameters`` with its pointer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

OVERLAY = "__host"
OCR_MODES = ("always", "auto", "fallback", "never")


@dataclass(frozen=True, slots=True)
class HostContext:
    ocr_mode: str | None = None


class OverlayError(ValueError):
    def __init__(self, pointer: str, message: str) -> None:
        super().__init__(message)
        self.pointer = pointer


def split(params: Mapping[str, Any]) -> tuple[dict[str, Any], HostContext]:
    """The parameters without the overlay, and what the overlay says."""
    rest = {k: v for k, v in params.items() if k != OVERLAY}
    overlay = params[OVERLAY]
    if overlay is None:
        return rest, HostContext()
    if not isinstance(overlay, Mapping):
        raise OverlayError(f"/{OVERLAY}", "the host overlay is an object")
    unknown = sorted(set(overlay) - {"ocr"})
    if unknown:
        raise OverlayError(f"/{OVERLAY}/{unknown[0]}", f"unknown host overlay key {unknown[0]!r}")
    ocr = overlay.get("ocr") or {}
    if not isinstance(ocr, Mapping) or set(ocr) - {"mode"}:
        raise OverlayError(f"/{OVERLAY}/ocr", "the OCR overlay is {'mode': ...}")
    mode = ocr.get("mode")
    if mode is not None and mode not in OCR_MODES:
        raise OverlayError(f"/{OVERLAY}/ocr/mode", f"the OCR mode is one of {', '.join(OCR_MODES)}")
    return rest, HostContext(ocr_mode=mode)
