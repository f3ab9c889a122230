"""OpenAI strict mode: the rewrite into the strict subset, what it refuses, and the check."""

from __future__ import annotations

from typing import Any

import pytest

from plugyard import Operation, PluginDescriptor, export_tools
from plugyard.manifest.exporters.openai_strict import NotStrict, strict_parameters, strict_problems
from plugyard.manifest.exporters.strict_rules import (
    MAX_DEPTH,
    MAX_PROPERTIES,
    strict_violations,
)

DRAFT_7 = "http://json-schema.org/draft-07/schema#"
WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City name."},
        "units": {"type": "string", "enum": ["metric", "imperial"], "default": "metric"},
    },
    "required": ["city"],
}


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties)}


def refused(schema: dict[str, Any]) -> tuple[str, str]:
    with pytest.raises(NotStrict) as err:
        strict_parameters(schema)
    assert err.value.code == "export_unsupported"
    return err.value.pointer, err.value.rule


def test_objects_are_closed_and_optional_properties_become_required_and_nullable() -> None:
    out = strict_parameters(WEATHER)
    assert out == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name."},
            "units": {
                "type": ["string", "null"],
                "enum": ["metric", "imperial", None],
                "description": 'default: "metric"',
            },
        },
        "required": ["city", "units"],
        "additionalProperties": False,
    }
    assert strict_violations(out) == []


def test_the_plain_export_breaks_the_rules_the_strict_one_keeps() -> None:
    assert ("", "an object needs additionalProperties: false") in strict_violations(WEATHER)
    assert strict_violations(strict_parameters(WEATHER)) == []


def test_keywords_strict_mode_lacks_move_into_the_description() -> None:
    schema = obj(
        name={"type": "string", "minLength": 1, "maxLength": 9, "description": "A name."},
        site={"type": "string", "format": "uri"},
        day={"type": "string", "format": "date", "pattern": "^2"},
        tags={"type": "array", "items": {"type": "string"}, "uniqueItems": True, "maxItems": 3},
        hint={"type": "string", "x-ui": {"widget": "text"}, "$comment": "internal"},
    )
    props = strict_parameters(schema)["properties"]
    assert props["name"] == {
        "type": "string",
        "description": "A name. (minLength: 1; maxLength: 9)",
    }
    assert props["site"] == {"type": "string", "description": 'format: "uri"'}
    assert props["day"] == {"type": "string", "format": "date", "pattern": "^2"}
    assert props["tags"] == {
        "type": "array",
        "items": {"type": "string"},
        "maxItems": 3,
        "description": "uniqueItems: true",
    }
    assert props["hint"] == {"type": "string"}


def test_a_list_of_types_becomes_an_anyof_and_an_untyped_enum_takes_its_values_type() -> None:
    schema = obj(
        when={"type": ["string", "integer", "null"], "minimum": 0, "pattern": "^d"},
        kind={"enum": ["a", "b"]},
        flag={"const": True},
    )
    props = strict_parameters(schema)["properties"]
    assert props["when"] == {
        "anyOf": [
            {"type": "string", "pattern": "^d"},
            {"type": "integer", "minimum": 0},
            {"type": "null"},
        ]
    }
    assert props["kind"] == {"type": "string", "enum": ["a", "b"]}
    assert props["flag"] == {"type": "boolean", "const": True}


def test_an_optional_reference_or_const_is_made_nullable_with_an_anyof() -> None:
    schema = {
        "type": "object",
        "properties": {"unit": {"$ref": "#/definitions/Unit"}, "mode": {"const": "fast"}},
        "definitions": {"Unit": {"type": "string", "enum": ["m", "km"]}},
    }
    out = strict_parameters(schema)
    assert out["properties"]["unit"] == {"anyOf": [{"$ref": "#/$defs/Unit"}, {"type": "null"}]}
    assert out["properties"]["mode"] == {
        "anyOf": [{"type": "string", "const": "fast"}, {"type": "null"}]
    }
    assert out["$defs"] == {"Unit": {"type": "string", "enum": ["m", "km"]}}


