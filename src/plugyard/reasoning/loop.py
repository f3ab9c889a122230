"""The request loop (DS003 "Execution Rules", DS027), as one chain of stages:

pins checked → request sources normalised and offered to the KB plugins → seed detection
(the first detector whose answer the core can admit; its current-turn units staged and
every KB plugin told) → planners in turn, each ``buildPlan``, and each plan run
(:mod:`.attempt`): a validation rejection backtracks to the planner's next plan, a stage
that only found weak outcomes or failures escalates to the next planner → the DS027
record, written for every request → ``recordOutcome`` on each planner that planned →
on success only, the turn committed to the session.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from plugyard.reasoning import hooks
from plugyard.reasoning.attempt import Attempted, attempt
from plugyard.reasoning.catalog import Catalog, members, misnamed, ordered
from plugyard.reasoning.frames import FrameBudget, Solving
from plugyard.reasoning.limits import Limits
from plugyard.reasoning.plan import Plan, planner_input, read_plan
from plugyard.reasoning.session import Session
from plugyard.reasoning.sop import Admitted, SopError, admit
from plugyard.reasoning.stages import StageRunner
from plugyard.reasoning.task import Task
from plugyard.reasoning.units import Unit, dicts, merged
from plugyard.runtimes.base import ErrorInfo

#: The planner id of the record when no planner plugin is registered: the core then
#: orders the stages itself, by the descriptors (catalog.members).
CORE_PLANNER = "plugyard-core"
_RANK = {"answered": 4, "weak": 3, "rejected": 2, "failed": 1}


@dataclass(frozen=True, slots=True)
class Request:
    request_id: str
    prompt: str
    pins: Mapping[str, str] = field(default_factory=dict)
    sources: tuple[tuple[str, str], ...] = ()  # (name, text), staged for this turn
    budget: int = 0


@dataclass(frozen=True, slots=True)
class Ending:
    """How the chain ended, before it is recorded."""

    attempted: Attempted | None = None
    error: ErrorInfo | None = None
    planner: str = ""
    planned: tuple[str, ...] = ()
    units: tuple[Unit, ...] = ()  # the turn's units, committed on success

    @property
    def final_status(self) -> str:
        kind = self.attempted.kind if self.attempted else None
        return "success" if kind in ("answered", "weak") and self.error is None else "failure"


async def chain(run: StageRunner, request: Request, session: Session, limits: Limits) -> Ending:
    catalog = run.catalog
    problem = _pins(catalog, request.pins)
    if problem is not None:
        return Ending(error=problem)
    preferences = _usable(catalog, session.preferences)
    detectors = ordered(catalog, "seed-detector", request.pins, preferences)
    offered: list[Unit] = []
    for index, (name, text) in enumerate(request.sources):
        # The source's own name is what a citation shows; the index keeps two apart.
        source_id = name if [n for n, _ in request.sources].count(name) == 1 else f"{name}#{index}"
        offered.extend(await hooks.source_text(run, detectors, name, text, source_id))
    # Seeds are detected before any plan exists: their stage entries name the planner in
    # charge of the request, the first one the loop will ask.
    lead = (ordered(catalog, "planner", request.pins, preferences) or (CORE_PLANNER,))[0]
    admitted = await detect(run, detectors[: limits.max_plugins_per_stage], request, session, lead)
    if isinstance(admitted, ErrorInfo):
        return Ending(error=admitted)
    units = merged(session.staged, admitted.units)
    if admitted.units:
        await hooks.session_event(
            run,
            "session-kus-added",
            session,
            units=admitted.units,
            scope="current-turn",
            reason="seed-detection",
        )
    task = Task.of(request.prompt, admitted.intents, units)
    ending = await plans(run, request, session, task, preferences, limits)
    return Ending(
        ending.attempted, ending.error, ending.planner, ending.planned, merged(units, offered)
    )


async def detect(
    run: StageRunner,
    detectors: tuple[str, ...],
    request: Request,
    session: Session,
    planner: str = CORE_PLANNER,
) -> Admitted | ErrorInfo:
    """The first seed detector whose answer the core admits (DS027: admit, then stage)."""
    if not detectors:
        run.recorder.note("no seed detector", why="the prompt is the one intent")
        return Admitted(({"id": "i1", "act": "explain", "text": request.prompt},))
    admitted: list[Admitted] = []

    def judge(data: Mapping[str, Any]) -> ErrorInfo | None:
        try:
            found = admit(data.get("intentCNL"), data.get("currentTurnContextCNL"))
        except SopError as exc:
            return ErrorInfo("invalid_output", f"the seed documents do not admit: {exc}")
        if not found.intents:
            return ErrorInfo("invalid_output", "intentCNL admits no intent")
        admitted.append(found)
        return None

    payload = {"prompt": request.prompt, "context": dicts(session.staged)}
    errors: list[ErrorInfo] = []
    for detector in detectors:
        call = await run.run(
            "seed-detector", detector, "detect_seeds", payload, planner=planner, judge=judge
        )
        if call.status == "success" and admitted:
            return admitted[-1]
        if call.error is not None:
            errors.append(call.error)
    return _exhausted("seed-detector", errors)


async def plans(
    run: StageRunner,
    request: Request,
    session: Session,
    task: Task,
    preferences: Mapping[str, str],
    limits: Limits,
) -> Ending:
    """Planners in turn; each plan run; backtracking on rejection, escalation on weak."""
    catalog, recorder = run.catalog, run.recorder
    planners = ordered(catalog, "planner", request.pins, preferences)[: limits.max_planners]
    validators = ordered(catalog, "validation", request.pins, preferences)
    best: Attempted | None = None
    planned: list[str] = []
    attempts = 0
    last_error: ErrorInfo | None = None
    for planner in planners or (CORE_PLANNER,):
        recorder.planner(planner)
        previous: list[dict[str, Any]] = []
        seen: set[tuple[Any, ...]] = set()
        while attempts < limits.max_plan_attempts:
            plan, error = await build(run, planner, task, session, request, preferences, previous)
            if plan is None or plan.key() in seen:
                last_error = error or last_error
                recorder.note(
                    "planner gives up",
                    planner=planner,
                    why=error.message if error else "no other plan",
                )
                break
            seen.add(plan.key())
            attempts += 1
            if planner not in planned:
                planned.append(planner)
            recorder.plan({**plan.to_dict(), "attempt": attempts})
            solving = Solving(run, plan, limits, FrameBudget(limits.max_frames))
            outcome = await attempt(solving, task, validators)
            if best is None or _RANK[outcome.kind] > _RANK[best.kind]:
                best = outcome
            if outcome.kind == "answered":
                return Ending(outcome, None, planner, tuple(planned))
            if outcome.kind != "rejected":
                break  # weak or failed: another planner may order the stage better
            previous.append(outcome.summary())
            recorder.note(
                "backtrack",
                planner=planner,
                reason=outcome.error.message if outcome.error else None,
            )
        if attempts >= limits.max_plan_attempts:
            break
    final = planned[-1] if planned else (planners or (CORE_PLANNER,))[0]
    return _ending(best, last_error, final, tuple(planned))


def _ending(
    best: Attempted | None, last_error: ErrorInfo | None, planner: str, planned: tuple[str, ...]
) -> Ending:
    """The best attempt decides: an answer, else no context, else the failure's reason."""
    if best is None:
        why = last_error.message if last_error is not None else "no planner produced a plan"
        return Ending(None, ErrorInfo("plan_invalid", f"no usable plan: {why}"), planner, planned)
    if best.kind == "weak":
        return Ending(best, None, planner, planned)
    fallback = ErrorInfo("stage_exhausted", "no plan produced an answer")
    return Ending(best, best.error or fallback, planner, planned)


