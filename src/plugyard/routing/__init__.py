"""The routing flow (DESIGN.md §8, HomeClaw §5; docs/routing.md): one step loop (loop.py)
for ``yard.ask`` and ``/v1/chat/completions`` — retrieve the operations a caller may
call, let the chat model decide among them, ground the arguments, call through the
executor, compose the answer."""

from plugyard.routing.flow import Router
from plugyard.routing.outcomes import STATUSES, Answer
from plugyard.routing.trace import Retrieved, Step

__all__ = ["STATUSES", "Answer", "Retrieved", "Router", "Step"]
