"""Session operations of the reasoning service: create, prefer, stage, mount, save,
fork, upload sources — each telling every enabled KB plugin (DS027 ``onSessionEvent``,
``onSourceText``). A session is used only by the subject that created it, or by the
embedding application (a caller without a subject)."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from plugyard.errors import ReasoningError
from plugyard.execution.executor import new_request_id
from plugyard.reasoning import hooks, labels
from plugyard.reasoning import session as changes
from plugyard.reasoning.catalog import Catalog, by_stage, ordered
from plugyard.reasoning.limits import Limits
from plugyard.reasoning.session import Session, SessionStore, Source, new_session_id
from plugyard.reasoning.stages import StageRunner
from plugyard.reasoning.trace import Recorder
from plugyard.reasoning.units import units_of
from plugyard.types import Caller


class SessionDesk:
    sessions: SessionStore
    catalog: Catalog
    limits: Limits
    application: Caller
    admit_model: Callable[[Caller, Sequence[tuple[str, str]]], None] | None
    model: Callable[[], Any] | None
    _loaded: set[str]

    def _admit(self, caller: Caller, texts: Sequence[tuple[str, str]]) -> None:
        """The yard's gate, for a request whose plugins may call the model."""
        if self.admit_model is not None and self.model is not None:
            self.admit_model(caller, texts)

    def _runner(
        self, request_id: str, session: Session, caller: Caller, budget: int, recorder: Recorder
    ) -> StageRunner:
        raise NotImplementedError

    async def create_session(
        self,
        *,
        kb_id: str | None = None,
        kb_name: str | None = None,
        preferences: Mapping[str, str] | None = None,
        caller: Caller | None = None,
    ) -> Session:
        """A new session; every KB plugin is told (``session-created``)."""
        who = caller or self.application
        chosen = preferences_of(preferences)
        fresh = Session(new_session_id(), who.subject, kb_id, kb_name, chosen)
        created = self.sessions.create(fresh)
        await hooks.session_event(
            self._quiet(created, who), "session-created", created, reason="created"
        )
        self._loaded.add(created.id)
        return created

    def session(self, session_id: str, caller: Caller | None = None) -> Session:
        """The session, if ``caller`` may use it (``session_not_found`` otherwise)."""
        who = caller or self.application
        found = self.sessions.get(session_id)
        if found is None or (who.subject is not None and found.subject != who.subject):
            raise ReasoningError(f"no session {session_id!r}", code="session_not_found")
        return found

    def list_sessions(self, caller: Caller | None = None, limit: int = 50) -> tuple[Session, ...]:
        return self.sessions.sessions((caller or self.application).subject, limit)

    async def prefer(
        self, session_id: str, preferences: Mapping[str, str], caller: Caller | None = None
    ) -> Session:
        """Set the preferred plugin per stage: a strong prior, never a filter."""
        self.session(session_id, caller)
        chosen = preferences_of(preferences)
        return self._changed(session_id, lambda s: changes.preferring(s, chosen))

    async def stage_units(
        self, session_id: str, units: Sequence[Mapping[str, Any]], caller: Caller | None = None
    ) -> Session:
        """Stage units for the next turn (``session-kus-added``, scope ``current-turn``)."""
        self.session(session_id, caller)
        found = units_of(list(units))
        if not found:
            raise ReasoningError("no unit has text", code="invalid_request")
        updated = self._changed(session_id, lambda s: changes.staged(s, found))
        await hooks.session_event(
            self._quiet(updated, caller),
            "session-kus-added",
            updated,
            units=found,
            scope="current-turn",
            reason="staged",
        )
        return updated

    async def mount(
        self,
        session_id: str,
        kb_id: str,
        kb_name: str | None = None,
        caller: Caller | None = None,
    ) -> Session:
        """Mount a KB on the session (``kb-loaded``)."""
        before = self.session(session_id, caller)
        after = self._changed(session_id, lambda s: changes.mounted(s, kb_id, kb_name))
        await hooks.session_event(
            self._quiet(after, caller),
            "kb-loaded",
            after,
            previous=before,
            requested_kb_id=kb_id,
            units=after.committed,
            scope="committed-session",
            reason="mounted",
        )
        return after

    async def save_kb(
        self, session_id: str, kb_name: str | None = None, caller: Caller | None = None
    ) -> Session:
        """Save the session's units as its KB (``kb-saved``, with the snapshot's counts)."""
        before = self.session(session_id, caller)
        kb_id = before.kb_id or "kb_" + secrets.token_hex(8)
        name = kb_name or before.kb_name or kb_id
        after = self._changed(session_id, lambda s: changes.mounted(s, kb_id, name))
        snapshot = {"units": len(after.committed), "sources": len(self.sessions.sources(after.id))}
        await hooks.session_event(
            self._quiet(after, caller),
            "kb-saved",
            after,
            previous=before,
            snapshot=snapshot,
            reason="saved",
        )
        return after

    async def fork(self, session_id: str, caller: Caller | None = None) -> Session:
        """A new session with this one's KB and committed units (``kb-forked``)."""
        source = self.session(session_id, caller)
        copy = replace(source, id=new_session_id(), staged=(), conversation=())
        forked = self.sessions.create(copy)
        await hooks.session_event(
            self._quiet(forked, caller),
            "kb-forked",
            forked,
            previous=source,
            units=forked.committed,
            scope="committed-session",
            reason=f"forked from {source.id}",
        )
        self._loaded.add(forked.id)
        return forked

    async def add_source(
        self, session_id: str, name: str, text: str, caller: Caller | None = None
    ) -> Source:
        """Upload a source: normalised into units, offered to every KB plugin, kept."""
        who = caller or self.application
        labels.check(name, "/name")
        held = self.session(session_id, who)
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > self.limits.max_source_bytes:
            raise ReasoningError(
                f"the source is {size} bytes, over the {self.limits.max_source_bytes} allowed",
                code="request_too_large",
            )
        if self.limits.default_llm_budget:  # its normalisers may call the model
            self._admit(who, ())
        source_id = "src_" + secrets.token_hex(10)
        run = self._runner(new_request_id(), held, who, self.limits.default_llm_budget, Recorder())
        await self.load(run, held)
        detectors = ordered(self.catalog, "seed-detector", {}, held.preferences)
        units = await hooks.source_text(run, detectors, name, text, source_id)
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        return self.sessions.add_source(Source(source_id, held.id, name, digest, size, units))

    def sources(self, session_id: str, caller: Caller | None = None) -> tuple[Source, ...]:
        self.session(session_id, caller)
        return self.sessions.sources(session_id)

    async def load(self, run: StageRunner, session: Session) -> None:
        """The first use of a session in this process hands its KB to the plugins again
        (``kb-loaded``): their private indices do not outlive a restart; the store does."""
        if session.id in self._loaded:
            return
        self._loaded.add(session.id)
        units = [u for s in self.sessions.sources(session.id) for u in s.units]
        await hooks.session_event(
            run,
            "kb-loaded",
            session,
            requested_kb_id=session.kb_id,
            units=[*session.committed, *units],
            scope="committed-session",
            reason="session-resumed",
        )

    def _quiet(self, session: Session, caller: Caller | None) -> StageRunner:
        """A runner for hook calls outside a request (no model calls)."""
        return self._runner(new_request_id(), session, caller or self.application, 0, Recorder())

    def _changed(self, session_id: str, change: changes.Change) -> Session:
        updated = self.sessions.update(session_id, change)
        if updated is None:
            raise ReasoningError(f"no session {session_id!r}", code="session_not_found")
        return updated


def preferences_of(preferences: Mapping[str, str] | None) -> dict[str, str]:
    """Choices by stage (``invalid_request`` for an unknown stage or a non-id)."""
    try:
        chosen = by_stage(dict(preferences or {}))
    except (ValueError, TypeError) as exc:
        raise ReasoningError(str(exc), code="invalid_request") from None
    if not all(isinstance(v, str) and v for v in chosen.values()):
        raise ReasoningError("a choice names a plugin id", code="invalid_request")
    return chosen
