"""Drops into a pipeline are judged by the engine's placement rules, with their codes."""

from __future__ import annotations

from typing import Any

import pytest

from plugyard.console.editor import drop, read_document, remove, starter, write_document
from plugyard.errors import PlugyardError
from plugyard.yard import Yard


def grouped(capability: str = "MODEL") -> dict[str, Any]:
    document = starter(capability)
    document["capabilities"][0]["flow"] = [{"id": "g", "children": []}]
    return document


@pytest.mark.parametrize(
    ("slot", "component", "code"),
    [
        ("/capabilities/0/flow", "condition-expression", "role_misplaced"),
        ("/capabilities/0/flow", "cache-memory", "capability_not_allowed"),
        ("/capabilities/0/flow", "experimental-normalize", "undefined_outside_group"),
        ("/capabilities/0/flow/0/condition", "guardrail-basic", "role_misplaced"),
        ("/capabilities/0/flow/0/fork", "fork-copy", "slot_not_allowed"),
        ("/capabilities/0/flow", "no-such-plugin", "unknown_plugin"),
    ],
)
def test_a_refused_drop_names_the_rule_and_keeps_the_document(
    yard: Yard, slot: str, component: str, code: str
) -> None:
    document = grouped()
    done = drop(document, slot, component, yard.registry)
    assert done.refused is not None and done.refused.code == code
    assert done.document == document


@pytest.mark.parametrize(
    ("slot", "component"),
    [
        ("/capabilities/0/flow", "guardrail-basic"),
        ("/capabilities/0/flow", "observer-passthrough"),
        ("/capabilities/0/flow/0/condition", "condition-expression"),
        ("/capabilities/0/flow/0/children", "experimental-normalize"),
        ("/capabilities/0/flow", "group:ASYNC"),
    ],
)
def test_an_allowed_drop_lands_in_its_slot(yard: Yard, slot: str, component: str) -> None:
    done = drop(grouped(), slot, component, yard.registry)
    assert done.refused is None and done.pointer is not None
    assert component in write_document(done.document) or component.startswith("group:")


def test_a_plugin_only_inside_a_group_is_refused_at_the_root(yard: Yard) -> None:
    from dataclasses import replace

    held = yard.registry.find("guardrail-basic")
    assert held is not None
    placement = held.descriptor.placement.model_copy(update={"only_inside_group": True})
    boxed = held.descriptor.model_copy(update={"id": "boxed", "placement": placement})
    yard.registry.register(replace(held, descriptor=boxed))
    done = drop(starter("MODEL"), "/capabilities/0/flow", "boxed", yard.registry)
    assert done.refused is not None and done.refused.code == "only_inside_group"
    inside = drop(grouped(), "/capabilities/0/flow/0/children", "boxed", yard.registry)
    assert inside.refused is None


def test_a_slot_that_is_not_there_is_invalid_request(yard: Yard) -> None:
    with pytest.raises(PlugyardError) as caught:
        drop(starter("MODEL"), "/capabilities/7/flow", "guardrail-basic", yard.registry)
    assert caught.value.code == "invalid_request"


def test_remove_takes_a_node_out() -> None:
    document = grouped()
    document["capabilities"][0]["flow"][0]["condition"] = {"plugin": "condition-expression"}
    assert "condition" not in remove(document, "/capabilities/0/flow/0/condition").document[
        "capabilities"][0]["flow"][0]  # fmt: skip
    assert remove(document, "/capabilities/0/flow/0").document["capabilities"][0]["flow"] == []


def test_the_document_text_is_read_by_the_hostile_input_safe_reader() -> None:
    with pytest.raises(PlugyardError) as caught:
        read_document("a: &a [*a, *a, *a]\nb: !!python/object:os.system {}")
    assert caught.value.code == "pipeline_invalid"
    assert read_document("name: x\ncapabilities: []")["name"] == "x"
