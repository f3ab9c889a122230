"""Shu's host-only overlay: ``params.__host``, read by the host and never seen by the
plugin (its schema does not name it). It carries the OCR mode ``host.kb`` applies
(``__host.ocr.mode``: ``always | auto | fallback | never``) and, as Shu binds them, the
knowledge bases ``host.kb``'s field searches read (``__host.kb.knowledge_base_ids``);
any other key, or a mode outside the four, is ``invalid_parameters`` with its pointer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

OVERLAY = "__host"
OCR_MODES = ("always", "auto", "fallback", "never")


@dataclass(frozen=True, slots=True)
class HostContext:
    ocr_mode: str | None = None
    #: Shu's ``__host.kb.knowledge_base_ids``: what ``host.kb``'s field searches read.
    knowledge_base_ids: tuple[str, ...] = ()


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
    unknown = sorted(set(overlay) - {"ocr", "kb"})
    if unknown:
        raise OverlayError(f"/{OVERLAY}/{unknown[0]}", f"unknown host overlay key {unknown[0]!r}")
    ocr = overlay.get("ocr") or {}
    if not isinstance(ocr, Mapping) or set(ocr) - {"mode"}:
        raise OverlayError(f"/{OVERLAY}/ocr", "the OCR overlay is {'mode': ...}")
    mode = ocr.get("mode")
    if mode is not None and mode not in OCR_MODES:
        raise OverlayError(f"/{OVERLAY}/ocr/mode", f"the OCR mode is one of {', '.join(OCR_MODES)}")
    kb = overlay.get("kb") or {}
    ids = kb.get("knowledge_base_ids") if isinstance(kb, Mapping) else None
    if (
        not isinstance(kb, Mapping)
        or set(kb) - {"knowledge_base_ids"}
        or not (ids is None or (isinstance(ids, list) and all(isinstance(i, str) for i in ids)))
    ):
        raise OverlayError(f"/{OVERLAY}/kb", "the kb overlay is {'knowledge_base_ids': [...]}")
    return rest, HostContext(ocr_mode=mode, knowledge_base_ids=tuple(ids or ()))
