"""Rights of management actions: who may change what the yard holds, and whose records
a subject sees.

Calling an operation is the policy's to decide (grants on plugin, operation and verb).
Managing the yard — storing a pipeline every key can then run, minting keys, loading a
policy, registering plugins — is not a call of any plugin, so no grant names it; each
such action has a named :class:`Right` here instead, and every surface (REST routes, the
console's pages, the CLI and the services beneath them) asks :func:`require` for the same
right, so the console can never allow what the REST API refuses, or the other way round.

Records a subject leaves behind (pipeline runs, feeds) belong to it: :func:`owner_scope`
and :func:`may_see` say what "admins see all" means, once. A record another subject may
not see answers its ``*_not_found`` code, as if it did not exist, so ids do not leak.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Protocol

from plugyard.errors import PlugyardError
from plugyard.types import ADMIN_ROLE


class Right(StrEnum):
    """A management action, by name (``permission_denied`` details name it)."""

    PIPELINE_SAVE = "pipeline.save"
    PIPELINE_DELETE = "pipeline.delete"
    KEY_MANAGE = "key.manage"
    PLUGIN_REGISTER = "plugin.register"
    PACKAGE_MANAGE = "package.manage"
    MCP_PIN_APPROVE = "mcp_pin.approve"
    POLICY_MANAGE = "policy.manage"
    AUDIT_READ = "audit.read"
    SECRET_SYSTEM = "secret.system"
    FEED_RUN_DUE = "feed.run_due"
    MEMORY_MANAGE = "memory.manage"
    #: See and act on what other subjects own: their pipeline runs, their feeds.
    OTHERS_RECORDS = "others.records"


#: The roles holding each right. Every right is the ``admin`` role's today; a right given
#: to another role is given here, and every surface follows.
HOLDERS: Mapping[Right, frozenset[str]] = {right: frozenset({ADMIN_ROLE}) for right in Right}


#: The owner no record has (subjects are never empty).
NOBODY = ""


class Holder(Protocol):
    """Who acts: a key's principal, a console viewer, a :class:`~plugyard.types.Caller`
    (``Caller.of(subject, roles)`` for APIs that take them apart)."""

    @property
    def subject(self) -> str | None: ...

    @property
    def roles(self) -> tuple[str, ...]: ...


class RightRefused(PlugyardError):
    """``permission_denied`` for a management action; ``details`` name the right."""

    default_code = "permission_denied"

    def __init__(self, who: Holder, right: Right) -> None:
        super().__init__(f"subject {who.subject!r} does not hold the right {right.value!r}")
        self.details: dict[str, Any] = {"right": right.value}


def holds(who: Holder, right: Right) -> bool:
    return not HOLDERS[right].isdisjoint(who.roles)


def require(who: Holder, right: Right) -> None:
    """Nothing when ``who`` holds ``right``; :class:`RightRefused` otherwise."""
    if not holds(who, right):
        raise RightRefused(who, right)


def owner_scope(who: Holder) -> str | None:
    """The owner a listing for ``who`` is limited to: its own subject, or ``None`` (every
    owner) for a holder of :attr:`Right.OTHERS_RECORDS`. A holder with no subject and
    without that right owns nothing: its scope is :data:`NOBODY`."""
    if holds(who, Right.OTHERS_RECORDS):
        return None
    return NOBODY if who.subject is None else who.subject


def may_see(who: Holder, owner: str | None) -> bool:
    """Whether ``who`` may see (and act on) a record ``owner`` left. A record of no
    subject (the embedding application's) is only for those who see every owner."""
    return holds(who, Right.OTHERS_RECORDS) or (owner is not None and owner == who.subject)
