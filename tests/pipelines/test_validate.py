"""Validation before anything runs: the OLO placement rules, every fault with its path."""

from __future__ import annotations

from typing import Any

from plugyard.pipelines import validate
from plugyard.yard import Yard


def faults(yard: Yard, document: Any) -> list[tuple[str, str]]:
    return [(f.code, f.pointer) for f in validate(document, yard.registry).faults]


def doc(*flow: Any, capability: str = "TOOL", **fields: Any) -> dict[str, Any]:
    return {"name": "t", "capabilities": [{"capability": capability, "flow": list(flow)}], **fields}


def test_a_valid_document_gives_a_plan_and_no_fault(yard: Yard) -> None:
    report = validate(doc("observer-passthrough"), yard.registry)
    assert report.ok and report.plan is not None
    assert report.plan.entry == "t"
    assert report.to_dict()["faults"] == []


def test_a_stage_stands_only_under_a_capability_it_lists(yard: Yard) -> None:
    assert faults(yard, doc("cache-memory", capability="MODEL")) == [
        ("capability_not_allowed", "/capabilities/0/flow/0")
    ]
    assert faults(yard, doc("cache-memory", capability="CACHING")) == []


def test_all_places_a_stage_under_every_capability(yard: Yard) -> None:
    for capability in ("ACCESS", "MY_CUSTOM"):
        assert faults(yard, doc("observer-passthrough", capability=capability)) == []


def test_an_undefined_stage_stands_only_inside_a_group(yard: Yard) -> None:
    assert faults(yard, doc("calculator")) == [
        ("undefined_outside_group", "/capabilities/0/flow/0")
    ]
    assert faults(yard, doc({"children": ["calculator"]})) == []


def test_control_plugins_stand_only_in_their_own_slot(yard: Yard) -> None:
    document = doc(
        "join-merge",
        {"children": ["t-echo"], "condition": "iterator-batch", "iterator": "condition-expression"},
    )
    assert faults(yard, document) == [
        ("role_misplaced", "/capabilities/0/flow/0"),
        ("role_misplaced", "/capabilities/0/flow/1/condition"),
        ("role_misplaced", "/capabilities/0/flow/1/iterator"),
    ]


def test_a_stage_plugin_is_refused_in_a_slot(yard: Yard) -> None:
    document = doc({"children": ["t-echo"], "condition": {"plugin": "t-echo"}})
    assert faults(yard, document) == [("role_misplaced", "/capabilities/0/flow/0/condition/plugin")]


def test_a_group_has_at_most_one_plugin_per_slot(yard: Yard) -> None:
    document = doc({"children": ["t-echo"], "condition": ["t-if", "condition-expression"]})
    assert faults(yard, document) == [("slot_repeated", "/capabilities/0/flow/0/condition")]


def test_only_inside_group_is_honoured(yard: Yard) -> None:
    assert faults(yard, doc("t-inside")) == [("only_inside_group", "/capabilities/0/flow/0")]
    assert faults(yard, doc({"children": ["t-inside"]})) == []


def test_an_async_group_needs_its_fork_join_and_branches(yard: Yard) -> None:
    assert faults(yard, doc({"mode": "ASYNC", "children": []})) == [
        ("missing_fork", "/capabilities/0/flow/0"),
        ("missing_join", "/capabilities/0/flow/0"),
        ("empty_group", "/capabilities/0/flow/0/children"),
    ]


def test_a_sync_group_has_no_fork_or_join(yard: Yard) -> None:
    document = doc({"children": ["t-echo"], "fork": "fork-copy", "join": "join-merge"})
    assert faults(yard, document) == [
        ("slot_not_allowed", "/capabilities/0/flow/0/fork"),
        ("slot_not_allowed", "/capabilities/0/flow/0/join"),
    ]


