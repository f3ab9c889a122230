"""How a routed request fails: a refused request before any step, a model call that
failed (with the code its answer carries), the token budget spent."""

from __future__ import annotations

from typing import Any

from plugyard.errors import PlugyardError
from plugyard.routing.decide import METHODS
from plugyard.routing.outcomes import Answer
from plugyard.runtimes.base import CallContext, ErrorInfo

#: Longer messages are refused (``invalid_request``) rather than cut: a cut request
#: could route to something the user did not ask for.
MAX_MESSAGE_CHARS = 8000


class ModelFailed(Exception):
    """A model call failed; ``code`` is the answer's error code."""

    def __init__(self, code: str, message: str, status: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status

    @property
    def schema_refused(self) -> bool:
        """The server (or the embedded model) would not take the request as asked —
        with constrained decoding, most likely a parameter schema it cannot compile."""
        return self.code == "invalid_request" or self.status in (400, 422)


class OutOfTokens(Exception):
    """The token budget was spent before a model call."""


def failure(exc: PlugyardError | TimeoutError | OSError) -> ModelFailed:
    # The model layer raises LlmError; a backend outside it may let these through.
    if isinstance(exc, PlugyardError):
        return ModelFailed(exc.code, exc.message, getattr(exc, "details", {}).get("status"))
    if isinstance(exc, TimeoutError):
        return ModelFailed("llm_timeout", "the model did not answer in time")
    return ModelFailed("llm_unavailable", f"the model cannot be reached: {exc}")


def check_request(message: object, k: int, max_steps: int, method: str) -> str | None:
    """Why the request is refused before anything runs, or ``None``."""
    if not isinstance(message, str) or not message.strip():
        return "the message is empty"
    if len(message) > MAX_MESSAGE_CHARS:
        return f"the message is {len(message)} characters; at most {MAX_MESSAGE_CHARS}"
    if not 1 <= k <= 50:
        return f"k must be 1-50, not {k}"
    if not 1 <= max_steps <= 10:
        return f"max_steps must be 1-10, not {max_steps}"
    if method not in METHODS:
        return f"method must be one of {', '.join(METHODS)}, not {method!r}"
    return None


def refused(context: CallContext, code: str, message: str) -> Answer:
    """A request refused before any step: nothing was retrieved, asked or called."""
    return Answer("error", f"{code}: {message}", error=ErrorInfo(code, message),
                  request_id=context.request_id)  # fmt: skip
