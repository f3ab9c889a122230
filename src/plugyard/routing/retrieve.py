"""The candidates of one step: the top-k operations the caller may call.

Discovery searches with the caller's rights as its filter, so an operation the caller
may not call is never offered, whatever the message or an earlier tool output says.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from plugyard.discovery.query import CanSee, Filters, Match
from plugyard.routing.choice import Candidate

Search = Callable[[str, int, Filters], Sequence[Match]]


class Teacher(Protocol):
    """How the flow lets discovery learn (docs/discovery.md): it searches as the
    subject, then reports the operation that answered, by the search's id."""

    def search(self, query: str, k: int, filters: Filters, subject: str) -> Sequence[Match]: ...

    def accepted(self, search_id: str, subject: str, plugin_id: str, operation: str) -> None: ...


def retrieve(search: Search, query: str, k: int, can_see: CanSee) -> tuple[Candidate, ...]:
    """At most ``k`` operations, best first: each match's operation, or every operation
    the caller may call of a plugin that matched as a whole. Only matches above the
    relevance floor count, so an empty answer means nothing relevant."""
    found: list[Candidate] = []
    seen: set[tuple[str, str]] = set()
    for match in search(query, k, Filters(can_see=can_see, relevant_only=True)):
        descriptor = match.plugin.descriptor
        for operation in descriptor.operations:
            if match.operation is not None and operation.id != match.operation:
                continue
            key = (descriptor.id, operation.id)
            if key in seen or not can_see(*key):
                continue
            seen.add(key)
            found.append(Candidate(descriptor.id, operation, match.score, descriptor.description,
                                   descriptor.name or "", descriptor))  # fmt: skip
    return tuple(found[:k])