async def build(
    run: StageRunner,
    planner: str,
    task: Task,
    session: Session,
    request: Request,
    preferences: Mapping[str, str],
    previous: list[dict[str, Any]],
) -> tuple[Plan | None, ErrorInfo | None]:
    """One ``buildPlan`` (or the core's own plan when there is no planner plugin)."""
    catalog = run.catalog
    if planner == CORE_PLANNER:
        data: Mapping[str, Any] = {
            "kbPluginOrder": [p.id for p in members(catalog, "kb")],
            "goalSolverOrder": [p.id for p in members(catalog, "gs")],
            "notes": ["no planner plugin: the descriptors' order"],
        }
    else:
        payload = planner_input(task, session, catalog, request.pins, preferences, previous)
        call = await run.run(
            "planner", planner, "build_plan", payload, planner=planner, kind="planner"
        )
        if call.status != "success":
            return None, call.error
        data = call.data
    return read_plan(planner, data, catalog, request.pins, preferences)


def _pins(catalog: Catalog, pins: Mapping[str, str]) -> ErrorInfo | None:
    for stage, plugin_id in pins.items():
        problem = misnamed(catalog, stage, plugin_id)
        if problem is not None:
            return ErrorInfo(problem[0], f"the {stage} pin: {problem[1]}")
    return None


def _usable(catalog: Catalog, preferences: Mapping[str, str]) -> dict[str, str]:
    """Preferences naming a plugin that cannot run at their stage are ignored."""
    out: dict[str, str] = {}
    for stage, plugin_id in preferences.items():
        if stage in ("seed-detector", "kb", "goal-solver", "validation", "planner") and (
            misnamed(catalog, stage, plugin_id) is None
        ):
            out[stage] = plugin_id
    return out


def _exhausted(stage: str, errors: list[ErrorInfo]) -> ErrorInfo:
    if errors and all(e.code == "budget_exceeded" for e in errors):
        return ErrorInfo("budget_exceeded", f"every {stage} plugin needs more LLM calls than left")
    return ErrorInfo(
        "stage_exhausted",
        f"no {stage} plugin produced a usable result",
        {"causes": [e.code for e in errors]},
    )
