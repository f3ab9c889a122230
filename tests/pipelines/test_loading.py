"""Reading documents: shape faults with pointers, hostile text, and OLO engine configs."""

from __future__ import annotations

import json
from typing import Any

from plugyard.pipelines import load, validate
from plugyard.pipelines.model import CallModel, GroupModel
from plugyard.yard import Yard


def codes(source: Any) -> list[tuple[str, str]]:
    return [(f.code, f.pointer) for f in load(source).faults]


def test_shape_faults_are_all_listed_with_their_pointers() -> None:
    text = """
capabilities:
  - capability: A
    flow:
      - {plugin: x, bogus: 1}
      - {children: [{plugin: 3}], mode: sideways}
      - {pipeline: "no spaces allowed"}
  - flow: []
"""
    assert codes(text) == [
        ("unknown_field", "/capabilities/0/flow/0/bogus"),
        ("invalid_value", "/capabilities/0/flow/1/mode"),
        ("invalid_value", "/capabilities/0/flow/1/children/0/plugin"),
        ("invalid_value", "/capabilities/0/flow/2/pipeline"),
        ("missing_field", "/capabilities/1"),
    ]


def test_json_and_yaml_give_the_same_document() -> None:
    data = {"capabilities": [{"capability": "A", "flow": ["x", {"children": ["y"]}]}]}
    from_json = load(json.dumps(data)).document
    from_yaml = load("capabilities:\n  - capability: A\n    flow: [x, {children: [y]}]\n").document
    assert from_json == from_yaml and from_json is not None
    group = from_json.capabilities[1 - 1].flow[1]  # type: ignore[index]
    assert isinstance(group, GroupModel) and group.children == ["y"]


def test_hostile_text_is_refused_with_the_manifest_codes() -> None:
    assert codes("a: 1\na: 2\n") == [("manifest_duplicate_key", "/a")]
    assert codes("a: !!python/object:os.system {}\n")[0][0] == "manifest_yaml_tag"
    assert codes("---\na: 1\n---\nb: 2\n") == [("invalid_value", "")]
    assert codes("[1, 2]") == [("invalid_value", "")]


def test_a_bare_string_node_is_a_plugin_id() -> None:
    document = load({"capabilities": [{"capability": "A", "flow": ["x"]}]}).document
    assert document is not None and document.capabilities is not None
    assert document.capabilities[0].flow == ["x"]
    assert isinstance(load({"capabilities": [{"capability": "A", "flow": [{"plugin": "x"}]}]})
                      .document.capabilities[0].flow[0], CallModel)  # type: ignore[union-attr]  # fmt: skip


# ------------------------------------------------------------------ OLO engine configs

OLO: dict[str, Any] = {
    "capabilityOrder": ["ACCESS", "MODEL", "POST_PROCESS"],
    "capabilityPlugins": {"ACCESS": "guardrail-basic"},
    "defaultForkPlugin": "fork-copy",
    "defaultJoinPlugin": "join-merge",
    "worker": {"queueName": "q"},
    "pipelines": {
        "chat": {
            "defaultTimeoutSeconds": 20,
            "rootByCapability": {
                "MODEL": {
                    "type": "GROUP",
                    "executionMode": "ASYNC",
                    "asyncCompletionPolicy": "FIRST_SUCCESS",
                    "asyncOutputMergePolicy": "PREFIX_BY_ACTIVITY",
                    "children": [
                        {"type": "PLUGIN", "name": "t-model", "pluginType": "ModelPlugin"},
                        "observer-passthrough",
                    ],
                },
                "ACCESS": {
                    "type": "GROUP",
                    "executionMode": "SYNC",
                    "children": [{"type": "STAGE", "name": "ACCESS", "retryPolicy": {}}],
                },
            },
        }
    },
}


