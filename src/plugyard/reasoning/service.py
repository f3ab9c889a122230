"""The reasoning service: sessions, sources, requests and their records, for the yard,
the CLI and the REST API alike.

A request's arguments are checked first (``invalid_request`` raises). From then on every
outcome is recorded: a source or prompt over the limits, a bad pin, a plugin failing,
a validator rejecting everything — each ends in a DS027 record with ``finalStatus:
failure`` and the code, and the session is written only when a request succeeds.
Sessions belong to the subject that created them; ``subject=None`` is the embedding
application itself, which may use any.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from plugyard.errors import ReasoningError
from plugyard.execution.executor import Executor, new_request_id
from plugyard.reasoning import hooks
from plugyard.reasoning import session as changes
from plugyard.reasoning.bridge import Budget, ModelSource
from plugyard.reasoning.catalog import Catalog, by_stage, ordered
from plugyard.reasoning.context import Embed, RuntimeContext
from plugyard.reasoning.helpers import HELPERS
from plugyard.reasoning.limits import Limits
from plugyard.reasoning.loop import CORE_PLANNER, Ending, Request, chain
from plugyard.reasoning.record import OutcomeRecord, OutcomeStore
from plugyard.reasoning.result import Reasoned
from plugyard.reasoning.session import Session, SessionStore, Source, Turn, new_session_id
from plugyard.reasoning.stages import StageRunner
from plugyard.reasoning.trace import OnEvent, Recorder
from plugyard.reasoning.units import units_of
from plugyard.runtimes.base import ErrorInfo

Sources = Mapping[str, str] | Sequence[tuple[str, str] | str]


class _Args(BaseModel):
    """The arguments of one request, as every surface hands them over."""

    model_config = ConfigDict(strict=True, frozen=True)

    prompt: str = Field(min_length=1, pattern=r"\S")
    session: str | None = Field(default=None, min_length=1, max_length=64)
    pins: dict[str, str] = Field(default_factory=dict)
    budget: int | None = Field(default=None, ge=0, le=1_000)
    sources: list[tuple[str, str]] = Field(default_factory=list)


class ReasoningService:
    def __init__(
        self,
        executor: Executor,
        catalog: Catalog,
        sessions: SessionStore,
        outcomes: OutcomeStore,
        *,
        model: ModelSource | None = None,
        embed: Embed | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.executor = executor
        self.catalog = catalog
        self.sessions = sessions
        self.outcomes = outcomes
        self.model = model
        self.embed = embed
        self.limits = limits or Limits()
        self._loaded: set[str] = set()  # sessions whose KB the plugins hold in this process

    # ------------------------------------------------------------------------ requests

    async def reason(
        self,
        prompt: str,
        *,
        session: str | None = None,
        sources: Sources = (),
        pins: Mapping[str, str] | None = None,
        budget: int | None = None,
        subject: str | None = None,
        roles: Sequence[str] = (),
        on_event: OnEvent | None = None,
    ) -> Reasoned:
        """Run one request through the loop and record it (docs/reasoning.md)."""
        args = _read(prompt, session, sources, pins, budget)
        request = Request(
            new_request_id(),
            args.prompt,
            _preferences(args.pins),
            tuple(args.sources),
            self.limits.default_llm_budget if args.budget is None else args.budget,
        )
        held = self.session(args.session, subject) if args.session else None
        current = held or Session(id=f"turn-{request.request_id}", subject=subject)
        recorder = Recorder(on_event)
        run = self._runner(request.request_id, current, subject, roles, request.budget, recorder)
        if held is not None:
            await self._load(run, held)
        too_big = self._oversized(request)
        ending = (
            Ending(error=too_big) if too_big else await chain(run, request, current, self.limits)
        )
        record = self.outcomes.save(_record(request, held, subject, ending, recorder))
        await self._tell_planners(run, ending.planned, record)
        if held is not None and record.final_status == "success":
            await self._commit(run, held, request, ending)
        solved = ending.attempted.solved if ending.attempted else None
        status = (
            "failure"
            if record.final_status == "failure"
            else (record.final_answer_status or "answered")
        )
        answered = status == "answered" and solved is not None
        return Reasoned(
            request.request_id,
            status,
            record,
            solved.answer if answered and solved else None,
            solved.document if answered and solved else None,
            solved.citations if answered and solved else (),
            tuple(recorder.trace),
            held.id if held else None,
            run.budget.used,
        )

    # ------------------------------------------------------------------------ sessions

    async def create_session(
        self,
        *,
        subject: str | None = None,
        kb_id: str | None = None,
        kb_name: str | None = None,
        preferences: Mapping[str, str] | None = None,
    ) -> Session:
        """A new session; every KB plugin is told (``session-created``)."""
        chosen = _preferences(preferences)
        created = self.sessions.create(Session(new_session_id(), subject, kb_id, kb_name, chosen))
        run = self._runner(new_request_id(), created, subject, (), 0, Recorder())
        await hooks.session_event(run, "session-created", created, reason="created")
        self._loaded.add(created.id)
        return created

    def session(self, session_id: str, subject: str | None = None) -> Session:
        """The session, if ``subject`` may use it (``session_not_found`` otherwise)."""
        found = self.sessions.get(session_id)
        if found is None or (subject is not None and found.subject != subject):
            raise ReasoningError(f"no session {session_id!r}", code="session_not_found")
        return found

    def list_sessions(self, subject: str | None = None, limit: int = 50) -> tuple[Session, ...]:
        return self.sessions.sessions(subject, limit)

    async def prefer(
        self, session_id: str, preferences: Mapping[str, str], subject: str | None = None
    ) -> Session:
        """Set the session's preferred plugin per stage (a strong prior, not a filter)."""
        self.session(session_id, subject)
        chosen = _preferences(preferences)
        return self._changed(session_id, lambda s: changes.preferring(s, chosen))

    async def stage_units(
        self, session_id: str, units: Sequence[Mapping[str, Any]], subject: str | None = None
    ) -> Session:
        """Stage units for the session's next turn (``session-kus-added``, current-turn)."""
        self.session(session_id, subject)
        found = units_of(list(units))
        if not found:
            raise ReasoningError("no unit has text", code="invalid_request")
        updated = self._changed(session_id, lambda s: changes.staged(s, found))
        run = self._runner(new_request_id(), updated, subject, (), 0, Recorder())
        await hooks.session_event(
            run, "session-kus-added", updated, units=found, scope="current-turn", reason="staged"
        )
        return updated

    async def mount(
        self, session_id: str, kb_id: str, kb_name: str | None = None, subject: str | None = None
    ) -> Session:
        """Mount a KB on the session (``kb-loaded``)."""
        before = self.session(session_id, subject)
        after = self._changed(session_id, lambda s: changes.mounted(s, kb_id, kb_name))
        run = self._runner(new_request_id(), after, subject, (), 0, Recorder())
        await hooks.session_event(
            run,
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
        self, session_id: str, kb_name: str | None = None, subject: str | None = None
    ) -> Session:
        """Save the session's units as its KB (``kb-saved``, with a snapshot's counts)."""
        before = self.session(session_id, subject)
        kb_id = before.kb_id or "kb_" + secrets.token_hex(8)
        name = kb_name or before.kb_name or kb_id
        after = self._changed(session_id, lambda s: changes.mounted(s, kb_id, name))
        snapshot = {"units": len(after.committed), "sources": len(self.sessions.sources(after.id))}
        run = self._runner(new_request_id(), after, subject, (), 0, Recorder())
        await hooks.session_event(
            run, "kb-saved", after, previous=before, snapshot=snapshot, reason="saved"
        )
        return after

    async def fork(self, session_id: str, subject: str | None = None) -> Session:
        """A new session with this one's KB and committed units (``kb-forked``)."""
        source = self.session(session_id, subject)
        forked = self.sessions.create(
            replace(source, id=new_session_id(), staged=(), conversation=(), subject=source.subject)
        )
        run = self._runner(new_request_id(), forked, subject, (), 0, Recorder())
        await hooks.session_event(
            run,
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
        self, session_id: str, name: str, text: str, subject: str | None = None
    ) -> Source:
        """Upload a source document: normalised, offered to every KB plugin, kept."""
        held = self.session(session_id, subject)
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > self.limits.max_source_bytes:
            raise ReasoningError(
                f"the source is {size} bytes, over the {self.limits.max_source_bytes} allowed",
                code="request_too_large",
            )
        source_id = "src_" + secrets.token_hex(10)
        run = self._runner(
            new_request_id(), held, subject, (), self.limits.default_llm_budget, Recorder()
        )
        await self._load(run, held)
        detectors = ordered(self.catalog, "seed-detector", {}, held.preferences)
        units = await hooks.source_text(run, detectors, name, text, source_id)
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        return self.sessions.add_source(Source(source_id, held.id, name, digest, size, units))

    def sources(self, session_id: str, subject: str | None = None) -> tuple[Source, ...]:
        self.session(session_id, subject)
        return self.sessions.sources(session_id)

    # ------------------------------------------------------------------------- records

    def records(
        self, *, subject: str | None = None, session_id: str | None = None, limit: int = 50
    ) -> tuple[OutcomeRecord, ...]:
        return self.outcomes.records(subject=subject, session_id=session_id, limit=limit)

    def record(self, request_id: str, subject: str | None = None) -> OutcomeRecord:
        found = self.outcomes.get(request_id)
        if found is None or (subject is not None and found.subject != subject):
            raise ReasoningError(f"no record {request_id!r}", code="outcome_not_found")
        return found

    # ------------------------------------------------------------------------ internals

    def _runner(
        self,
        request_id: str,
        session: Session,
        subject: str | None,
        roles: Sequence[str],
        budget: int,
        recorder: Recorder,
    ) -> StageRunner:
        context = RuntimeContext(
            request_id, subject, tuple(roles), session, self.model, self.embed, HELPERS, budget
        )
        return StageRunner(
            self.executor,
            self.catalog,
            context,
            Budget(budget),
            recorder,
            timeout_ms=self.limits.call_timeout_ms,
        )

    async def _load(self, run: StageRunner, session: Session) -> None:
        """The first use of a session in this process hands its KB to the plugins again
        (``kb-loaded``): their private indices do not outlive a restart, the store does."""
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

    async def _tell_planners(
        self, run: StageRunner, planners: tuple[str, ...], record: OutcomeRecord
    ) -> None:
        """``recordOutcome`` on each planner that planned; a failure is only traced."""
        outcome = {k: v for k, v in record.to_dict().items() if k != "recordedAt"}
        for planner in planners:
            if planner != CORE_PLANNER:
                await run.run(
                    "planner", planner, "record_outcome", outcome, planner=planner, kind="planner"
                )

    async def _commit(
        self, run: StageRunner, held: Session, request: Request, ending: Ending
    ) -> None:
        solved = ending.attempted.solved if ending.attempted else None
        turn = Turn(
            request.request_id,
            request.prompt[:2_000],
            solved.answer if solved else None,
            ending.final_status,
        )
        units = ending.units
        updated = self._changed(held.id, lambda s: changes.committed(s, units, turn))
        if units:
            await hooks.session_event(
                run,
                "session-kus-added",
                updated,
                units=units,
                scope="committed-session",
                reason="turn-committed",
            )

    def _changed(self, session_id: str, change: changes.Change) -> Session:
        updated = self.sessions.update(session_id, change)
        if updated is None:
            raise ReasoningError(f"no session {session_id!r}", code="session_not_found")
        return updated

    def _oversized(self, request: Request) -> ErrorInfo | None:
        limits = self.limits
        if len(request.prompt) > limits.max_prompt_chars:
            return ErrorInfo(
                "request_too_large", f"the prompt is over {limits.max_prompt_chars} characters"
            )
        if len(request.sources) > limits.max_sources:
            return ErrorInfo("request_too_large", f"more than {limits.max_sources} sources")
        for name, text in request.sources:
            size = len(text.encode("utf-8", "surrogatepass"))
            if size > limits.max_source_bytes:
                return ErrorInfo(
                    "request_too_large",
                    f"source {name!r} is {size} bytes, over the {limits.max_source_bytes} allowed",
                )
        return None


