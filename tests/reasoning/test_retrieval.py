"""KB retrieval in the plan's order: weak answers continue, ``sufficient`` stops."""

from __future__ import annotations

import pytest

from .lab import Lab, basic, planned, retrieved


@pytest.mark.parametrize("weak", ["insufficient", "no-context", "unsupported"])
def test_a_weak_kb_answer_continues_to_the_next_plugin(weak: str) -> None:
    lab = basic(Lab(), kb=("kb-a", "kb-b", "kb-c"))
    lab.add("kb-a", "kb", {"retrieve": retrieved("half", status=weak, sufficient=False)})
    answer = lab.reason()
    assert lab.ran("retrieve") == ["kb-a", "kb-b"]  # kb-b was sufficient: kb-c never ran
    assert [(s.plugin_id, s.status) for s in answer.record.stages if s.stage == "kb"] == [
        ("kb-a", "insufficient" if weak == "no-context" else weak),
        ("kb-b", "success"),
    ]


def test_success_without_sufficient_continues_and_keeps_what_it_found() -> None:
    lab = basic(Lab(), kb=("kb-a", "kb-b"))
    lab.add("kb-a", "kb", {"retrieve": retrieved("Paris has the Louvre.", sufficient=False)})
    answer = lab.reason()
    assert lab.ran("retrieve") == ["kb-a", "kb-b"]
    kb = [s for s in answer.record.stages if s.stage == "kb"]
    assert [s.sufficient for s in kb] == [False, True]
    evidence = [u["text"] for u in lab.inputs("gs-a", "solve")[0]["context"]]
    assert evidence == ["Paris has the Louvre.", "Paris is the capital of France."]


def test_a_sufficient_answer_stops_the_stage() -> None:
    lab = basic(Lab(), kb=("kb-a", "kb-b"))
    lab.reason()
    assert lab.ran("retrieve") == ["kb-a"]


def test_a_failing_kb_is_recorded_and_the_next_one_tries() -> None:
    lab = basic(Lab(), kb=("kb-a", "kb-b"))

    def broken(input: dict, ctx: dict) -> dict:
        raise RuntimeError("index corrupted")

    lab.add("kb-a", "kb", {"retrieve": broken})
    answer = lab.reason()
    assert answer.status == "answered"
    assert [(s.plugin_id, s.status) for s in answer.record.stages if s.stage == "kb"] == [
        ("kb-a", "error"),
        ("kb-b", "success"),
    ]
    failed = [e for e in answer.trace if e.data.get("pluginId") == "kb-a"]
    assert failed[0].data["error"]["code"] == "plugin_error"


def test_the_kb_input_is_the_structured_payload() -> None:
    lab = basic(Lab())
    lab.reason()
    given = lab.inputs("kb-a", "retrieve")[0]
    assert isinstance(given["prompt"], str) and isinstance(given["context"], list)
    assert given["purpose"] == "task-evidence"


def test_units_a_kb_scopes_as_guidance_reach_the_solver_as_guidance() -> None:
    lab = basic(Lab())
    found = retrieved("Paris is the capital of France.")
    found["resolvedIntents"][0]["guidance"] = [{"text": "Answer in one word.", "title": "style"}]
    lab.add("kb-a", "kb", {"retrieve": found})
    lab.add("plan-a", "plan", {"build_plan": planned(["kb-a"], ["gs-a"])})
    lab.reason()
    given = lab.inputs("gs-a", "solve")[0]
    assert [u["text"] for u in given["guidance"]["goalSolver"]] == ["Answer in one word."]
    assert "Answer in one word." not in [u["text"] for u in given["context"]]