def test_an_olo_engine_config_maps_into_a_plugyard_document(yard: Yard) -> None:
    loaded = load(OLO)
    assert loaded.dialect == "olo" and loaded.faults == ()
    assert {(w.code, w.pointer) for w in loaded.warnings} == {
        ("olo_ignored", "/pipelines/chat/rootByCapability/MODEL/asyncOutputMergePolicy"),
        ("olo_ignored", "/pipelines/chat/rootByCapability/ACCESS/children/0/retryPolicy"),
    }
    document = loaded.document
    assert document is not None
    chat = document.pipelines["chat"]
    assert chat.timeout_ms == 20_000
    assert [c.capability for c in chat.capabilities] == ["ACCESS", "MODEL"]
    access = chat.capabilities[0].flow[0]
    assert isinstance(access, CallModel) and access.plugin == "guardrail-basic"
    model = chat.capabilities[1].flow[0]
    assert isinstance(model, GroupModel)
    assert (model.mode, model.fork, model.join, model.completion) == (
        "ASYNC", "fork-copy", "join-merge", "first_success",
    )  # fmt: skip
    assert validate(OLO, yard.registry).ok


def test_olo_faults_point_into_the_olo_document(yard: Yard) -> None:
    broken = json.loads(json.dumps(OLO))
    broken["pipelines"]["chat"]["rootByCapability"]["MODEL"]["children"][0]["name"] = "nope"
    broken["pipelines"]["chat"]["rootByCapability"]["ACCESS"]["children"].append("t-model")
    found = [(f.code, f.pointer) for f in validate(broken, yard.registry).faults]
    assert found == [
        ("capability_not_allowed", "/pipelines/chat/rootByCapability/ACCESS/children/1"),
        ("unknown_plugin", "/pipelines/chat/rootByCapability/MODEL/children/0/name"),
    ]


def test_olo_refusals() -> None:
    config = {
        "capabilityOrder": ["MODEL"],
        "plugins": ["allowed-one"],
        "pipelines": {
            "legacy": {"root": {"type": "GROUP", "children": []}},
            "unordered": {"rootByCapability": {"MODEL": {"children": ["other"]}, "EXTRA": {}}},
        },
    }
    assert codes(config) == [
        ("olo_unsupported", "/pipelines/legacy/root"),
        ("unordered_capability", "/pipelines/unordered/rootByCapability/EXTRA"),
        ("plugin_not_allowed", "/pipelines/unordered/rootByCapability/MODEL/children/0"),
    ]


def test_olo_if_elseif_else_becomes_nested_groups() -> None:
    config = {
        "pipelines": {
            "p": {
                "capabilities": [
                    {
                        "capability": "MODEL",
                        "groups": [
                            {
                                "executionMode": "SYNC",
                                "condition": "c1",
                                "thenChildren": ["a"],
                                "elseifBranches": [{"condition": "c2", "then": ["b"]}],
                                "elseGroup": {"type": "GROUP", "children": ["c"]},
                            }
                        ],
                    }
                ]
            }
        }
    }
    loaded = load(config)
    assert loaded.faults == ()
    assert loaded.document is not None
    top = loaded.document.pipelines["p"].capabilities[0].flow[0]
    assert isinstance(top, GroupModel) and top.condition == "c1" and top.children == ["a"]
    nested = top.else_[0]
    assert isinstance(nested, GroupModel) and nested.condition == "c2" and nested.children == ["b"]
    final = nested.else_[0]
    assert isinstance(final, GroupModel) and final.children == ["c"]
    assert loaded.origin("/pipelines/p/capabilities/0/flow/0/else/0/else/0") == (
        "/pipelines/p/capabilities/0/groups/0/elseGroup"
    )
    assert loaded.origin("/pipelines/p/capabilities/0/flow/0/else/0/children/0") == (
        "/pipelines/p/capabilities/0/groups/0/elseifBranches/0/then/0"
    )


def test_a_plain_document_is_not_taken_for_olo() -> None:
    assert load({"pipelines": {"a": {"capabilities": []}}}).dialect == "plugyard"
    assert load({"defaultTimeoutSeconds": 5, "rootByCapability": {}}).dialect == "olo"


def test_data_meets_the_same_caps_as_text() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(200):
        node["x"] = {}
        node = node["x"]
    assert codes(deep)[0][0] == "manifest_too_deep"
    assert codes({"capabilities": float("nan")}) == [("manifest_non_finite", "")]
