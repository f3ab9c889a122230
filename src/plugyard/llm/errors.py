"""The model layer's failures, as stable error codes (docs/errors.md)."""

from __future__ import annotations

from typing import Any

from plugyard.errors import PlugyardError


class LlmError(PlugyardError):
    """A chat call that produced no usable answer; ``code`` says why:
    ``llm_unavailable`` (no server, refused, model missing or not the pinned file),
    ``llm_timeout`` (the deadline passed), ``llm_invalid_answer`` (not JSON, or not
    matching the requested schema) or ``llm_context_exceeded`` (the conversation and
    the tools offered are longer than the model's context window)."""

    default_code = "llm_unavailable"

    def __init__(self, message: str, *, code: str | None = None, **details: Any) -> None:
        super().__init__(message, code=code)
        self.details = details


def unavailable(message: str, **details: Any) -> LlmError:
    return LlmError(message, code="llm_unavailable", **details)


def timed_out(message: str, **details: Any) -> LlmError:
    return LlmError(message, code="llm_timeout", **details)


def context_exceeded(message: str, **details: Any) -> LlmError:
    return LlmError(message, code="llm_context_exceeded", **details)


def invalid_answer(message: str, **details: Any) -> LlmError:
    return LlmError(message, code="llm_invalid_answer", **details)
