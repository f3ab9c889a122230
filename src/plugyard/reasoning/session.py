"""Sessions: the state a reasoning conversation keeps between requests.

A session holds its mounted KB identity, the knowledge units staged for its next turn
(``current-turn``), the units earlier turns committed (``committed-session``), its plugin
preferences by stage, and its last turns. Changes are pure functions from one frozen
:class:`Session` to the next, applied by the store inside one transaction
(:meth:`SessionStore.update`): a request that fails writes nothing.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Protocol

from plugyard.reasoning.units import Unit, dicts, merged

#: Bounds of what one session keeps: the oldest committed units and turns go first.
MAX_SESSION_UNITS = 5_000
MAX_STAGED_UNITS = 500
MAX_TURNS = 20
MAX_ANSWER_CHARS = 4_000


def new_session_id() -> str:
    return "ses_" + secrets.token_hex(10)


@dataclass(frozen=True, slots=True)
class Turn:
    """One finished request of a session: what was asked and answered."""

    request_id: str
    prompt: str
    answer: str | None
    status: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "requestId": self.request_id,
            "prompt": self.prompt,
            "answer": self.answer,
            "status": self.status,
        }

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Turn:
        answer = data.get("answer")
        return cls(
            str(data.get("requestId", "")),
            str(data.get("prompt", "")),
            answer if isinstance(answer, str) else None,
            str(data.get("status", "")),
        )


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    subject: str | None = None
    kb_id: str | None = None
    kb_name: str | None = None
    preferences: Mapping[str, str] = field(default_factory=dict)
    staged: tuple[Unit, ...] = ()
    committed: tuple[Unit, ...] = ()
    conversation: tuple[Turn, ...] = ()
    created_at: datetime | None = None
    updated_at: datetime | None = None

    def view(self) -> dict[str, Any]:
        """The session as plugins see it in their context (DS003 ``session``)."""
        return {
            "id": self.id,
            "sessionId": self.id,
            "kbId": self.kb_id,
            "kbName": self.kb_name,
            "preferences": dict(self.preferences),
            "stagedUnitCount": len(self.staged),
            "committedUnitCount": len(self.committed),
        }

    def stats(self) -> dict[str, Any]:
        """DS027's ``workspaceStats`` of a session event."""
        return {
            "stagedUnits": len(self.staged),
            "committedUnits": len(self.committed),
            "turns": len(self.conversation),
        }

    def to_dict(self, *, units: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "subject": self.subject,
            "kbId": self.kb_id,
            "kbName": self.kb_name,
            "preferences": dict(self.preferences),
            "workspaceStats": self.stats(),
            "conversation": [t.to_dict() for t in self.conversation],
            "createdAt": self.created_at.isoformat() if self.created_at else None,
            "updatedAt": self.updated_at.isoformat() if self.updated_at else None,
        }
        if units:
            out["staged"] = dicts(self.staged)
            out["committed"] = dicts(self.committed)
        return out


@dataclass(frozen=True, slots=True)
class Source:
    """A source document uploaded to a session, normalised into units."""

    id: str
    session_id: str
    name: str
    sha256: str
    bytes: int
    units: tuple[Unit, ...] = ()
    created_at: datetime | None = None

    def to_dict(self, *, units: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "sessionId": self.session_id,
            "name": self.name,
            "sha256": self.sha256,
            "bytes": self.bytes,
            "unitCount": len(self.units),
            "createdAt": self.created_at.isoformat() if self.created_at else None,
        }
        if units:
            out["units"] = dicts(self.units)
        return out


# ----------------------------------------------------------------------------- changes


def staged(session: Session, units: Iterable[Unit]) -> Session:
    """``units`` staged for the session's next turn (the newest kept under the bound)."""
    both = merged(session.staged, units)
    return replace(session, staged=both[-MAX_STAGED_UNITS:])


def committed(session: Session, units: Iterable[Unit], turn: Turn) -> Session:
    """A finished turn: its units committed, nothing left staged, the turn remembered."""
    kept = merged(session.committed, units)[-MAX_SESSION_UNITS:]
    answer = turn.answer[:MAX_ANSWER_CHARS] if turn.answer else turn.answer
    turns = (*session.conversation, replace(turn, answer=answer))[-MAX_TURNS:]
    return replace(session, staged=(), committed=kept, conversation=turns)


def mounted(session: Session, kb_id: str | None, kb_name: str | None) -> Session:
    return replace(session, kb_id=kb_id, kb_name=kb_name)


def preferring(session: Session, preferences: Mapping[str, str]) -> Session:
    return replace(session, preferences=dict(preferences))


# ------------------------------------------------------------------------------ stores

Change = Callable[[Session], Session]


class SessionStore(Protocol):
    """Sessions and their sources; :meth:`update` applies a change in one transaction."""

    def create(self, session: Session) -> Session: ...

    def get(self, session_id: str) -> Session | None: ...

    def update(self, session_id: str, change: Change) -> Session | None:
        """Apply ``change`` to the stored session atomically; ``None`` if there is none."""
        ...

    def sessions(self, subject: str | None, limit: int = 50) -> tuple[Session, ...]:
        """The newest sessions of ``subject`` (``None``: of every subject)."""
        ...

    def add_source(self, source: Source) -> Source: ...

    def sources(self, session_id: str) -> tuple[Source, ...]: ...
