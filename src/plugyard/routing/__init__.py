"""The routing flow (DESIGN.md §8, HomeClaw §5; docs/routing.md): retrieve the operations
a caller may call, let a chat model choose under a JSON schema, call through the
executor, post-process when asked, answer."""

from plugyard.routing.flow import Router
from plugyard.routing.outcomes import STATUSES, Answer
from plugyard.routing.trace import Retrieved, Step

__all__ = ["STATUSES", "Answer", "Retrieved", "Router", "Step"]
