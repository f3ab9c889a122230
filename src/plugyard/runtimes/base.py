"""The contract between the executor and every runtime.

A runtime gets a :class:`Target` (the descriptor and where its code lives), one
operation, parameters that are already validated, the caller's :class:`CallContext` and
the host object. It answers with an :class:`Outcome` — or, for a streaming operation, an
async iterator of :class:`Progress` events that ends with an :class:`Outcome`. A plugin
failing is data in the outcome; a runtime raises only for misuse or cancellation.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from plugyard.manifest.model import Operation, PluginDescriptor
from plugyard.types import Caller

Trust = Literal["trusted", "untrusted"]
#: The statuses of the Shu result envelope; DS027 family statuses come beside them.
RESULT_STATUSES = frozenset({"success", "error", "timeout", "pending_approval"})


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """``error`` of the result envelope: a code from errors.py, a message, details."""

    code: str
    message: str
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": dict(self.details)}


@dataclass(frozen=True, slots=True)
class CallContext:
    """Who calls, and how. Read-only for plugins (DS003 runtime context).

    ``subject``, ``roles``, ``permissions`` and ``identities`` are vouched for by the
    surface that built the context — from the authenticated API key, or by the
    application that embeds plugyard — and are what policy, bindings and
    ``host.identity`` read; :attr:`caller` is the first three as the one
    :class:`~plugyard.types.Caller` (whose ``of`` says what a call with no subject may
    do). They stay three fields: they are the plugin context's wire members.
    ``user_context`` is whatever the client sent: data for the plugin, never a grant (a
    body saying ``permissions: [...]`` changes nothing).
    """

    request_id: str
    subject: str | None = None
    roles: tuple[str, ...] = ()
    user_context: Mapping[str, Any] = field(default_factory=dict)
    idempotency_key: str | None = None
    debug: bool = False
    budgets: Mapping[str, Any] = field(default_factory=dict)
    session: Mapping[str, Any] = field(default_factory=dict)
    #: Shu permission strings (``plugin:<id>``) the surface vouches the subject holds.
    permissions: tuple[str, ...] = ()
    #: The subject's linked identities (``google_email`` → address), as the surface knows
    #: them; ``identity:`` bindings and ``host.identity`` answer from these only.
    identities: Mapping[str, str] = field(default_factory=dict)
    #: Members a flow adds to the plugin's context, JSON only (a wrapper gets them too):
    #: the reasoning flow's DS003 runtime context (``requestId``, ``conversation``,
    #: ``modelSettings``…). They never name the caller's rights.
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: Callback surfaces for in-process code only (DS003's "explicit callback surfaces":
    #: a flow's model bridge, its logger); never sent to a wrapper.
    callbacks: Mapping[str, Any] = field(default_factory=dict)

    @property
    def caller(self) -> Caller:
        """Who calls, as policy and rights ask it."""
        return Caller(self.subject, self.roles, self.permissions)

    def as_plugin_context(self, *, wire: bool = False) -> PluginContext:
        """The mapping handed to plugin code as ``context``; ``wire`` leaves out the
        callbacks, for a context that is sent as JSON."""
        context = PluginContext(
            {
                "request_id": self.request_id,
                "subject": self.subject,
                "roles": list(self.roles),
                "user_context": dict(self.user_context),
                "idempotency_key": self.idempotency_key,
                "debug": self.debug,
                "budgets": dict(self.budgets),
                "session": dict(self.session),
            }
        )
        if self.extra:
            context.update({k: v for k, v in self.extra.items() if k not in context})
        if self.callbacks and not wire:
            context.update({k: v for k, v in self.callbacks.items() if k not in _OWN})
        return context


class PluginContext(dict[str, Any]):
    """A plugin's ``context``: a plain mapping, whose members read as attributes too —
    as Shu's ``ExecuteContext`` is read (``context.user_id``, the authenticated subject;
    ``context.agent_key``, none here). A member it lacks is an ``AttributeError``, so
    ``getattr(context, name, default)`` works as on Shu's object."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name == "user_id":
            return self.get("subject")
        if name == "agent_key":
            return self.get("agent_key")
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


#: The members of a plugin context that neither ``extra`` nor ``callbacks`` may replace.
_OWN = frozenset(
    ("request_id", "subject", "roles", "user_context", "idempotency_key", "debug", "budgets",
     "session")
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Target:
    """A plugin as a runtime sees it: its descriptor and where its code lives."""

    descriptor: PluginDescriptor
    location: str | None = None
    trust: Trust = "trusted"
    content_hash: str = ""


@dataclass(frozen=True, slots=True)
class Progress:
    """One progress event of a streaming operation."""

    message: str | None = None
    data: Any = None
    percent: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "progress"}
        if self.message is not None:
            out["message"] = self.message
        if self.data is not None:
            out["data"] = self.data
        if self.percent is not None:
            out["percent"] = self.percent
        return out


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a plugin produced, before the executor checks and wraps it."""

    status: str = "success"
    data: Any = None
    error: ErrorInfo | None = None
    cost: Mapping[str, float] = field(default_factory=dict)
    diagnostics: tuple[str, ...] = ()
    skips: tuple[Mapping[str, Any], ...] = ()
    citations: tuple[Mapping[str, Any], ...] = ()
    next_cursor: str | None = None


Answer = Outcome | AsyncIterator[Progress | Outcome]


class Runtime(Protocol):
    """Runs operations of plugins of one runtime kind."""

    kind: str

    async def invoke(
        self,
        target: Target,
        operation: Operation,
        params: dict[str, Any],
        context: CallContext,
        host: Any,
    ) -> Answer:
        """Run ``operation``; a streaming operation answers with an async iterator."""
        ...

    def check(self, target: Target) -> str | None:
        """Why ``target`` cannot run here (``None`` when it can). Cheap; no side effects
        beyond loading and caching the plugin's code."""
        ...
