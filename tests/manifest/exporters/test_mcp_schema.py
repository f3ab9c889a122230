"""MCP tool schemas that strict clients accept, and that accept exactly what the
descriptor's schemas accept."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs
import mcp.types
from hypothesis import given, settings
from hypothesis import strategies as st

from plugyard import Operation, PluginDescriptor, export_tools
from plugyard.manifest.exporters.mcp_schema import any_value, output_schema, portable
from plugyard.yard import Settings, Yard

NULLABLE_OBJECT = {
    "type": ["object", "null"],
    "description": "A snapshot, or null when there is none.",
    "properties": {"id": {"type": "string"}, "size": {"type": "integer", "minimum": 0}},
    "required": ["id"],
    "additionalProperties": False,
}
#: Schemas a descriptor may hold that strict clients report, and their neighbours.
SCHEMAS: list[Any] = [
    {"type": ["string", "null"], "minLength": 2, "description": "A name."},
    NULLABLE_OBJECT,
    {"type": ["array", "object"], "items": {"type": "integer"}, "minProperties": 1},
    {"type": ["number", "integer", "string"], "minimum": 3, "maxLength": 1},
    {"description": "Anything at all."},
    {},
    {"type": "object", "properties": {"v": {}, "w": True, "x": False}},
    {"type": "array", "items": {"type": "array", "items": {}}},
    {"not": {}},
    {"type": "object", "additionalProperties": {"type": ["boolean", "null"]}},
    {"anyOf": [{"type": "string"}], "type": ["integer", "null"]},
    {
        "type": "object",
        "$defs": {"n": {"type": ["number", "null"]}},
        "properties": {"n": {"$ref": "#/$defs/n"}},
    },
]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-5, 5) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["id", "size", "n", "v", "w", "x"]), inner, max_size=3)
    ),
    max_leaves=6,
)


def nodes(schema: Any, keyword: str | None = None) -> Iterator[tuple[Any, str | None]]:
    """Every subschema with the keyword it sits under, as the Inspector walks them."""
    yield schema, keyword
    if not isinstance(schema, dict):
        return
    for key in ("items", "contains", "not", "propertyNames", "if", "then", "else",
                "additionalProperties", "unevaluatedProperties", "additionalItems",
                "unevaluatedItems", "contentSchema"):  # fmt: skip
        if key in schema and not isinstance(schema[key], list):
            yield from nodes(schema[key], key)
    for key in ("allOf", "anyOf", "oneOf", "prefixItems", "items"):
        if isinstance(schema.get(key), list):
            for sub in schema[key]:
                yield from nodes(sub, key)
    for key in ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions"):
        for sub in (schema.get(key) or {}).values():
            yield from nodes(sub, key)


def strict_warnings(schema: Any) -> list[str]:
    """What the Inspector's ``--strict`` reports: ``type`` lists, untyped "any" schemas,
    bare booleans where a schema object belongs."""
    found = []
    assertions = {"type", "enum", "const", "anyOf", "oneOf", "allOf", "not", "$ref",
                  "properties", "items", "required", "additionalProperties"}  # fmt: skip
    for node, keyword in nodes(schema):
        if isinstance(node, bool):
            if keyword not in {"additionalProperties", "unevaluatedProperties",
                               "additionalItems", "unevaluatedItems"}:  # fmt: skip
                found.append(f"boolean under {keyword}")
        elif isinstance(node, dict):
            if isinstance(node.get("type"), list):
                found.append(f"type list {node['type']}")
            if keyword != "not" and not assertions.intersection(node):
                found.append(f"untyped {node}")
    return found


def test_a_type_list_becomes_one_branch_per_type_holding_its_own_keywords() -> None:
    assert portable({"type": ["string", "null"], "minLength": 2, "description": "A name."}) == {
        "description": "A name.",
        "anyOf": [{"type": "string", "minLength": 2}, {"type": "null"}],
    }
    nullable = portable(NULLABLE_OBJECT)
    assert "type" not in nullable and nullable["description"] == NULLABLE_OBJECT["description"]
    obj, null = nullable["anyOf"]
    assert null == {"type": "null"}
    assert obj["type"] == "object" and obj["required"] == ["id"]
    assert obj["additionalProperties"] is False
    assert obj["properties"]["size"] == {"type": "integer", "minimum": 0}


def test_a_schema_that_accepts_anything_says_so_with_a_type_on_every_branch() -> None:
    assert portable({"description": "Anything."}) == {"description": "Anything.", **any_value()}
    rewritten = portable({"type": "object", "properties": {"v": {}, "w": True, "x": False}})
    assert rewritten["properties"] == {"v": any_value(), "w": any_value(), "x": {"not": {}}}
    assert portable({"not": {}}) == {"not": {}}
    assert portable({"type": "object", "additionalProperties": False}) == {
        "type": "object",
        "additionalProperties": False,
    }


def test_every_rewrite_leaves_nothing_a_strict_client_reports() -> None:
    for schema in SCHEMAS:
        assert strict_warnings(portable(schema)) == [], schema


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(range(len(SCHEMAS))), json_values)
def test_a_rewritten_schema_accepts_exactly_what_the_original_accepts(
    index: int, value: Any
) -> None:
    schema = SCHEMAS[index]
    assert jsonschema_rs.is_valid(portable(schema), value) == jsonschema_rs.is_valid(schema, value)


def test_an_output_schema_that_is_not_an_object_is_wrapped_as_result() -> None:
    assert output_schema({"type": "object"}) == {"type": "object"}
    assert output_schema(None) is None
    wrapped = output_schema({"type": ["string", "null"]})
    assert wrapped == {
        "type": "object",
        "properties": {"result": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
        "required": ["result"],
    }
    defs = {"item": {"type": "integer"}}
    listed = output_schema({"type": "array", "items": {"$ref": "#/$defs/item"}, "$defs": defs})
    assert listed is not None and listed["$defs"] == defs  # references still resolve
    assert jsonschema_rs.is_valid(listed, {"result": [1, 2]})
    assert not jsonschema_rs.is_valid(listed, {"result": ["x"]})


def test_the_mcp_export_rewrites_a_copy_and_never_the_descriptor() -> None:
    params = {"type": "object", "properties": {"q": copy.deepcopy(NULLABLE_OBJECT)}}
    op = Operation(id="execute", parameters=params, output_schema={"type": "string"})
    plugin = PluginDescriptor(id="p", name="p", operations=(op,))
    before = plugin.model_dump(mode="json")
    tool = mcp.types.Tool.model_validate(export_tools([plugin], "mcp")[0])
    assert "anyOf" in tool.input_schema["properties"]["q"]
    assert tool.output_schema is not None and tool.output_schema["required"] == ["result"]
    assert plugin.model_dump(mode="json") == before


def test_every_bundled_tool_is_clean_for_strict_clients(tmp_path: Path) -> None:
    settings = Settings(database=str(tmp_path / "y.db"), governed=False, embedder="hashing")
    with Yard.from_settings(settings) as yard:
        plugins = list(yard.registry.descriptors())
    tools = export_tools(plugins, "mcp")
    assert len(tools) >= 28 and sum("outputSchema" in t for t in tools) >= 28
    raw = [op.parameters for p in plugins for op in p.operations]
    assert any(strict_warnings(schema) for schema in raw)  # the canonical ones are kept
    for tool in tools:
        for key in ("inputSchema", "outputSchema"):
            assert strict_warnings(tool.get(key, {"type": "object"})) == [], (tool["name"], key)
