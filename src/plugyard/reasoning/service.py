"""The reasoning service: requests and their records (and, from :class:`SessionDesk`,
sessions and sources), for the yard, the CLI and the REST API alike.

A request's arguments are checked first (``invalid_request`` raises). From then on every
outcome is recorded: a source or prompt over the limits, a bad pin, plugins failing, a
validator rejecting everything — each ends in a DS027 record with ``finalStatus:
failure`` and its code, and the session is written only when a request succeeds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from plugyard.errors import ReasoningError
from plugyard.execution.executor import Executor, new_request_id
from plugyard.reasoning import hooks, labels
from plugyard.reasoning import session as changes
from plugyard.reasoning.bridge import Budget, ModelSource
from plugyard.reasoning.catalog import Catalog
from plugyard.reasoning.context import Embed, RuntimeContext
from plugyard.reasoning.desk import SessionDesk, preferences_of
from plugyard.reasoning.helpers import HELPERS
from plugyard.reasoning.limits import Limits
from plugyard.reasoning.loop import CORE_PLANNER, Ending, Request, chain
from plugyard.reasoning.record import OutcomeRecord, OutcomeStore
from plugyard.reasoning.result import Reasoned
from plugyard.reasoning.session import Session, SessionStore, Turn
from plugyard.reasoning.stages import StageRunner
from plugyard.reasoning.trace import OnEvent, Recorder
from plugyard.runtimes.base import ErrorInfo
from plugyard.telemetry import traced
from plugyard.types import Caller

#: ``{name: text}``, or ``(name, text)`` pairs, or texts (named ``source-1`` …).
Sources = Mapping[str, str] | Sequence[tuple[str, str] | str]
#: The yard's gate for a request that may reach the model: raises to refuse it, given
#: the caller and the texts bound for the model as ``(pointer, text)``.
AdmitModel = Callable[[Caller, Sequence[tuple[str, str]]], None]


class _Args(BaseModel):
    """The arguments of one request, as every surface hands them over."""

    model_config = ConfigDict(strict=True, frozen=True)

    prompt: str = Field(min_length=1, pattern=r"\S")
    session: str | None = Field(default=None, min_length=1, max_length=64)
    pins: dict[str, str] = Field(default_factory=dict)
    budget: int | None = Field(default=None, ge=0, le=1_000)
    sources: list[tuple[str, str]] = Field(default_factory=list)


class ReasoningService(SessionDesk):
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
        application_roles: Sequence[str] = (),
        admit_model: AdmitModel | None = None,
    ) -> None:
        self.executor = executor
        self.catalog = catalog
        self.sessions = sessions
        self.outcomes = outcomes
        self.model = model
        self.embed = embed
        self.limits = limits or Limits()
        #: Who calls when no caller is named: the embedding application itself.
        self.application = Caller(None, tuple(application_roles))
        self.admit_model = admit_model
        self._loaded: set[str] = set()  # sessions whose KB the plugins hold in this process

    @traced("reason")  # the parent span of its calls (docs/telemetry.md)
    async def reason(
        self,
        prompt: str,
        *,
        session: str | None = None,
        sources: Sources = (),
        pins: Mapping[str, str] | None = None,
        budget: int | None = None,
        caller: Caller | None = None,
        on_event: OnEvent | None = None,
    ) -> Reasoned:
        """Run one request through the loop and record it (docs/reasoning.md)."""
        who = caller or self.application
        args = _read(prompt, session, sources, pins, budget)
        if args.budget != 0:  # model-backed plugins may run: the gate first
            self._admit(who, (("/prompt", args.prompt),))
        request = Request(
            new_request_id(),
            args.prompt,
            preferences_of(args.pins),
            tuple(args.sources),
            self.limits.default_llm_budget if args.budget is None else args.budget,
        )
        held = self.session(args.session, who) if args.session else None
        current = held or Session(id=f"turn-{request.request_id}", subject=who.subject)
        recorder = Recorder(on_event)
        run = self._runner(request.request_id, current, who, request.budget, recorder)
        if held is not None:
            await self.load(run, held)
        too_big = self._oversized(request)
        if too_big is not None:
            ending = Ending(error=too_big)
        else:
            ending = await chain(run, request, current, self.limits)
        record = self.outcomes.save(_record(request, held, who.subject, ending, recorder))
        await self._tell_planners(run, ending.planned, record)
        if held is not None and record.final_status == "success":
            await self._commit(run, held, request, ending)
        return _reasoned(request, record, ending, recorder, held, run.budget.used)

    def records(
        self, *, caller: Caller | None = None, session_id: str | None = None, limit: int = 50
    ) -> tuple[OutcomeRecord, ...]:
        """The newest records of the caller (all of them for the application)."""
        subject = (caller or self.application).subject
        return self.outcomes.records(subject=subject, session_id=session_id, limit=limit)

    def record(self, request_id: str, caller: Caller | None = None) -> OutcomeRecord:
        subject = (caller or self.application).subject
        found = self.outcomes.get(request_id)
        if found is None or (subject is not None and found.subject != subject):
            raise ReasoningError(f"no record {request_id!r}", code="outcome_not_found")
        return found

    # ------------------------------------------------------------------------ internals

    def _runner(
        self, request_id: str, session: Session, caller: Caller, budget: int, recorder: Recorder
    ) -> StageRunner:
        context = RuntimeContext(
            request_id,
            caller.subject,
            caller.roles,
            session,
            self.model,
            self.embed,
            HELPERS,
            budget,
        )
        return StageRunner(
            self.executor,
            self.catalog,
            context,
            Budget(budget),
            recorder,
            timeout_ms=self.limits.call_timeout_ms,
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
        answer = solved.answer if solved is not None and ending.attempted else None
        turn = Turn(request.request_id, request.prompt[:2_000], answer, ending.final_status)
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
        args = _Args(
            prompt=prompt,
            session=session,
            pins=dict(pins or {}),
            budget=budget,
            sources=_sources(sources),
        )
    except (ValidationError, TypeError, ValueError) as exc:
        raise ReasoningError(f"bad reasoning request: {exc}", code="invalid_request") from None
    for index, (name, _) in enumerate(args.sources):
        labels.check(name, f"/sources/{index}/name")
    return args


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


def _record(
    request: Request,
    held: Session | None,
    subject: str | None,
    ending: Ending,
    recorder: Recorder,
) -> OutcomeRecord:
    success = ending.final_status == "success"
    answered = ending.attempted is not None and ending.attempted.kind == "answered"
    return OutcomeRecord(
        request_id=request.request_id,
        planner_plugin_id=ending.planner,
        final_status="success" if success else "failure",
        session_id=held.id if held else None,
        planner_attempts=tuple(recorder.planner_attempts),
        stages=tuple(recorder.stages),
        final_answer_status=("answered" if answered else "no-context") if success else None,
        frame_depth=recorder.frame_depth,
        frame_purpose=recorder.frame_purpose,
        error=None if success else ending.error,
        subject=subject,
    )


def _reasoned(
    request: Request,
    record: OutcomeRecord,
    ending: Ending,
    recorder: Recorder,
    held: Session | None,
    used: int,
) -> Reasoned:
    status = record.final_answer_status or "failure"
    solved = ending.attempted.solved if ending.attempted else None
    shown = solved if status == "answered" else None
    return Reasoned(
        request.request_id,
        status,
        record,
        shown.answer if shown else None,
        shown.document if shown else None,
        shown.citations if shown else (),
        tuple(recorder.trace),
        held.id if held else None,
        used,
    )
