"""The policy hook of the call path.

Every call asks for a :class:`Decision` before anything runs. Until role-based policy is
configured the host allows everything — but the question is always asked, so a policy
plugged in later holds for every surface at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from plugyard.types import Caller

Outcome = Literal["allow", "deny", "allow_with_approval"]


@dataclass(frozen=True, slots=True)
class Decision:
    """A policy answer with its reason and the version of the policy that gave it."""

    outcome: Outcome
    reason: str
    policy_version: str

    @property
    def allowed(self) -> bool:
        return self.outcome == "allow"


class Policy(Protocol):
    def decide(
        self, subject: Caller, plugin_id: str, operation: str, params: Mapping[str, Any]
    ) -> Decision: ...


ALLOW_ALL = Decision("allow", "no policy configured: everything is allowed", "none")


class AllowAll:
    """The policy of a host with no policy configured."""

    def decide(
        self, subject: Caller, plugin_id: str, operation: str, params: Mapping[str, Any]
    ) -> Decision:
        del subject, plugin_id, operation, params
        return ALLOW_ALL
