"""Goal solving in the plan's ``goalSolverOrder``, with decomposition frames.

A solver that answers ``success`` ends the stage. ``no-context``, ``insufficient`` and
``unsupported`` are weak: the next solver tries. ``needs-decomposition`` opens a child
execution frame (DS002, DS027) one level deeper, with its own purpose: the task is split
into subtasks — the solver's own list (``responseDocument.subtasks``) or the
decomposer's — and each is retrieved for and solved in that frame; their answers are
folded back into one. Depth and the number of frames are bounded: a solver that asks to
decompose at the deepest level is refused (``decomposition_too_deep``) and the next
solver tries, so a decomposition that never ends still ends.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from plugyard.manifest.families import WEAK_STATUSES
from plugyard.reasoning import questions
from plugyard.reasoning.limits import Limits
from plugyard.reasoning.plan import Plan
from plugyard.reasoning.retrieval import retrieve
from plugyard.reasoning.stages import StageRunner
from plugyard.reasoning.task import Task
from plugyard.reasoning.trace import Frame
from plugyard.reasoning.units import Unit, merged
from plugyard.runtimes.base import ErrorInfo

_QUESTIONS = re.compile(r"(?<=[?;])\s+|\n+")
_CITED = re.compile(r"\[(\d+)\]")


@dataclass(frozen=True, slots=True)
class Solved:
    kind: Literal["answered", "weak", "failed"]
    answer: str | None = None
    document: Mapping[str, Any] | None = None
    citations: tuple[Mapping[str, Any], ...] = ()
    evidence: tuple[Unit, ...] = ()
    solver: str | None = None
    error: ErrorInfo | None = None


@dataclass
class FrameBudget:
    """How many more frames the request may open."""

    left: int


@dataclass(frozen=True, slots=True)
class Solving:
    """What every frame of one attempt shares."""

    run: StageRunner
    plan: Plan
    limits: Limits
    frames: FrameBudget = field(default_factory=lambda: FrameBudget(0))


async def solve(s: Solving, task: Task, evidence: tuple[Unit, ...], frame: Frame) -> Solved:
    weak = False
    errors: list[ErrorInfo] = []
    for solver in s.plan.gs_order[: s.limits.max_plugins_per_stage]:
        payload = task.payload(
            evidence,
            guidance={k: [u.to_dict() for u in v] for k, v in task.guidance.items()},
            frameDepth=frame.depth,
            framePurpose=frame.purpose,
        )
        call = await s.run.run(
            "goal-solver",
            solver,
            "solve",
            payload,
            planner=s.plan.planner,
            frame=frame,
            judge=_has_answer,
        )
        if call.status == "success":
            return _answered(call.data, evidence, solver)
        if call.status == "needs-decomposition":
            if frame.depth >= s.limits.max_frame_depth or s.frames.left <= 0:
                errors.append(
                    ErrorInfo(
                        "decomposition_too_deep",
                        f"{solver} asked to decompose at depth {frame.depth}",
                    )
                )
                continue
            child = await decompose(s, task, frame, "subtask-decomposition", _subtasks(call.data))
            if child.kind == "answered":
                return child
            weak = weak or child.kind == "weak"
            if child.error is not None:
                errors.append(child.error)
        elif call.status in WEAK_STATUSES:
            weak = True
        elif call.error is not None:
            errors.append(call.error)
    if weak:
        return Solved("weak", evidence=evidence)
    return Solved("failed", evidence=evidence, error=_why(errors))


async def decompose(
    s: Solving, task: Task, frame: Frame, purpose: str, subtasks: list[str] | None = None
) -> Solved:
    """Open a child frame: solve each subtask in it and fold the answers back."""
    child = Frame(frame.depth + 1, purpose)
    s.run.recorder.opened(child)
    parts = (subtasks or split(task))[: s.limits.max_subtasks] or [task.prompt]
    folded: list[tuple[str, Solved]] = []
    for part in parts:
        if s.frames.left <= 0:
            break
        s.frames.left -= 1
        sub = task.sub(part) if part != task.prompt else task
        found = await retrieve(
            s.run,
            s.plan.kb_order,
            sub,
            child,
            planner=s.plan.planner,
            limit=s.limits.max_plugins_per_stage,
        )
        folded.append((part, await solve(s, sub, found.evidence, child)))
    return _fold(folded)


def split(task: Task) -> list[str]:
    """The decomposer: the task's intents when it has several, else its questions."""
    texts = [str(i.get("text")) for i in task.intents if isinstance(i.get("text"), str)]
    if len(texts) > 1:
        return texts
    parts = [p.strip() for p in _QUESTIONS.split(task.prompt) if len(p.strip().split()) >= 2]
    if len(parts) > 1:
        return parts
    return questions.parts(task.prompt)


