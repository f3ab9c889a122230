"""The one exception the knowledge base raises; its ``code`` is one of errors.py."""

from __future__ import annotations

from typing import Any

from plugyard.errors import PlugyardError


class KnowledgeError(PlugyardError):
    """An ingestion, search or OCR request refused (``document_too_large``,
    ``unsupported_format``, ``document_unreadable``, ``empty_extraction``,
    ``kb_access_denied``, ``ocr_unavailable``, ``invalid_request``); ``details`` says more."""

    default_code = "invalid_request"

    def __init__(self, message: str, *, code: str | None = None, **details: Any) -> None:
        super().__init__(message, code=code)
        self.details = details
