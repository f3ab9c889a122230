"""OLO plugin.yaml: placement and every backward-compatibility rule of the OLO seed."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugyard.errors import ManifestError
from plugyard.manifest.exporters.dialect import to_dialect
from plugyard.manifest.load import load_data, load_text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "olo"


def load(name: str):  # type: ignore[no-untyped-def]
    return load_text((FIXTURES / name).read_text())


STAGE = "CAPABILITY_STAGE"
SEED_PLACEMENTS = [
    ("seed-gemma2.yaml", "llm.gemma2", ("MODEL",), STAGE),
    ("seed-single-model.yaml", "llm.gemma2", ("MODEL",), STAGE),
    ("seed-caching.yaml", "caching.memory", ("CACHING",), STAGE),
    ("seed-multi-capability.yaml", "guardrail.simple", ("ACCESS", "MODEL"), STAGE),
    ("seed-all.yaml", "observability.passthrough", ("ALL",), STAGE),
    ("seed-undefined.yaml", "experimental.unknown", (), STAGE),
    ("seed-condition.yaml", "condition.simple", (), "CONDITION"),
]


@pytest.mark.parametrize(("name", "suffix", "capabilities", "role"), SEED_PLACEMENTS)
def test_seed_examples_load_with_their_placement(
    name: str, suffix: str, capabilities: tuple[str, ...], role: str
) -> None:
    doc = load(name)
    assert doc.dialect == "olo"
    assert [p.id for p in doc.plugins] == [f"com.openllm.plugin.{suffix}"]
    assert doc.plugins[0].placement.capabilities == capabilities
    assert doc.plugins[0].placement.role == role


def test_seed_multi_document_gives_iterator_fork_and_join() -> None:
    roles = [p.placement.role for p in load("seed-iterator-fork-join.yaml").plugins]
    assert roles == ["ITERATOR", "FORK", "JOIN"]


def test_seed_gemma2_keeps_inputs_outputs_icons_and_class() -> None:
    plugin = load("seed-gemma2.yaml").plugins[0]
    op = plugin.operations[0]
    assert op.parameters["properties"]["question"] == {"type": "string", "description": "Question"}
    assert "required" not in op.parameters
    assert op.output_schema is not None
    assert set(op.output_schema["properties"]) == {"result", "modelLabel"}
    assert plugin.icons["smallSvg"] == "icons/Gemma2_2bChatPlugin-icon-64.svg"
    assert plugin.runtime.kind == "python"
    assert plugin.x["/schemaVersion"] == "1.0"


def test_schema_shape_with_placeholder_id_is_a_structured_error() -> None:
    with pytest.raises(ManifestError) as info:
        load("seed-schema-shape.yaml")
    assert ("manifest_missing_field", "/plugin/id") in [
        (p.code, p.pointer) for p in info.value.problems
    ]


def test_placeholders_in_seed_snippets_are_warnings() -> None:
    doc = load("seed-single-model.yaml")
    assert {w.pointer for w in doc.warnings if w.code == "placeholder_value"} >= {
        "/plugin/className",
        "/plugin/inputs/0",
    }


def test_singular_capability_is_a_list_of_one() -> None:
    assert load("singular-capability.yaml").plugins[0].placement.capabilities == ("MODEL",)


def test_null_capability_and_empty_scope_mean_undefined_stage() -> None:
    placement = load("null-capability.yaml").plugins[0].placement
    assert placement.undefined
    assert placement.role == "CAPABILITY_STAGE"
    assert placement.only_inside_group is False


def test_legacy_scope_capabilities_stand_in_for_capability() -> None:
    placement = load("legacy-scope-capabilities.yaml").plugins[0].placement
    assert placement.capabilities == ("MEMORY", "CACHING")
    assert placement.only_inside_group is True


def test_capability_wins_over_scope_capabilities_with_a_warning() -> None:
    doc = load_text("plugin:\n  id: a\n  capability: [MODEL]\n  scope:\n    capabilities: [TOOL]\n")
    assert doc.plugins[0].placement.capabilities == ("MODEL",)
    assert [w.code for w in doc.warnings] == ["ignored_field"]


def test_flat_plugins_list_reads_display_name_and_keeps_class_name() -> None:
    doc = load("flat-plugins-list.yaml")
    assert [p.id for p in doc.plugins] == ["com.example.llm.one", "com.example.llm.two"]
    first = doc.plugins[0]
    assert first.name == "One (Ollama)"
    assert first.x["/name"] == "com.example.llm.OneChatPlugin"
    assert "legacy_flat_plugin" in {w.code for w in doc.warnings}


def test_unknown_fields_are_kept_with_warnings() -> None:
    doc = load("unknown-fields.yaml")
    assert doc.plugins[0].x == {
        "/vendor": "acme",
        "/plugin/colour": "blue",
        "/plugin/scope/weight": 3,
        "/schemaVersion": "1.0",
    }
    assert sorted(w.pointer for w in doc.warnings if w.code == "unknown_field") == [
        "/plugin/colour",
        "/plugin/scope/weight",
        "/vendor",
    ]


INVALID = "manifest_invalid_value"


@pytest.mark.parametrize(
    ("text", "code", "pointer"),
    [
        ("plugin:\n  id: a\n  scope:\n    role: BOSS\n", INVALID, "/plugin/scope/role"),
        ("plugin:\n  id: a\n  capability: {a: 1}\n", INVALID, "/plugin/capability"),
        ("plugin:\n  id: a\n  inputs: [{type: string}]\n", "manifest_missing_field",
         "/plugin/inputs/0/name"),
        ("plugin:\n  id: [a]\n", "manifest_invalid_value", "/plugin/id"),
        ("plugin:\n  id: a\n  scope:\n    onlyInsideGroup: maybe\n", "manifest_invalid_value",
         "/plugin/scope/onlyInsideGroup"),
        ("plugin: 3\n", "manifest_unknown_dialect", ""),
    ],
)  # fmt: skip
def test_wrong_types_are_refused_at_their_pointer(text: str, code: str, pointer: str) -> None:
    with pytest.raises(ManifestError) as info:
        load_text(text)
    assert (code, pointer) in [(p.code, p.pointer) for p in info.value.problems]


def test_lowercase_role_is_read_with_a_warning() -> None:
    doc = load_text("plugin:\n  id: a\n  scope:\n    role: join\n")
    assert doc.plugins[0].placement.role == "JOIN"
    assert [w.code for w in doc.warnings] == ["coerced_case"]


REFUSED = {"seed-schema-shape.yaml"}


@pytest.mark.parametrize(
    "name", sorted(p.name for p in FIXTURES.glob("*.yaml") if p.name not in REFUSED)
)
def test_round_trip_through_olo_is_lossless_without_overlay(name: str) -> None:
    doc = load(name)
    for plugin in doc.plugins:
        exported = to_dialect(plugin, "olo")
        assert "x-plugyard" not in exported
        assert load_data([exported]).plugins[0] == plugin
