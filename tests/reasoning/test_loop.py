"""The request loop, rule by rule: seed detection and admission, the planner's input,
backtracking on rejection and escalation on weak outcomes."""

from __future__ import annotations

from typing import Any

from .lab import Lab, basic, planned, retrieved, seeds, solved, verdict


def test_seed_units_are_admitted_staged_and_told_to_every_kb_before_retrieval() -> None:
    lab = Lab()
    lab.add("sd-a", "sd", {"detect_seeds": seeds(units=["The Seine flows through Paris."])})
    for kb in ("kb-a", "kb-b"):
        lab.add(
            kb,
            "kb",
            {
                "retrieve": retrieved("x", sufficient=False),
                "on_session_event": {"status": "accepted", "error": None},
            },
        )
    lab.add("gs-a", "gs", {"solve": solved()})
    lab.add("plan-a", "plan", {"build_plan": planned(["kb-a", "kb-b"], ["gs-a"])})
    lab.reason()
    order = [(c.plugin, c.operation) for c in lab.calls]
    told = [c for c in lab.calls if c.operation == "on_session_event"]
    assert {c.plugin for c in told} == {"kb-a", "kb-b"}
    assert all(c.input["eventType"] == "session-kus-added" for c in told)
    assert all(c.input["scope"] == "current-turn" for c in told)
    assert told[0].input["units"][0]["text"] == "The Seine flows through Paris."
    assert order.index(("kb-a", "on_session_event")) < order.index(("kb-a", "retrieve"))
    # staged in the turn's context: the KB and the planner see the admitted unit
    context = lab.inputs("kb-a", "retrieve")[0]["context"]
    assert [u["text"] for u in context] == ["The Seine flows through Paris."]
    plan_input = lab.inputs("plan-a", "build_plan")[0]
    assert plan_input["currentTurnUnits"][0]["text"] == "The Seine flows through Paris."


def test_a_detector_whose_answer_cannot_be_admitted_is_passed_over() -> None:
    lab = Lab()
    broken = {
        "status": "success",
        "intentCNL": '@i1 intent explain "unclosed',
        "currentTurnContextCNL": None,
        "metadata": {"llmCalls": 0},
        "error": None,
    }
    lab.add("sd-1", "sd", {"detect_seeds": broken}, planner_hints={"relative_cost": 0.01})
    lab.add(
        "sd-2", "sd", {"detect_seeds": seeds(act="define")}, planner_hints={"relative_cost": 0.02}
    )
    basic(lab, kb=())
    lab.calls.clear()
    answer = lab.reason()
    assert answer.status == "answered"
    stages = [(s.plugin_id, s.status) for s in answer.record.stages if s.stage == "seed-detector"]
    assert stages[:2] == [("sd-1", "error"), ("sd-2", "success")]
    assert lab.inputs("plan-a", "build_plan")[0]["intents"][0]["act"] == "define"


def test_the_planner_gets_the_ds027_planner_input() -> None:
    lab = basic(Lab())
    service = lab.service
    import asyncio

    session = asyncio.run(
        service.create_session(kb_id="kb-1", kb_name="Atlas", preferences={"kb": "kb-a"})
    )
    asyncio.run(
        service.reason(
            "What is the capital of France?", session=session.id, pins={"goal-solver": "gs-a"}
        )
    )
    given = lab.inputs("plan-a", "build_plan")[0]
    assert given["prompt"] == "What is the capital of France?"
    assert given["intents"][0]["act"] == "explain" and given["intents"][0]["topic"] == "geography"
    assert given["kb"] == {"kbId": "kb-1", "kbName": "Atlas"}
    assert given["pins"] == {"goal-solver": "gs-a"}
    assert given["sessionPreferences"] == {"kb": "kb-a"}
    assert set(given["phaseGuidance"]) == {
        "planner",
        "goalSolver",
        "decomposition",
        "validation",
        "seedRouting",
    }
    assert [c["id"] for c in given["candidates"]["kb"]] == ["kb-a"]
    assert given["previousAttempts"] == []


