"""The core runs only plugins of the stage's family; pins and preferences."""

from __future__ import annotations

import asyncio

import pytest

from plugyard.errors import ReasoningError

from .lab import Lab, basic, planned, retrieved, solved


def test_a_plan_naming_unknown_or_wrong_family_plugins_runs_only_the_right_ones() -> None:
    lab = basic(Lab())
    lab.add(
        "plan-a", "plan", {"build_plan": planned(["kb-ghost", "gs-a", "kb-a"], ["kb-a", "gs-a"])}
    )
    answer = lab.reason()
    assert answer.status == "answered"
    assert lab.ran("retrieve") == ["kb-a"] and lab.ran("solve") == ["gs-a"]
    notes = next(e.data["notes"] for e in answer.trace if e.kind == "plan")
    assert "dropped kb-ghost from kbPluginOrder: plugin_not_found" in notes
    assert "dropped gs-a from kbPluginOrder: family_mismatch" in notes
    assert "dropped kb-a from goalSolverOrder: family_mismatch" in notes


def test_a_plan_with_no_usable_solver_is_no_plan() -> None:
    lab = basic(Lab())
    lab.add("plan-a", "plan", {"build_plan": planned(["kb-a"], ["kb-a", "nobody"])})
    answer = lab.reason()
    assert answer.status == "failure"
    assert answer.error is not None and answer.error.code == "plan_invalid"
    assert lab.ran("solve") == [] and lab.ran("retrieve") == []


def test_a_planner_that_fails_hands_over_to_the_next() -> None:
    lab = basic(Lab())

    def broken(input: dict, ctx: dict) -> dict:
        raise RuntimeError("planner down")

    lab.add("plan-0", "plan", {"build_plan": broken}, **{"x": {"/priority": 5}})
    answer = lab.reason()
    assert answer.status == "answered"
    assert answer.record.planner_attempts == ("plan-0", "plan-a")


def test_a_pin_runs_the_stage_with_that_plugin_alone() -> None:
    lab = basic(Lab(), gs=("gs-a", "gs-b"))
    lab.add("gs-b", "gs", {"solve": solved(status="no-context")})
    answer = lab.reason(pins={"goal-solver": "gs-b"})
    assert lab.ran("solve") == ["gs-b"]  # no fallback to gs-a, though the planner names it
    assert answer.status == "no-context"


def test_a_pin_may_name_the_stage_by_its_family() -> None:
    lab = basic(Lab(), kb=("kb-a", "kb-b"))
    lab.reason(pins={"kb": "kb-b", "sd": "sd-a"})
    assert lab.ran("retrieve") == ["kb-b"]


@pytest.mark.parametrize(
    ("pins", "code"),
    [({"kb": "gs-a"}, "family_mismatch"), ({"goal-solver": "ghost"}, "plugin_not_found")],
)
def test_a_bad_pin_ends_in_a_recorded_failure_before_anything_runs(
    pins: dict[str, str], code: str
) -> None:
    lab = basic(Lab())
    answer = lab.reason(pins=pins)
    assert answer.status == "failure" and answer.error is not None
    assert answer.error.code == code
    assert lab.calls == []
    assert lab.outcomes.get(answer.request_id) is not None


def test_a_pin_for_no_stage_is_refused() -> None:
    lab = basic(Lab())
    with pytest.raises(ReasoningError) as caught:
        lab.reason(pins={"dessert": "gs-a"})
    assert caught.value.code == "invalid_request"


def test_a_session_preference_goes_first_without_removing_the_fallbacks() -> None:
    lab = basic(Lab(), kb=("kb-a", "kb-b"))
    lab.add(
        "kb-b",
        "kb",
        {"retrieve": retrieved("nothing useful", status="insufficient", sufficient=False)},
    )
    service = lab.service
    session = asyncio.run(service.create_session(preferences={"kb": "kb-b"}))
    answer = asyncio.run(service.reason("Capital of France?", session=session.id))
    assert lab.ran("retrieve") == ["kb-b", "kb-a"]  # first, then the planner's own
    assert answer.status == "answered"


def test_a_stale_preference_is_ignored() -> None:
    lab = basic(Lab())
    service = lab.service
    session = asyncio.run(service.create_session(preferences={"goal-solver": "gone"}))
    answer = asyncio.run(service.reason("Capital of France?", session=session.id))
    assert answer.status == "answered" and lab.ran("solve") == ["gs-a"]