def test_a_reference_with_keywords_beside_it_is_written_out() -> None:
    schema = {
        "type": "object",
        "properties": {"unit": {"$ref": "#/$defs/Unit", "description": "Which unit."}},
        "required": ["unit"],
        "$defs": {"Unit": {"type": "string", "description": "A unit."}},
    }
    props = strict_parameters(schema)["properties"]
    assert props["unit"] == {"type": "string", "description": "Which unit."}


def test_a_recursive_schema_keeps_its_reference() -> None:
    tree = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#"}},
        },
        "required": ["name", "children"],
    }
    out = strict_parameters(tree)
    assert out["properties"]["children"]["items"] == {"$ref": "#"}
    assert strict_violations(out) == []


def test_allof_of_objects_is_merged() -> None:
    schema = {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "integer"}}},
        ]
    }
    out = strict_parameters(schema)
    assert out["properties"] == {"a": {"type": "string"}, "b": {"type": ["integer", "null"]}}
    assert out["required"] == ["a", "b"]


def test_oneof_becomes_anyof_only_when_its_branches_cannot_overlap() -> None:
    by_type = obj(v={"oneOf": [{"type": "string"}, {"type": "boolean"}]})
    assert strict_parameters(by_type)["properties"]["v"] == {
        "anyOf": [{"type": "string"}, {"type": "boolean"}]
    }
    shape = {"type": "object", "properties": {"r": {"type": "number"}}, "required": ["kind", "r"]}
    circle = {**shape, "properties": {**shape["properties"], "kind": {"const": "circle"}}}
    square = {**shape, "properties": {**shape["properties"], "kind": {"const": "square"}}}
    tagged = strict_parameters(obj(s={"oneOf": [circle, square]}))["properties"]["s"]
    assert [b["properties"]["kind"]["const"] for b in tagged["anyOf"]] == ["circle", "square"]
    overlapping = obj(v={"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 5}]})
    assert refused(overlapping) == (
        "/properties/v/oneOf",
        "a oneOf whose branches may overlap has no strict form",
    )


@pytest.mark.parametrize(
    ("schema", "pointer", "rule"),
    [
        (obj(v={"description": "Any JSON value."}), "/properties/v", "any JSON type"),
        (obj(m={"type": "object"}), "/properties/m", "free keys"),
        (
            obj(m={"type": "object", "properties": {}, "additionalProperties": {"type": "string"}}),
            "/properties/m/additionalProperties",
            "free keys",
        ),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "additionalProperties": True,
            },
            "/additionalProperties",
            "free keys",
        ),
        (
            obj(p={"type": "object", "patternProperties": {"^x": {}}}),
            "/properties/p/patternProperties",
            "patternProperties",
        ),
        (obj(a={"type": "array"}), "/properties/a", "no items"),
        (
            {**obj(t={"type": "array", "items": [{"type": "string"}]}), "$schema": DRAFT_7},
            "/properties/t/items",
            "tuple",
        ),
        ({"type": "object", "required": "city"}, "", "not a valid JSON Schema"),
        (obj(n={"type": "string", "not": {"enum": ["x"]}}), "/properties/n/not", "not"),
        ({"anyOf": [obj(a={"type": "string"}), obj(b={"type": "string"})]}, "/anyOf", "root"),
        ({"type": "object", "properties": {}, "required": ["ghost"]}, "/required", "'ghost'"),
        ({"type": "array", "items": {"type": "string"}}, "", "must be an object"),
        (obj(r={"$ref": "other.json#/x"}), "/properties/r/$ref", "$ref"),
    ],
)
def test_what_has_no_strict_form_is_refused_with_its_pointer(
    schema: dict[str, Any], pointer: str, rule: str
) -> None:
    where, why = refused(schema)
    assert where == pointer
    assert rule in why


