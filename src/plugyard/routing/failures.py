"""How a routed request is refused before any step: nothing was retrieved, asked or
called."""

from __future__ import annotations

from plugyard.routing.outcomes import Answer
from plugyard.runtimes.base import CallContext, ErrorInfo

#: Longer messages are refused (``invalid_request``) rather than cut: a cut request
#: could route to something the user did not ask for.
MAX_MESSAGE_CHARS = 8000


def check_request(message: object, k: int, max_steps: int) -> str | None:
    """Why the request is refused before anything runs, or ``None``."""
    if not isinstance(message, str) or not message.strip():
        return "the message is empty"
    if len(message) > MAX_MESSAGE_CHARS:
        return f"the message is {len(message)} characters; at most {MAX_MESSAGE_CHARS}"
    if not 1 <= k <= 50:
        return f"k must be 1-50, not {k}"
    if not 1 <= max_steps <= 10:
        return f"max_steps must be 1-10, not {max_steps}"
    return None


def refused(context: CallContext, code: str, message: str) -> Answer:
    """A request refused before any step: nothing was retrieved, asked or called."""
    return Answer("error", f"{code}: {message}", error=ErrorInfo(code, message),
                  request_id=context.request_id)  # fmt: skip
