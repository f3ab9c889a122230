"""One plan, run: (a child frame first when the plan says ``decompose``) → KB retrieval
→ goal solving → validation.

Validation runs after a goal solver answered: every enabled validator in turn, and the
first ``rejected`` raises DS027's ``VALIDATION_REJECTED`` inside the loop — here the
attempt ends ``rejected`` and the loop backtracks to another plan. A validator that
fails or is skipped is recorded and does not judge.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from plugyard.reasoning.frames import Solved, Solving, decompose, solve
from plugyard.reasoning.retrieval import retrieve
from plugyard.reasoning.task import Task
from plugyard.reasoning.trace import ROOT
from plugyard.runtimes.base import ErrorInfo


@dataclass(frozen=True, slots=True)
class Attempted:
    kind: Literal["answered", "weak", "rejected", "failed"]
    solved: Solved | None = None
    error: ErrorInfo | None = None
    validator: str | None = None

    def summary(self) -> dict[str, Any]:
        """What the planner is told about this attempt when it plans again."""
        return {
            "outcome": self.kind,
            "goalSolver": self.solved.solver if self.solved else None,
            "rejectedBy": self.validator,
            "reason": self.error.message if self.error else None,
        }


async def attempt(s: Solving, task: Task, validators: tuple[str, ...]) -> Attempted:
    plan = s.plan
    solved: Solved | None = None
    if plan.decompose and plan.frame_purpose == "strategy-guidance":
        task = await _guided(s, task)
    elif plan.decompose:
        solved = await decompose(s, task, ROOT, "subtask-decomposition")
    if solved is None or solved.kind != "answered":
        found = await retrieve(
            s.run,
            plan.kb_order,
            task,
            ROOT,
            planner=plan.planner,
            limit=s.limits.max_plugins_per_stage,
        )
        if found.guidance:
            task = task.guided("goalSolver", found.guidance)
        solved = await solve(s, task, found.evidence, ROOT)
    if solved.kind != "answered":
        return Attempted(solved.kind, solved, solved.error)
    for validator in validators[: s.limits.max_plugins_per_stage]:
        payload = task.payload(
            solved.evidence,
            answer=solved.answer,
            responseMarkdown=solved.answer,
            guidance=[u.to_dict() for u in task.guidance.get("validation", ())],
        )
        call = await s.run.run("validation", validator, "validate", payload, planner=plan.planner)
        if call.status == "rejected":
            reason = call.data.get("reason")
            error = ErrorInfo("validation_rejected", f"{validator}: {reason or 'rejected'}")
            return Attempted("rejected", solved, error, validator)
    return Attempted("answered", solved)


async def _guided(s: Solving, task: Task) -> Task:
    """A strategy-guidance child frame: retrieve guidance for the solver, then return."""
    frame = replace(ROOT, depth=1, purpose="strategy-guidance")
    s.run.recorder.opened(frame)
    s.frames.left -= 1
    found = await retrieve(
        s.run,
        s.plan.kb_order,
        task,
        frame,
        planner=s.plan.planner,
        purpose="strategy-guidance",
        limit=s.limits.max_plugins_per_stage,
    )
    return task.guided("goalSolver", found.guidance)
