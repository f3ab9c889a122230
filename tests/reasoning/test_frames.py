"""Goal solving: weak answers continue, decomposition opens bounded child frames."""

from __future__ import annotations

from typing import Any

from plugyard.reasoning.frames import split
from plugyard.reasoning.task import Task

from .lab import Lab, basic, planned, solved


def test_a_weak_solver_answer_continues_and_success_stops() -> None:
    lab = basic(Lab(), gs=("gs-a", "gs-b", "gs-c"))
    lab.add("gs-a", "gs", {"solve": solved(status="unsupported")})
    answer = lab.reason()
    assert lab.ran("solve") == ["gs-a", "gs-b"]
    assert answer.status == "answered"


def test_needs_decomposition_opens_a_child_frame_and_folds_the_answers_back() -> None:
    lab = basic(Lab())

    def solver(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
        if input["frameDepth"] == 0:
            return solved(
                status="needs-decomposition",
                subtasks=["What is the capital of France?", "What river crosses it?"],
            )
        return solved(f"answer to: {input['prompt']}")

    lab.add("gs-a", "gs", {"solve": solver})
    answer = lab.reason("Tell me about the capital of France and its river.")
    assert answer.status == "answered"
    assert "answer to: What is the capital of France?" in (answer.answer or "")
    assert "answer to: What river crosses it?" in (answer.answer or "")
    assert answer.record.frame_depth == 1
    assert answer.record.frame_purpose == "subtask-decomposition"
    children = [i for i in lab.inputs("gs-a", "solve") if i["frameDepth"] == 1]
    assert [c["prompt"] for c in children] == [
        "What is the capital of France?",
        "What river crosses it?",
    ]
    assert all(c["framePurpose"] == "subtask-decomposition" for c in children)
    # each subtask is retrieved for in its own frame
    assert len(lab.inputs("kb-a", "retrieve")) == 3
    assert next(s.status for s in answer.record.stages if s.stage == "goal-solver") == (
        "needs-decomposition"
    )


def test_a_decomposition_that_never_ends_stops_at_the_depth_limit() -> None:
    lab = basic(Lab())
    lab.add("gs-a", "gs", {"solve": solved(status="needs-decomposition")})
    answer = lab.reason("Explain everything. Then explain it again?")
    assert answer.status == "failure"
    assert answer.error is not None and answer.error.code == "decomposition_too_deep"
    assert answer.record.frame_depth == lab.limits.max_frame_depth
    solves = lab.inputs("gs-a", "solve")
    assert max(i["frameDepth"] for i in solves) == lab.limits.max_frame_depth
    # bounded work: every attempt opens at most max_frames frames
    attempts = answer.record.planner_attempts
    assert len(solves) <= (1 + lab.limits.max_frames) * lab.limits.max_plan_attempts * len(attempts)


def test_a_plan_that_says_decompose_opens_a_frame_before_direct_solving() -> None:
    lab = basic(Lab())
    lab.add(
        "plan-a",
        "plan",
        {
            "build_plan": planned(
                ["kb-a"], ["gs-a"], decompose=True, framePurpose="subtask-decomposition"
            )
        },
    )
    answer = lab.reason("What is the capital of France? What river crosses it?")
    first = lab.inputs("gs-a", "solve")[0]
    assert first["frameDepth"] == 1 and first["prompt"] == "What is the capital of France?"
    assert answer.record.frame_depth == 1


def test_a_strategy_guidance_frame_retrieves_guidance_for_the_solver() -> None:
    lab = basic(Lab())
    lab.add(
        "plan-a",
        "plan",
        {
            "build_plan": planned(
                ["kb-a"], ["gs-a"], decompose=True, framePurpose="strategy-guidance"
            )
        },
    )
    answer = lab.reason()
    purposes = [i["purpose"] for i in lab.inputs("kb-a", "retrieve")]
    assert purposes == ["strategy-guidance", "task-evidence"]
    guidance = lab.inputs("gs-a", "solve")[0]["guidance"]["goalSolver"]
    assert guidance[0]["text"] == "Paris is the capital of France."
    assert answer.record.frame_purpose == "strategy-guidance"


def test_the_decomposer_splits_intents_then_questions() -> None:
    intents = ({"text": "one thing"}, {"text": "another"})
    assert split(Task("x", intents)) == ["one thing", "another"]
    assert split(Task("Who built it? When was it built?")) == [
        "Who built it?",
        "When was it built?",
    ]
    assert split(Task("Explain the tower and why it was built there")) == [
        "Explain the tower",
        "Why it was built there",
    ]
    assert split(Task("Just one question")) == ["Just one question"]