def _read(prompt: Any, session: Any, sources: Any, pins: Any, budget: Any) -> _Args:
    try:
        return _Args(
            prompt=prompt,
            session=session,
            pins=dict(pins or {}),
            budget=budget,
            sources=_sources(sources),
        )
    except (ValidationError, TypeError, ValueError) as exc:
        raise ReasoningError(f"bad reasoning request: {exc}", code="invalid_request") from None


def _sources(sources: Any) -> list[tuple[str, str]]:
    if isinstance(sources, Mapping):
        return [(str(k), v) for k, v in sources.items()]
    out: list[tuple[str, str]] = []
    for index, item in enumerate(sources or ()):
        if isinstance(item, str):
            out.append((f"source-{index + 1}", item))
        else:
            name, text = item
            out.append((str(name), text))
    return out


def _preferences(preferences: Mapping[str, str] | None) -> dict[str, str]:
    try:
        chosen = by_stage(dict(preferences or {}))
    except ValueError as exc:
        raise ReasoningError(str(exc), code="invalid_request") from None
    if not all(isinstance(v, str) and v for v in chosen.values()):
        raise ReasoningError("a preference names a plugin id", code="invalid_request")
    return chosen


def _record(
    request: Request,
    held: Session | None,
    subject: str | None,
    ending: Ending,
    recorder: Recorder,
) -> OutcomeRecord:
    final = ending.final_status
    answer = ending.attempted.kind if ending.attempted else None
    return OutcomeRecord(
        request_id=request.request_id,
        planner_plugin_id=ending.planner,
        final_status="success" if final == "success" else "failure",
        session_id=held.id if held else None,
        planner_attempts=tuple(recorder.planner_attempts),
        stages=tuple(recorder.stages),
        final_answer_status=None
        if final != "success"
        else ("answered" if answer == "answered" else "no-context"),
        frame_depth=recorder.frame_depth,
        frame_purpose=recorder.frame_purpose,
        error=ending.error if final != "success" else None,
        subject=subject,
    )
