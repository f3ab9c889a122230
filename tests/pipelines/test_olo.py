"""OLO engine configs in engine mode: read and checked as OLO's engine loads them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from plugyard.pipelines import load, validate
from plugyard.pipelines.model import GroupModel
from plugyard.yard import Yard

LEGACY = Path(__file__).parent / "fixtures" / "olo-legacy-stages.json"

#: Legacy ``stages``, a stage outside its capability, an ASYNC group naming no fork/join.
CONFIG: dict[str, Any] = {
    "capabilityOrder": ["ACCESS", "MODEL"],
    "worker": {"queueName": "q"},
    "pipelines": {
        "default": {
            "defaultTimeoutSeconds": 10,
            "stages": [
                {"stage": "ACCESS", "groups": [{"executionMode": "SYNC", "children": ["t-model"]}]},
                {
                    "stage": "MODEL",
                    "groups": [{"executionMode": "ASYNC", "children": ["t-echo", "t-model"]}],
                },
            ],
        }
    },
}


def pairs(problems: Any) -> list[tuple[str, str]]:
    return [(p.code, p.pointer) for p in problems]


def test_the_legacy_stages_key_is_read_as_capability_blocks() -> None:
    loaded = load(CONFIG)
    assert loaded.faults == () and loaded.document is not None
    default = loaded.document.pipelines["default"]
    assert [c.capability for c in default.capabilities] == ["ACCESS", "MODEL"]
    group = default.capabilities[1].flow[0]
    assert isinstance(group, GroupModel) and group.mode == "ASYNC" and group.fork is None
    assert loaded.origin("/pipelines/default/capabilities/1/flow/0") == (
        "/pipelines/default/stages/1/groups/0"
    )


def test_strict_mode_refuses_what_olos_engine_accepts(yard: Yard) -> None:
    report = validate(CONFIG, yard.registry)
    assert pairs(report.faults) == [
        ("capability_not_allowed", "/pipelines/default/stages/0/groups/0/children/0"),
        ("missing_fork", "/pipelines/default/stages/1/groups/0"),
        ("missing_join", "/pipelines/default/stages/1/groups/0"),
    ]


def test_engine_mode_turns_placement_faults_into_warnings_naming_plugin_capability_rule(
    yard: Yard,
) -> None:
    report = validate(CONFIG, yard.registry, "auto")
    assert report.ok and report.engine and report.to_dict()["mode"] == "engine"
    (warning,) = [w for w in report.warnings if w.code == "capability_not_allowed"]
    assert warning.pointer == "/pipelines/default/stages/0/groups/0/children/0"
    for part in ("t-model", "ACCESS", "capability_not_allowed"):
        assert part in warning.message


def test_auto_mode_keeps_plugyard_documents_strict(yard: Yard) -> None:
    document = {"capabilities": [{"capability": "ACCESS", "flow": ["t-model"]}]}
    report = validate(document, yard.registry, "auto")
    assert not report.engine
    assert pairs(report.faults) == [("capability_not_allowed", "/capabilities/0/flow/0")]


def test_unknown_plugins_stay_faults_in_engine_mode(yard: Yard) -> None:
    broken = json.loads(json.dumps(CONFIG))
    broken["pipelines"]["default"]["stages"][1]["groups"][0]["children"][0] = "com.example.Nope"
    report = validate(broken, yard.registry, "engine")
    assert pairs(report.faults) == [
        ("unknown_plugin", "/pipelines/default/stages/1/groups/0/children/0")
    ]


def test_a_capability_order_that_loops_is_a_cycle(yard: Yard) -> None:
    looped = {**CONFIG, "capabilityOrder": ["ACCESS", "MODEL", "ACCESS"]}
    for mode in ("strict", "engine"):
        report = validate(looped, yard.registry, mode)  # type: ignore[arg-type]
        assert ("capability_cycle", "/capabilityOrder/2") in pairs(report.faults)
        assert report.plan is None


def test_engine_mode_runs_a_capability_missing_from_the_order_last_by_name(yard: Yard) -> None:
    config = {
        "capabilityOrder": ["MODEL"],
        "pipelines": {
            "p": {
                "rootByCapability": {
                    "ZETA": {"type": "GROUP", "children": ["t-echo"]},
                    "ALPHA": {"type": "GROUP", "children": ["t-echo"]},
                    "MODEL": {"type": "GROUP", "children": ["t-model"]},
                }
            }
        },
    }
    assert ("unordered_capability", "/pipelines/p/rootByCapability/ALPHA") in pairs(
        validate(config, yard.registry).faults
    )
    report = validate(config, yard.registry, "engine")
    assert report.ok and report.plan is not None
    order = [c.name for c in report.plan.pipelines["p"].capabilities]
    assert order == ["MODEL", "ALPHA", "ZETA"]
    assert ("unordered_capability", "/pipelines/p/rootByCapability/ZETA") in pairs(report.warnings)


def test_an_async_group_without_fork_or_join_runs_with_the_built_in_ones(yard: Yard) -> None:
    run = asyncio.run(yard.pipelines.run(CONFIG, {"question": "hi", "value": 1}, mode="auto"))
    assert run.ok, run.error
    assert run.context["answer"] == "HI" and run.context["echo"] == 1
    kinds = [entry.kind for entry in run.trace]
    assert kinds.count("branch") == 2 and "fork" not in kinds and "join" not in kinds


def test_the_legacy_fixture_validates_in_engine_mode_against_the_bundled_plugins(
    yard: Yard,
) -> None:
    report = validate(LEGACY.read_bytes(), yard.registry, "auto")
    assert report.ok, report.faults
    assert pairs(w for w in report.warnings if w.code == "undefined_outside_group") == [
        ("undefined_outside_group", "/pipelines/default/stages/0/groups/0/children/1")
    ]