def test_schemas_over_the_published_limits_are_refused() -> None:
    wide = {
        "type": "object",
        "properties": {f"p{i}": {"type": "string"} for i in range(MAX_PROPERTIES + 1)},
    }
    assert refused(wide) == ("", f"over {MAX_PROPERTIES} properties in all")
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(MAX_DEPTH):
        deep = obj(x=deep)
    pointer, rule = refused(deep)
    assert rule == f"nested deeper than {MAX_DEPTH} levels"
    assert pointer == "/properties/x" * MAX_DEPTH


def test_the_rewrite_changes_nothing_the_second_time() -> None:
    once = strict_parameters(WEATHER)
    assert strict_parameters(once) == once


@pytest.mark.parametrize(
    ("schema", "pointer", "rule"),
    [
        ({"type": "array", "items": {"type": "string"}}, "", "the root must have type 'object'"),
        (
            {**obj(), "additionalProperties": False, "anyOf": [obj()]},
            "/anyOf",
            "the root may not be an anyOf",
        ),
        (
            {**obj(a={"type": "string"}), "required": []},
            "/required",
            "every property must be required",
        ),
        (
            {**obj(), "additionalProperties": False, "default": {}},
            "/default",
            "unsupported keyword 'default'",
        ),
        (
            {**obj(a={"type": ["string", "integer"]}), "additionalProperties": False},
            "/properties/a/type",
            "type must be one JSON type, or one type and 'null'",
        ),
        (
            {**obj(a={"type": "string", "format": "uri"}), "additionalProperties": False},
            "/properties/a/format",
            "format 'uri' is not supported",
        ),
        (
            {
                **obj(a={"$ref": "#/$defs/A", "description": "x"}),
                "additionalProperties": False,
                "$defs": {"A": {"type": "string"}},
            },
            "/properties/a",
            "no keyword may stand beside $ref",
        ),
        (
            {**obj(a={"type": "array"}), "additionalProperties": False},
            "/properties/a",
            "an array needs items",
        ),
        (
            {**obj(a={"description": "?"}), "additionalProperties": False},
            "/properties/a",
            "a schema needs a type, an anyOf or a $ref",
        ),
    ],
)
def test_the_check_names_each_broken_rule(schema: dict[str, Any], pointer: str, rule: str) -> None:
    assert (pointer, rule) in strict_violations(schema)


def tool(parameters: dict[str, Any]) -> PluginDescriptor:
    return PluginDescriptor(
        id="t", name="t", operations=(Operation(id="execute", parameters=parameters),)
    )


def test_export_tools_strict_marks_each_openai_tool_strict_or_not() -> None:
    good, bad = tool(WEATHER), tool(obj(data={"description": "Any JSON value."}))
    bad = bad.model_copy(update={"id": "u"})
    tools = export_tools([good, bad], "openai", strict=True)
    assert [t["function"]["strict"] for t in tools] == [True, False]
    assert tools[0]["function"]["parameters"] == strict_parameters(WEATHER)
    assert (
        tools[1]["function"]["parameters"]
        == export_tools([bad], "openai")[0]["function"]["parameters"]
    )
    [problem] = strict_problems(tools)
    assert (problem.code, problem.pointer, problem.document) == (
        "export_unsupported",
        "/properties/data",
        1,
    )
    assert problem.message.startswith("u at /properties/data: a value of any JSON type")


@pytest.mark.parametrize("fmt", ["anthropic", "mcp"])
def test_strict_leaves_the_other_formats_as_they_are(fmt: str) -> None:
    assert export_tools([tool(WEATHER)], fmt, strict=True) == export_tools([tool(WEATHER)], fmt)


def test_host_bound_parameters_stay_hidden_in_strict_mode() -> None:
    schema = obj(q={"type": "string"}, email={"type": "string", "x-binding": "identity:email"})
    params = export_tools([tool(schema)], "openai", strict=True)[0]["function"]["parameters"]
    assert params["required"] == ["q"]
    assert list(params["properties"]) == ["q"]
