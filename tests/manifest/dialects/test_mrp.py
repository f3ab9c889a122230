"""MRP-VM plugin.json and wrapper manifests: family from type, DS003 common fields, the
wrapper runtime, every backward-compatibility rule, detection and lossless round trips."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plugyard.errors import ManifestError
from plugyard.manifest.dialects import BY_NAME, MRP
from plugyard.manifest.exporters.dialect import DIALECT_NAMES, to_dialect
from plugyard.manifest.families import family_operations
from plugyard.manifest.load import ManifestDocument, detect, load_data, load_file, load_text
from plugyard.manifest.model import (
    HttpRuntime,
    Operation,
    PlannerHints,
    PluginDescriptor,
    PythonRuntime,
    SubprocessRuntime,
)
from plugyard.manifest.reading import OVERLAY_KEY

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mrp"
MANIFESTS = sorted(FIXTURES.rglob("*.json"))
SEED_DESCRIPTOR = FIXTURES / "seeds" / "ds003-descriptor.js"
SEED_FRAGMENTS = sorted(p for p in (FIXTURES / "seeds").glob("*.js") if p != SEED_DESCRIPTOR)

KB: dict[str, Any] = {
    "id": "kb-mini",
    "type": "kb-plugin",
    "name": "Mini KB",
    "description": "Tiny retrieval for tests.",
    "plannerHints": {"expectedLatencyMs": 10},
}


def load(**changes: Any) -> ManifestDocument:
    data = {**KB, **changes}
    return load_data([{k: v for k, v in data.items() if v is not None}])


def problems(**changes: Any) -> list[tuple[str, str]]:
    with pytest.raises(ManifestError) as info:
        load(**changes)
    return [(p.code, p.pointer) for p in info.value.problems]


def warnings(doc: ManifestDocument) -> list[tuple[str, str]]:
    return [(w.code, w.pointer) for w in doc.warnings]


# --------------------------------------------------------------------------- fixtures


@pytest.mark.parametrize(
    ("path", "plugin_id", "family"),
    [
        ("kb-ledger/plugin.json", "kb-ledger", "kb"),
        ("sd-llm-notes/plugin.json", "sd-llm-notes", "sd"),
        ("gs-outline/plugin.json", "gs-outline", "gs"),
        ("val-facts/plugin.json", "val-facts", "val"),
        ("planner-thrifty/plugin.json", "planner-thrifty", "plan"),
        ("sd-legacy-mode/plugin.json", "sd-legacy-mode", "sd"),
        ("wrappers/z3-check/manifest.json", "z3-check", "gs"),
        ("wrappers/legacy-lint/manifest.json", "legacy-lint", "gs"),
    ],
)
def test_fixtures_load_as_mrp_with_their_id_and_family(
    path: str, plugin_id: str, family: str
) -> None:
    doc = load_file(FIXTURES / path)
    assert doc.dialect == "mrp"
    assert [(p.id, p.family) for p in doc.plugins] == [(plugin_id, family)]
    assert doc.plugins[0].operations == family_operations(family)


def test_built_in_descriptor_maps_common_fields_and_keeps_type_specific_ones() -> None:
    plugin = load_file(FIXTURES / "kb-ledger" / "plugin.json").plugins[0]
    assert plugin.cost_class == "cheap"
    assert plugin.version == "1.2.0"
    assert plugin.planner_hints == PlannerHints(
        expected_latency_ms=60, expected_llm_calls=0, relative_cost=0.1,
        supported_acts=("define", "identify", "verify"), topic_tags=("finance", "procedural"),
        preferred_depth="shallow", fallback_role="cheap-probe", confidence_when_matched=0.71,
    )  # fmt: skip
    assert plugin.x == {
        "/knowledgeUnitsFile": "plugin.kus.md",
        "/profileId": "ledger",
        "/plannerHints/evidenceStyle": ["lexical"],
    }
    assert plugin.runtime == PythonRuntime(entrypoint=None)
    assert plugin.source == "built-in"
    assert [op.id for op in plugin.operations] == ["retrieve", "on_source_text", "on_session_event"]


def test_knowledge_is_the_text_of_the_knowledge_units_sidecar() -> None:
    plugin = load_file(FIXTURES / "kb-ledger" / "plugin.json").plugins[0]
    assert plugin.knowledge == (FIXTURES / "kb-ledger" / "plugin.kus.md").read_text()
    assert load(knowledgeUnitsFile="plugin.kus.md").plugins[0].knowledge is None


def test_singular_model_roles_join_model_roles_and_stay_in_x() -> None:
    plugin = load_file(FIXTURES / "sd-llm-notes" / "plugin.json").plugins[0]
    assert plugin.model_roles == ("seed-fast", "kb-ingest")
    assert plugin.x["/modelRole"] == "seed-fast"
    assert plugin.x["/ingestModelRole"] == "kb-ingest"
    assert plugin.uses_llm is True
    assert plugin.max_llm_calls == 2
    assert plugin.x["/promptFiles"] == {"detect": "prompts/detect.md"}


def test_model_roles_list_comes_first_and_repeats_are_dropped() -> None:
    plugin = load_file(FIXTURES / "gs-outline" / "plugin.json").plugins[0]
    assert plugin.model_roles == ("goal-deep", "goal-fast")
    assert (plugin.timeout_ms, plugin.tags, plugin.provides) == (
        45000, ("outline", "structured"), ("answer",),
    )  # fmt: skip


def test_wrapper_manifest_is_a_subprocess_plugin() -> None:
    doc = load_file(FIXTURES / "wrappers" / "z3-check" / "manifest.json")
    plugin = doc.plugins[0]
    assert plugin.runtime == SubprocessRuntime(
        command="python3", args=("wrapper.py", "--quiet"), protocol_version="1"
    )
    assert plugin.source == "external"
    assert plugin.timeout_ms == 30000
    assert plugin.tags == ("satisfiable", "constraint", "smt")
    assert plugin.provides == ("constraint-solving",)
    assert plugin.x == {"/priority": 10, "/exclusive": False, "/maxInputSizeBytes": 65536}
    assert warnings(doc) == [("planner_hints_missing", "/plannerHints")]


def test_legacy_wrapper_takes_its_id_from_name_and_is_a_helper_gs_plugin() -> None:
    doc = load_file(FIXTURES / "wrappers" / "legacy-lint" / "manifest.json")
    assert (doc.plugins[0].id, doc.plugins[0].name, doc.plugins[0].family) == (
        "legacy-lint", "legacy-lint", "gs",
    )  # fmt: skip
    assert set(warnings(doc)) == {
        ("implicit_type", "/type"),
        ("legacy_field", "/name"),
        ("planner_hints_missing", "/plannerHints"),
    }


def test_legacy_mode_id_is_kept_with_a_warning() -> None:
    doc = load_file(FIXTURES / "sd-legacy-mode" / "plugin.json")
    assert doc.plugins[0].x["/modeId"] == "symbolic-only"
    assert warnings(doc) == [("legacy_field", "/modeId")]
    assert ("legacy_field", "/strategyId") in warnings(load(strategyId="llm-assisted"))


def test_ds003_descriptor_literal_loads_as_kb_balanced() -> None:
    doc = load_text(SEED_DESCRIPTOR.read_text())
    plugin = doc.plugins[0]
    assert (doc.dialect, plugin.id, plugin.family) == ("mrp", "kb-balanced", "kb")
    assert plugin.model_roles == ("kb-ingest",)
    assert (plugin.max_llm_calls, plugin.timeout_ms) == (1, 30000)
    assert plugin.provides == ("retrieve-context",)
    assert plugin.accepts == ("chat-turn", "source-text")
    assert plugin.planner_hints is not None
    assert plugin.planner_hints.confidence_when_matched == 0.76
    assert (plugin.cost_class, plugin.uses_llm) == (None, None)
    assert {("placeholder_value", "/costClass"), ("placeholder_value", "/usesLLM")} <= set(
        warnings(doc)
    )
    assert "description_sentences" not in {code for code, _ in warnings(doc)}


@pytest.mark.parametrize("path", SEED_FRAGMENTS, ids=lambda p: p.stem)
def test_seed_fragments_without_identity_are_structured_errors(path: Path) -> None:
    with pytest.raises(ManifestError) as info:
        load_text(path.read_text())
    assert all(isinstance(p.pointer, str) for p in info.value.problems)


# --------------------------------------------------------------------------- rules


def test_wrapper_without_protocol_version_is_refused() -> None:
    data = {"id": "test-plugin", "name": "Test", "command": "echo", "args": ["hi"]}
    with pytest.raises(ManifestError) as info:
        load_data([data])
    assert [(p.code, p.pointer) for p in info.value.problems] == [
        ("manifest_missing_field", "/protocolVersion")
    ]


@pytest.mark.parametrize("version", [2, "1", True, 1.5])
def test_only_protocol_version_number_one_is_accepted(version: Any) -> None:
    assert problems(command="echo", protocolVersion=version) == [
        ("manifest_invalid_value", "/protocolVersion")
    ]


def test_wrapper_needs_a_command() -> None:
    assert problems(protocolVersion=1, args=["x"]) == [("manifest_missing_field", "/command")]


def test_unknown_type_is_unsupported() -> None:
    assert problems(type="cache-plugin") == [("unsupported_type", "/type")]
    assert problems(type="widget") == [("unsupported_type", "/type")]


def test_built_in_descriptor_needs_a_type() -> None:
    assert problems(type=None) == [("manifest_missing_field", "/type")]


@pytest.mark.parametrize("kind", ["sd", "kb", "gs", "val", "plan", "tool"])
def test_short_family_names_are_read_with_a_warning(kind: str) -> None:
    doc = load(type=kind)
    assert doc.plugins[0].family == kind
    assert ("type_synonym", "/type") in warnings(doc)


@pytest.mark.parametrize("kind", ["sd-plugin", "kb-plugin", "gs-plugin"])
def test_planner_facing_built_ins_need_planner_hints(kind: str) -> None:
    assert problems(type=kind, plannerHints=None) == [("manifest_missing_field", "/plannerHints")]


@pytest.mark.parametrize("kind", ["val-plugin", "mrp-plan-plugin"])
def test_validators_and_planners_may_omit_planner_hints(kind: str) -> None:
    assert load(type=kind, plannerHints=None).plugins[0].planner_hints is None


@pytest.mark.parametrize(
    "description",
    ["", "One. Two. Three. Four.", "   "],
)
def test_description_outside_one_to_three_sentences_is_only_a_warning(description: str) -> None:
    doc = load(description=description)
    assert ("description_sentences", "/description") in warnings(doc)


def test_abbreviations_do_not_end_a_sentence() -> None:
    doc = load(description="Ranks by cost, e.g. cheap first. Uses BM25 vs. dense. Fast. Simple.")
    assert ("description_sentences", "/description") in warnings(doc)
    doc = load(description="Ranks by cost, e.g. cheap first, i.e. greedy. Uses BM25 vs. dense.")
    assert ("description_sentences", "/description") not in warnings(doc)


def test_timeout_ms_wins_over_wrapper_timeout() -> None:
    doc = load(timeoutMs=500, timeout=900)
    assert doc.plugins[0].timeout_ms == 500
    assert doc.plugins[0].x["/timeout"] == 900
    assert ("ignored_field", "/timeout") in warnings(doc)


def test_unknown_fields_are_kept_in_x_with_a_warning() -> None:
    doc = load(owner="team-kb", plannerHints={"expectedLatencyMs": 1, "warmup": True})
    assert doc.plugins[0].x == {"/owner": "team-kb", "/plannerHints/warmup": True}
    assert {("unknown_field", "/owner"), ("unknown_field", "/plannerHints/warmup")} <= set(
        warnings(doc)
    )


@pytest.mark.parametrize(
    ("changes", "pointer"),
    [
        ({"id": "has space"}, "/id"),
        ({"id": ["x"]}, "/id"),
        ({"name": {"a": 1}}, "/name"),
        ({"costClass": "cheapest"}, "/costClass"),
        ({"usesLLM": "maybe"}, "/usesLLM"),
        ({"maxLLMCalls": -1}, "/maxLLMCalls"),
        ({"maxLLMCalls": 1.5}, "/maxLLMCalls"),
        ({"timeoutMs": 0}, "/timeoutMs"),
        ({"modelRoles": {"a": "b"}}, "/modelRoles"),
        ({"modelRole": ["a"]}, "/modelRole"),
        ({"tags": [1, {"a": 1}]}, "/tags/1"),
        ({"plannerHints": ["fast"]}, "/plannerHints"),
        ({"plannerHints": {"relativeCost": "high"}}, "/plannerHints/relativeCost"),
        ({"plannerHints": {"topicTags": [[]]}}, "/plannerHints/topicTags/0"),
        ({"plannerHints": {"evidenceStyle": 3}}, "/plannerHints/evidenceStyle"),
        ({"profileId": {}}, "/profileId"),
        ({"promptFiles": []}, "/promptFiles"),
        ({"dependencyChecks": "all"}, "/dependencyChecks"),
        ({"maxInputSizeBytes": 0}, "/maxInputSizeBytes"),
        ({"exclusive": "sometimes"}, "/exclusive"),
        ({"command": "x", "protocolVersion": 1, "args": {"a": 1}}, "/args"),
        ({"command": "x", "protocolVersion": 1, "timeout": "soon"}, "/timeout"),
        ({"type": 7}, "/type"),
        ({OVERLAY_KEY: []}, f"/{OVERLAY_KEY}"),
    ],
)
def test_wrong_types_are_errors_at_their_pointer(changes: dict[str, Any], pointer: str) -> None:
    assert pointer in {where for _, where in problems(**changes)}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=8,
)  # fmt: skip
_KEYS = st.sampled_from(
    sorted({*KB, "command", "args", "protocolVersion", "modelRole", "timeout", "keywords",
            "capabilities", "tags", "knowledgeUnitsFile", "maxInputSizeBytes"})
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_KEYS, json_values, max_size=4))
def test_reader_never_raises_anything_but_manifest_error(changes: dict[str, Any]) -> None:
    with contextlib.suppress(ManifestError):
        load_data([{**KB, **changes}])


# --------------------------------------------------------------------------- detection


@pytest.mark.parametrize(
    "data",
    [
        {"builtins": [{"module": "src/plugins/kb-plugin/kb-fast/index.mjs", "enabled": True}],
         "defaultPlannerPlugin": "planner-default", "wrappersDir": "wrappers"},
        {"defaultPlannerPlugin": "planner-default", "maxPluginsPerStage": 4},
        {"plugin": {"id": "a", "capability": "MODEL"}, "costClass": "cheap"},
        {"id": "weather", "name": "W", "description": "d",
         "capabilities": [{"id": "f", "parameters": []}], "costClass": "cheap"},
        {"plugin_id": "slack", "type": "http", "health_check_url": "http://h/health"},
        {"name": "x", "entrypoints": {"x": "m:C"}, "type": "kb-plugin"},
        {"name": "x", "module": "m:C", "op_auth": {}},
        {"$schema": "https://plugyard.dev/schemas/plugin-descriptor.schema.json", "id": "a"},
        {"id": "a", "type": "subprocess", "command": "x", "protocolVersion": 1},
        {"id": "a", "name": "b"},
        {"command": "npx", "args": ["server"]},
    ],
)  # fmt: skip
def test_documents_of_other_shapes_are_not_claimed(data: dict[str, Any]) -> None:
    assert MRP.score(data) == 0


def test_mrp_catalog_declares_no_plugin() -> None:
    catalog = {"defaultPlannerPlugin": "planner-default", "builtins": [], "statsFile": "s.json"}
    with pytest.raises(ManifestError) as info:
        load_data([catalog])
    assert info.value.code == "manifest_unknown_dialect"


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixtures_are_detected_as_mrp(path: Path) -> None:
    assert detect(json.loads(path.read_text())) is MRP


# --------------------------------------------------------------------------- writing


def _loaded(path: Path) -> PluginDescriptor:
    if path.suffix == ".js":
        return load_text(path.read_text()).plugins[0]
    return load_file(path).plugins[0]


ALL_FIXTURES = [*MANIFESTS, SEED_DESCRIPTOR]


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_own_round_trip_is_lossless_and_needs_no_overlay(path: Path) -> None:
    plugin = _loaded(path)
    doc = to_dialect(plugin, "mrp")
    assert "operations" not in doc
    # Only the sidecar text cannot live in the manifest itself.
    assert set(doc.get(OVERLAY_KEY, {})) <= {"knowledge"}
    assert load_data([doc]).plugins[0] == plugin


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_round_trip_through_every_dialect_is_lossless(path: Path, dialect: str) -> None:
    plugin = _loaded(path)
    assert load_data([to_dialect(plugin, dialect)]).plugins[0] == plugin


def test_writer_uses_the_wrapper_spellings_for_a_wrapper() -> None:
    plugin = _loaded(FIXTURES / "wrappers" / "z3-check" / "manifest.json")
    doc = BY_NAME["mrp"].write(plugin)
    assert doc == {
        "id": "z3-check", "type": "gs-plugin", "version": "0.2.1",
        "description": "Checks whether a set of constraints is satisfiable with Z3.",
        "timeout": 30000, "keywords": ["satisfiable", "constraint", "smt"],
        "capabilities": ["constraint-solving"], "command": "python3",
        "args": ["wrapper.py", "--quiet"], "protocolVersion": 1, "priority": 10,
        "exclusive": False, "maxInputSizeBytes": 65536,
    }  # fmt: skip


FOREIGN = [
    PluginDescriptor(
        id="weather", name="Weather", description="Current weather.", family="tool",
        operations=(Operation(id="fetch", http_method="GET", http_path="/w"),),
        runtime=HttpRuntime(base_url="http://127.0.0.1:9/"), source="external",
        x={"/capabilities/0/extra": 1, "/plugin/foo": "bar", "/schemaVersion": "1.0",
           "/description_long": "long", "/plannerHints/evidenceStyle": ["x"], "/note": 2},
    ),
    PluginDescriptor(id="solver", name="solver", family="gs",
                     runtime=SubprocessRuntime(command="bin", protocol_version="2")),
    PluginDescriptor(id="kb-x", name="KB", family="kb", planner_hints=PlannerHints(),
                     runtime=SubprocessRuntime(command="bin", env={"A": "1"},
                                               protocol_version="1")),
    PluginDescriptor(id="p", name="P", family="plan", model_roles=("b", "a"),
                     x={"/modelRole": "a", "/timeout": 5}, timeout_ms=7,
                     runtime=PythonRuntime(entrypoint="pkg.mod:Planner")),
]  # fmt: skip


@pytest.mark.parametrize("plugin", FOREIGN, ids=lambda p: p.id)
def test_plugins_from_elsewhere_round_trip_through_mrp(plugin: PluginDescriptor) -> None:
    doc = to_dialect(plugin, "mrp")
    assert detect(doc) is MRP
    assert load_data([doc]).plugins[0] == plugin
