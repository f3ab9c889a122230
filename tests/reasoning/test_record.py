"""Every request leaves a DS027 planner outcome record, spelt as DS027 spells it, and the
planners that planned it are told (``recordOutcome``)."""

from __future__ import annotations

from datetime import UTC, datetime

from plugyard.reasoning.record import OutcomeRecord, StageEntry
from plugyard.runtimes.base import ErrorInfo

from .lab import Lab, basic, schema_valid, solved, verdict

DS027_FIELDS = {
    "requestId",
    "sessionId",
    "plannerPluginId",
    "plannerAttempts",
    "stages",
    "finalStatus",
    "finalAnswerStatus",
    "frameDepth",
    "framePurpose",
}
STAGE_FIELDS = {
    "plannerPluginId",
    "stage",
    "pluginId",
    "status",
    "durationMs",
    "llmCalls",
    "sufficient",
    "model",
    "modelRole",
}


def test_an_answered_request_is_recorded_with_every_ds027_field() -> None:
    lab = basic(Lab())
    answer = lab.reason()
    record = lab.outcomes.get(answer.request_id)
    assert record is not None
    data = record.to_dict()
    assert data.keys() >= DS027_FIELDS
    assert all(set(stage) == STAGE_FIELDS for stage in data["stages"])
    assert schema_valid(data) == []
    assert (data["finalStatus"], data["finalAnswerStatus"]) == ("success", "answered")
    assert [s["stage"] for s in data["stages"]] == ["seed-detector", "kb", "goal-solver"]
    assert data["plannerPluginId"] == "plan-a" and data["plannerAttempts"] == ["plan-a"]
    assert data["error"] is None


def test_a_failed_request_is_recorded_with_its_reason() -> None:
    lab = basic(Lab())
    lab.add("val-a", "val", {"validate": verdict("rejected")})
    answer = lab.reason()
    data = answer.record.to_dict()
    assert schema_valid(data) == []
    assert (data["finalStatus"], data["finalAnswerStatus"]) == ("failure", None)
    assert data["error"]["code"] == "validation_rejected"


def test_record_outcome_goes_to_the_planner_that_planned_with_the_record() -> None:
    lab = basic(Lab())
    answer = lab.reason()
    told = lab.inputs("plan-a", "record_outcome")
    assert len(told) == 1
    assert told[0]["requestId"] == answer.request_id
    assert told[0]["stages"] == answer.record.to_dict()["stages"]


def test_a_planner_that_never_planned_is_not_told() -> None:
    lab = basic(Lab())

    def broken(input: dict, ctx: dict) -> dict:
        raise RuntimeError("down")

    lab.add("plan-0", "plan", {"build_plan": broken}, **{"x": {"/priority": 5}})
    lab.reason()
    assert lab.inputs("plan-0", "record_outcome") == []
    assert len(lab.inputs("plan-a", "record_outcome")) == 1


def test_a_planner_failing_to_record_changes_nothing() -> None:
    lab = basic(Lab())

    def broken(input: dict, ctx: dict) -> None:
        raise RuntimeError("disk full")

    lab.add(
        "plan-a",
        "plan",
        {
            "build_plan": lambda i, c: {"kbPluginOrder": ["kb-a"], "goalSolverOrder": ["gs-a"]},
            "record_outcome": broken,
        },
    )
    answer = lab.reason()
    assert answer.status == "answered"


def test_records_read_back_as_they_were_written() -> None:
    lab = Lab()
    store = lab.outcomes
    entry = StageEntry("p", "kb", "kb-a", "skipped-budget", 0.5, 0, None, None, None)
    for index in range(3):
        store.save(
            OutcomeRecord(
                f"r{index}",
                "p",
                "failure",
                "s1",
                ("p",),
                (entry,),
                error=ErrorInfo("budget_exceeded", "no budget"),
                subject="u",
            )
        )
    assert [r.request_id for r in store.records(limit=2)] == ["r2", "r1"]
    again = OutcomeRecord.of(store.records()[0].to_dict(), "u")
    assert again == store.records()[0]
    assert store.records(subject="someone else") == ()
    assert isinstance(store.records()[0].recorded_at, datetime)
    assert store.records()[0].recorded_at.tzinfo == UTC  # type: ignore[union-attr]


def test_the_solver_stage_records_the_model_it_used() -> None:
    lab = basic(Lab())
    lab.add(
        "gs-a",
        "gs",
        {"solve": solved(llm_calls=1)},
        uses_llm=True,
        max_llm_calls=1,
        model_roles=["writer"],
    )
    answer = lab.reason()
    entry = next(s for s in answer.record.stages if s.stage == "goal-solver")
    assert (entry.model, entry.model_role, entry.llm_calls) == ("scripted", "writer", 1)