def test_unknown_plugins_and_operations_are_refused(yard: Yard) -> None:
    document = doc(
        {"plugin": "no-such-plugin"},
        {"children": ["json-query", {"plugin": "json-query", "operation": "nope"}]},
    )
    assert faults(yard, document) == [
        ("unknown_plugin", "/capabilities/0/flow/0/plugin"),
        ("unknown_operation", "/capabilities/0/flow/1/children/0"),
        ("unknown_operation", "/capabilities/0/flow/1/children/1/operation"),
    ]


def test_an_unknown_plugin_suggests_near_names(yard: Yard) -> None:
    report = validate(doc("guardrails-basic"), yard.registry)
    assert "guardrail-basic" in report.faults[0].message


def test_a_plugin_is_found_by_the_class_name_olo_calls_it(yard: Yard) -> None:
    report = validate(doc("plugin.BasicGuardrail", capability="ACCESS"), yard.registry)
    assert report.ok and report.plan is not None
    step = report.plan.pipeline().capabilities[0].steps[0]
    assert getattr(step, "plugin_id", None) == "guardrail-basic"


def test_sub_pipeline_cycles_and_unknown_references_are_refused(yard: Yard) -> None:
    document = doc({"pipeline": "a"}, {"pipeline": "missing"})
    document["pipelines"] = {
        "a": {"capabilities": [{"capability": "X", "flow": [{"pipeline": "b"}]}]},
        "b": {"capabilities": [{"capability": "X", "flow": [{"pipeline": "a"}]}]},
    }
    found = faults(yard, document)
    assert ("unknown_pipeline", "/capabilities/0/flow/1/pipeline") in found
    assert [c for c, _ in found].count("pipeline_cycle") == 1


def test_a_pipeline_calling_itself_is_a_cycle(yard: Yard) -> None:
    assert faults(yard, doc({"pipeline": "t"})) == [
        ("pipeline_cycle", "/capabilities/0/flow/0/pipeline")
    ]


def test_fallback_rules(yard: Yard) -> None:
    assert faults(yard, doc("t-echo", on_error="fallback")) == [("fallback_missing", "/on_error")]
    stage = {"plugin": "t-echo", "on_error": "fallback", "fallback": "cache-memory"}
    assert faults(yard, doc(stage)) == [
        ("capability_not_allowed", "/capabilities/0/flow/0/fallback")
    ]
    assert faults(yard, doc("t-echo", fallback="t-model")) == [
        ("capability_not_allowed", "/fallback")
    ]


def test_reserved_names_duplicate_ids_and_bad_paths_are_refused(yard: Yard) -> None:
    document = {
        "name": "t",
        "capabilities": [
            {"capability": "ALL", "flow": [{"plugin": "t-echo", "id": "x"}]},
            {
                "capability": "X",
                "flow": [{"plugin": "t-echo", "id": "x", "input": {"value": "a..b"}}],
            },
        ],
    }
    assert faults(yard, document) == [
        ("reserved_capability", "/capabilities/0/capability"),
        ("duplicate_node_id", "/capabilities/1/flow/0/id"),
        ("invalid_path", "/capabilities/1/flow/0/input/value"),
    ]


def test_every_fault_is_listed_not_only_the_first(yard: Yard) -> None:
    document = doc(
        "calculator",
        "cache-memory",
        "nope",
        {"mode": "ASYNC", "children": ["t-echo"]},
        capability="MODEL",
    )
    assert [c for c, _ in faults(yard, document)] == [
        "undefined_outside_group",
        "capability_not_allowed",
        "unknown_plugin",
        "missing_fork",
        "missing_join",
    ]


def test_an_empty_document_and_an_empty_pipeline_are_refused(yard: Yard) -> None:
    assert faults(yard, {}) == [("empty_pipeline", "")]
    assert faults(yard, {"capabilities": []}) == [("empty_pipeline", "/capabilities")]


def test_warnings_never_refuse(yard: Yard) -> None:
    report = validate(doc({"children": []}), yard.registry)
    assert report.ok
    assert [w.code for w in report.warnings] == ["empty_group"]