def _fold(folded: list[tuple[str, Solved]]) -> Solved:
    answered = [(part, s) for part, s in folded if s.kind == "answered"]
    evidence = merged(*(s.evidence for _, s in folded))
    if not answered:
        weak = any(s.kind == "weak" for _, s in folded)
        errors = [s.error for _, s in folded if s.error is not None]
        return Solved(
            "weak" if weak else "failed", evidence=evidence, error=None if weak else _why(errors)
        )
    if len(folded) == 1:
        return answered[0][1]
    # Each part numbers its citations from 1: the whole answer numbers them in turn.
    sections: list[str] = []
    citations: list[Mapping[str, Any]] = []
    for part, solved in folded:
        if solved.kind != "answered":
            sections.append(f"**{part}**\n\n_No answer was found._")
            continue
        offset = len(citations)
        own = {c.get("index"): i + 1 + offset for i, c in enumerate(solved.citations)}
        citations += [{**c, "index": own[c.get("index")]} for c in solved.citations]
        text = _renumbered(solved.answer or "", own)
        sections.append(f"**{part}**\n\n{text}")
    document = {
        "subtasks": [
            {"task": part, "answer": s.answer, "status": s.kind, "short": _short(s)}
            for part, s in folded
        ]
    }
    solvers = ",".join(dict.fromkeys(s.solver or "" for _, s in answered))
    return Solved("answered", "\n\n".join(sections), document, tuple(citations), evidence, solvers)


def _renumbered(text: str, numbers: Mapping[Any, int]) -> str:
    return _CITED.sub(lambda m: f"[{numbers.get(int(m.group(1)), m.group(1))}]", text)


def _short(solved: Solved) -> str | None:
    """A part's answer in brief, when its solver gave one (the date, the measure…)."""
    found = solved.document.get("answer") if solved.document is not None else None
    return found if isinstance(found, str) and found.strip() else None


def _answered(data: Mapping[str, Any], evidence: tuple[Unit, ...], solver: str) -> Solved:
    document = data.get("responseDocument")
    document = document if isinstance(document, Mapping) else None
    answer = data.get("responseMarkdown")
    text = answer if isinstance(answer, str) and answer.strip() else str(document)
    cited = document.get("citations") if document is not None else None
    citations = tuple(c for c in cited if isinstance(c, Mapping)) if isinstance(cited, list) else ()
    return Solved("answered", text, document, citations, evidence, solver)


def _has_answer(data: Mapping[str, Any]) -> ErrorInfo | None:
    """A solver's ``success`` must carry an answer."""
    text = data.get("responseMarkdown")
    if (isinstance(text, str) and text.strip()) or isinstance(data.get("responseDocument"), dict):
        return None
    return ErrorInfo("invalid_output", "success without responseMarkdown or responseDocument")


def _subtasks(data: Mapping[str, Any]) -> list[str] | None:
    document = data.get("responseDocument")
    found = document.get("subtasks") if isinstance(document, Mapping) else None
    if not isinstance(found, list):
        return None
    texts = [t.strip() for t in found if isinstance(t, str) and t.strip()]
    return texts or None


def _why(errors: list[ErrorInfo]) -> ErrorInfo:
    for code in ("decomposition_too_deep", "budget_exceeded"):
        found = next((e for e in errors if e.code == code), None)
        if found is not None and all(e.code == code for e in errors):
            return found
    deep = next((e for e in errors if e.code == "decomposition_too_deep"), None)
    if deep is not None:
        return deep
    return ErrorInfo(
        "stage_exhausted", "no goal solver produced an answer", {"causes": [e.code for e in errors]}
    )