def test_a_rejected_answer_backtracks_to_the_planners_next_plan() -> None:
    lab = Lab()
    basic(lab, gs=("gs-a", "gs-b"))

    def plan(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
        first = not input["previousAttempts"]
        return planned(["kb-a"], ["gs-a"] if first else ["gs-b"])

    lab.add("plan-a", "plan", {"build_plan": plan})
    lab.add("gs-b", "gs", {"solve": solved("Paris, on the Seine.")})

    def judge(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
        return verdict("accepted" if "Seine" in input["answer"] else "rejected")

    lab.add("val-a", "val", {"validate": judge})
    answer = lab.reason()
    assert answer.status == "answered" and answer.answer == "Paris, on the Seine."
    second = lab.inputs("plan-a", "build_plan")[1]["previousAttempts"]
    assert second[0]["outcome"] == "rejected" and second[0]["rejectedBy"] == "val-a"
    statuses = [(s.plugin_id, s.status) for s in answer.record.stages if s.stage == "validation"]
    assert statuses == [("val-a", "rejected"), ("val-a", "accepted")]


def test_a_planner_with_no_other_plan_hands_over_to_the_next_planner() -> None:
    lab = basic(Lab(), gs=("gs-a", "gs-b"))
    lab.add("gs-b", "gs", {"solve": solved("Paris, on the Seine.")})
    lab.add(
        "plan-b", "plan", {"build_plan": planned(["kb-a"], ["gs-b"])}, **{"x": {"/priority": -1}}
    )
    lab.add(
        "val-a",
        "val",
        {"validate": lambda i, c: verdict("accepted" if "Seine" in i["answer"] else "rejected")},
    )
    answer = lab.reason()
    assert answer.status == "answered"
    assert answer.record.planner_attempts == ("plan-a", "plan-b")
    assert answer.record.planner_plugin_id == "plan-b"
    assert lab.ran("build_plan") == ["plan-a", "plan-a", "plan-b"]  # asked again, same plan


def test_a_stage_that_finds_only_weak_outcomes_escalates_to_the_next_planner() -> None:
    lab = basic(Lab(), gs=("gs-a", "gs-b"))
    lab.add("gs-a", "gs", {"solve": solved(status="no-context")})
    lab.add("gs-b", "gs", {"solve": solved("From the second planner.")})
    lab.add("plan-a", "plan", {"build_plan": planned(["kb-a"], ["gs-a"])})
    lab.add(
        "plan-b", "plan", {"build_plan": planned(["kb-a"], ["gs-b"])}, **{"x": {"/priority": -1}}
    )
    answer = lab.reason()
    assert answer.answer == "From the second planner."
    assert answer.record.planner_attempts == ("plan-a", "plan-b")


def test_weak_outcomes_everywhere_answer_no_context_and_succeed() -> None:
    lab = basic(Lab())
    lab.add("gs-a", "gs", {"solve": solved(status="no-context")})
    answer = lab.reason()
    assert answer.status == "no-context" and answer.answer is None
    assert answer.record.final_status == "success"
    assert answer.record.final_answer_status == "no-context"
    # DS027's stage statuses have no "no-context": the record says insufficient
    assert [s.status for s in answer.record.stages if s.stage == "goal-solver"] == ["insufficient"]


def test_without_a_planner_plugin_the_core_orders_by_the_descriptors() -> None:
    lab = Lab()
    lab.add("sd-a", "sd", {"detect_seeds": seeds()})
    lab.add("kb-a", "kb", {"retrieve": retrieved("Paris is the capital of France.")})
    lab.add("gs-a", "gs", {"solve": solved()})
    answer = lab.reason()
    assert answer.status == "answered"
    assert answer.record.planner_plugin_id == "plugyard-core"
