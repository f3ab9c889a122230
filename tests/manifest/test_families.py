"""The DS027 family contracts: operations per family, their schemas and status enums."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from plugyard.manifest.families import (
    CONTRACTS,
    FAMILY_OF_TYPE,
    FAMILY_STATUSES,
    GS_STATUSES,
    KB_HOOK_STATUSES,
    KB_RETRIEVE_STATUSES,
    PLANNER_OUTCOME_SCHEMA,
    SD_STATUSES,
    SESSION_EVENT_SCHEMA,
    STAGE_STATUSES,
    STRUCTURED_INPUT_SCHEMA,
    TYPE_OF_FAMILY,
    VAL_STATUSES,
    WEAK_STATUSES,
    contract,
    family_operations,
)
from plugyard.manifest.jsliteral import parse_js_literal

jsonschema = pytest.importorskip("jsonschema")

SEEDS = Path(__file__).resolve().parent / "fixtures" / "mrp" / "seeds"


def valid(schema: dict[str, Any], value: Any) -> bool:
    return bool(jsonschema.Draft202012Validator(schema).is_valid(value))


def output_schema(family: str, operation: str) -> dict[str, Any]:
    for op in family_operations(family):
        if op.id == operation:
            assert op.output_schema is not None
            return op.output_schema
    raise AssertionError(operation)


def test_each_ds003_type_names_one_family_and_back() -> None:
    assert FAMILY_OF_TYPE == {
        "sd-plugin": "sd", "kb-plugin": "kb", "gs-plugin": "gs", "val-plugin": "val",
        "mrp-plan-plugin": "plan",
    }  # fmt: skip
    assert {family: TYPE_OF_FAMILY[family] for family in FAMILY_OF_TYPE.values()} == {
        v: k for k, v in FAMILY_OF_TYPE.items()
    }


@pytest.mark.parametrize(
    ("family", "operations", "methods"),
    [
        ("sd", ["detect_seeds", "normalize_persistent_context"],
         ["detectSeeds", "normalizePersistentContext"]),
        ("kb", ["retrieve", "on_source_text", "on_session_event"],
         ["retrieve", "onSourceText", "onSessionEvent"]),
        ("gs", ["solve"], ["solve"]),
        ("val", ["validate"], ["validate"]),
        ("plan", ["build_plan", "record_outcome"], ["buildPlan", "recordOutcome"]),
        ("tool", [], []),
    ],
)  # fmt: skip
def test_each_family_has_the_ds027_methods(
    family: str, operations: list[str], methods: list[str]
) -> None:
    ops = family_operations(family)
    assert [op.id for op in ops] == operations
    assert [op.name for op in ops] == methods


def test_planner_hints_are_required_only_for_planner_facing_families() -> None:
    required = {family for family, c in CONTRACTS.items() if c.planner_hints_required}
    assert required == {"sd", "kb", "gs"}
    assert contract("tool") is None


def test_every_schema_is_valid_json_schema_2020_12() -> None:
    for family in CONTRACTS:
        for op in family_operations(family):
            jsonschema.Draft202012Validator.check_schema(op.parameters)
            assert op.output_schema is not None
            jsonschema.Draft202012Validator.check_schema(op.output_schema)


def test_ds003_payload_example_is_a_structured_input() -> None:
    payload = parse_js_literal((SEEDS / "ds003-payload.js").read_text())
    assert valid(STRUCTURED_INPUT_SCHEMA, payload)
    assert not valid(STRUCTURED_INPUT_SCHEMA, "## Prompt\nThe intent as compacted Markdown")
    assert not valid(STRUCTURED_INPUT_SCHEMA, {"context": []})
    assert not valid(STRUCTURED_INPUT_SCHEMA, {"prompt": "p", "context": [{"title": "t"}]})


@pytest.mark.parametrize(
    ("family", "operation", "statuses"),
    [
        # The stage operations also take DS003's weak outcomes, so the core can continue.
        ("sd", "detect_seeds", (*SD_STATUSES, *WEAK_STATUSES)),
        ("sd", "normalize_persistent_context", SD_STATUSES),
        ("kb", "retrieve", (*KB_RETRIEVE_STATUSES, *WEAK_STATUSES)),
        ("kb", "on_source_text", KB_HOOK_STATUSES),
        ("kb", "on_session_event", KB_HOOK_STATUSES),
        ("gs", "solve", (*GS_STATUSES, *WEAK_STATUSES)),
        ("val", "validate", (*VAL_STATUSES, *WEAK_STATUSES)),
    ],
)
def test_status_objects_accept_exactly_their_statuses(
    family: str, operation: str, statuses: tuple[str, ...]
) -> None:
    schema = output_schema(family, operation)
    for status in FAMILY_STATUSES:
        assert valid(schema, {"status": status, "error": None}) is (status in statuses)
    assert not valid(schema, {"error": None})


def test_solver_may_ask_for_decomposition_with_llm_metadata() -> None:
    answer = {
        "status": "needs-decomposition", "responseMarkdown": None, "responseDocument": None,
        "metadata": {"llmCalls": 1, "model": None}, "error": None,
    }  # fmt: skip
    assert valid(output_schema("gs", "solve"), answer)
    answer["metadata"] = {"llmCalls": -1, "model": None}
    assert not valid(output_schema("gs", "solve"), answer)


def test_errors_carry_a_code_and_a_message() -> None:
    schema = output_schema("kb", "retrieve")
    assert valid(schema, {"status": "error", "error": {"code": "E", "message": "m"}})
    assert not valid(schema, {"status": "error", "error": "boom"})


def test_retrieval_trace_purpose_is_an_enum() -> None:
    schema = output_schema("kb", "retrieve")
    trace = {"purpose": "mixed", "kuLevelsUsed": ["summary"], "totalKUsConsidered": 9,
             "selectedKUCount": 2}  # fmt: skip
    assert valid(schema, {"status": "success", "sufficient": True, "retrievalTrace": trace})
    trace["purpose"] = "everything"
    assert not valid(schema, {"status": "success", "retrievalTrace": trace})


def test_session_event_envelope() -> None:
    event = {
        "eventType": "kb-forked", "sessionId": "s1", "kbId": "kb2", "kbName": None,
        "requestedKbId": None, "previousKbId": "kb1", "previousKbName": "Old",
        "repositoryMeta": None, "workspaceStats": {}, "snapshot": None, "units": [],
        "scope": None, "reason": None,
    }  # fmt: skip
    assert valid(SESSION_EVENT_SCHEMA, event)
    assert not valid(SESSION_EVENT_SCHEMA, {**event, "eventType": "kb-deleted"})
    assert not valid(SESSION_EVENT_SCHEMA, {**event, "scope": "forever"})
    assert not valid(SESSION_EVENT_SCHEMA, {"eventType": "session-created"})


def test_plan_and_outcome() -> None:
    plan = {
        "plannerPluginId": "planner-default", "kbPluginOrder": ["kb-fast"],
        "goalSolverOrder": ["gs-symbolic", "gs-llm-fast"], "decompose": False,
        "framePurpose": None, "notes": [],
    }  # fmt: skip
    assert valid(output_schema("plan", "build_plan"), plan)
    assert not valid(output_schema("plan", "build_plan"), {**plan, "framePurpose": "fun"})
    outcome = {
        "requestId": "r1", "sessionId": "s1", "plannerPluginId": "planner-default",
        "plannerAttempts": ["planner-default"],
        "stages": [{"plannerPluginId": "planner-default", "stage": "kb", "pluginId": "kb-fast",
                    "status": "skipped-budget", "durationMs": 0, "llmCalls": 0,
                    "sufficient": None, "model": None, "modelRole": None}],
        "finalStatus": "success", "finalAnswerStatus": "answered", "frameDepth": 0,
        "framePurpose": None,
    }  # fmt: skip
    assert valid(PLANNER_OUTCOME_SCHEMA, outcome)
    outcome["stages"][0]["stage"] = "planning"
    assert not valid(PLANNER_OUTCOME_SCHEMA, outcome)
    assert output_schema("plan", "record_outcome") == {"type": "null"}


def test_status_sets() -> None:
    assert {"unsupported", "insufficient", "no-context"} == WEAK_STATUSES
    assert WEAK_STATUSES <= FAMILY_STATUSES
    assert FAMILY_STATUSES | {"skipped-budget"} == set(STAGE_STATUSES) | {"skipped", "no-context"}


def test_notifications_and_outcomes_are_writes() -> None:
    effects = {op.id: op.effect for f in CONTRACTS for op in family_operations(f)}
    assert {op for op, effect in effects.items() if effect == "write"} == {
        "on_source_text", "on_session_event", "record_outcome",
    }  # fmt: skip
