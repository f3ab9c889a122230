"""How a routed request ends: a status, the answer's text and data, and the trace.

Every ending is an :class:`Answer`, never an exception (docs/routing.md):

- ``answered``: an operation ran and its output (post-processed when it asks) is the answer;
- ``none``: nothing the caller may call fits the request (or nothing relevant was found);
- ``pending_approval``: the chosen action waits for a human; ``pending`` holds its
  ``action_id`` and ``receipt`` and the plugin has not run;
- ``needs_input``: an argument the operation needs is not in the request (the model
  invented it, twice); ``error.code`` is ``argument_ungrounded`` and ``error.details``
  names its ``pointer``; nothing was called;
- ``pending_confirmation``: a write or destructive operation was chosen after a tool's
  output in this request; it has not run, and ``pending`` holds the approval
  ``action_id`` and ``receipt`` with which the caller confirms it (``Router.confirm``);
- ``error``: ``error.code`` is ``invalid_request`` (empty or oversized message),
  ``llm_unavailable``, ``llm_timeout``, ``llm_context_exceeded`` (the tools offered and
  the conversation do not fit the model), ``llm_invalid_answer`` (after the repair
  round) or the executor's code for the call;
- ``step_limit``: the model wanted more than ``max_steps`` calls, or the token budget
  ran out (``limit`` says which); ``data`` holds the last output, if any;
- ``planned``: asked with ``dry_run``, the first call was chosen and not made; ``data``
  holds its ``plugin``, ``operation`` and ``arguments`` (not yet validated).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from plugyard.routing.trace import Step
from plugyard.runtimes.base import ErrorInfo

Status = Literal["answered", "none", "pending_approval", "pending_confirmation",
                 "needs_input", "error", "step_limit", "planned"]  # fmt: skip
STATUSES: tuple[Status, ...] = (
    "answered", "none", "pending_approval", "pending_confirmation", "needs_input", "error",
    "step_limit", "planned",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Answer:
    """The end of one routed request."""

    status: Status
    text: str = ""
    data: Any = None
    error: ErrorInfo | None = None
    steps: tuple[Step, ...] = ()
    cost: Mapping[str, float | int] = field(default_factory=dict)
    request_id: str = ""
    pending: Mapping[str, Any] | None = None
    limit: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": self.status,
            "text": self.text,
            "data": self.data,
            "request_id": self.request_id,
            "cost": dict(self.cost),
            "steps": [s.to_dict() for s in self.steps],
        }
        if self.error is not None:
            out["error"] = self.error.to_dict()
        if self.pending is not None:
            out["pending"] = dict(self.pending)
        if self.limit is not None:
            out["limit"] = self.limit
        return out
