"""Properties of the strict rewrite over generated schemas of the kinds manifests hold:
typed properties with descriptions, defaults, formats, patterns, lengths and enums,
nullable ones, nested objects and arrays, references, and oneOf of distinct types."""

from __future__ import annotations

from typing import Any

import jsonschema_rs
from hypothesis import given, settings
from hypothesis import strategies as st

from plugyard.manifest.exporters.openai_strict import NotStrict, strict_parameters
from plugyard.manifest.exporters.strict_arguments import from_strict_arguments
from plugyard.manifest.exporters.strict_rules import strict_violations
from plugyard.manifest.pointer import resolve

FORMATS = {
    "date-time": "2024-05-06T07:08:09Z",
    "date": "2024-05-06",
    "email": "someone@example.com",
    "uuid": "12345678-1234-1234-1234-123456789abc",
    "ipv4": "10.0.0.1",
    "hostname": "example.com",
    "uri": "https://example.com/a",
}
UNIT = {"type": "string", "enum": ["m", "km"]}
NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8)


def sample(schema: Any, root: dict[str, Any]) -> Any:
    """A value of ``schema`` as a strict call carries it: optional properties null."""
    while "$ref" in schema:
        schema = resolve(root, schema["$ref"][1:])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return sample(schema[key][0], root)
    if "enum" in schema:
        return schema["enum"][0]
    declared = schema["type"]
    kind = declared if isinstance(declared, str) else declared[0]
    if kind == "string":
        if "format" in schema:
            return FORMATS[schema["format"]]
        return "a" * max(1, schema.get("minLength", 0)) if "pattern" not in schema else "abc"
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return True
    if kind == "array":
        return [sample(schema["items"], root)] * max(1, schema.get("minItems", 0))
    required = schema.get("required", [])
    return {
        name: sample(sub, root) if name in required else None
        for name, sub in schema.get("properties", {}).items()
    }


@st.composite
def leaves(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["string", "integer", "number", "boolean", "enum", "unit"]))
    schema: dict[str, Any]
    if kind == "unit":
        schema = {"$ref": "#/$defs/Unit"}
    elif kind == "enum":
        schema = {"enum": draw(st.lists(NAMES, min_size=1, max_size=4, unique=True))}
        if draw(st.booleans()):
            schema["type"] = "string"
    elif kind == "string":
        schema = {"type": "string"}
        extra = draw(st.sampled_from(["", "format", "pattern", "length"]))
        if extra == "format":
            schema["format"] = draw(st.sampled_from(sorted(FORMATS)))
        elif extra == "pattern":
            schema["pattern"] = "^[a-z]+$"
        elif extra == "length":
            low = draw(st.integers(0, 3))
            schema |= {"minLength": low, "maxLength": draw(st.integers(max(1, low), 8))}
    elif kind in ("integer", "number"):
        schema = {"type": kind}
        if draw(st.booleans()):
            low = draw(st.integers(-5, 5))
            schema |= {"minimum": low, "maximum": low + draw(st.integers(0, 9))}
    else:
        schema = {"type": "boolean"}
    if draw(st.booleans()):
        schema["description"] = draw(st.text(max_size=12))
    if draw(st.booleans()) and "$ref" not in schema:
        schema["default"] = sample(schema, {})
    nullable = draw(st.sampled_from(["", "type", "anyOf"]))
    if nullable == "type" and isinstance(schema.get("type"), str) and "enum" not in schema:
        schema["type"] = [schema["type"], "null"]
    elif nullable == "anyOf":
        schema = {"anyOf": [schema, {"type": "null"}]}
    return schema


def objects(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        properties = draw(st.dictionaries(NAMES, children, min_size=1, max_size=4))
        required = [n for n in properties if draw(st.booleans())]
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        if draw(st.booleans()):
            schema["additionalProperties"] = False
        return schema

    return build()


def nested(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    arrays = st.builds(
        lambda items, low: {"type": "array", "items": items, "minItems": low, "maxItems": low + 2},
        children,
        st.integers(0, 2),
    )
    choices = st.just({"oneOf": [{"type": "string"}, {"type": "integer"}]})
    return arrays | objects(children) | choices


SCHEMAS = (
    st.recursive(leaves(), nested, max_leaves=12)
    .flatmap(lambda child: objects(st.just(child) | leaves()))
    .map(lambda root: {**root, "$defs": {"Unit": UNIT}})
)


@settings(max_examples=300, deadline=None)
@given(SCHEMAS)
def test_the_rewrite_is_strict_valid_json_schema_and_idempotent(schema: dict[str, Any]) -> None:
    strict = strict_parameters(schema)
    assert strict_violations(strict) == []
    assert jsonschema_rs.meta.is_valid(strict)
    assert strict_parameters(strict) == strict


@settings(max_examples=300, deadline=None)
@given(SCHEMAS)
def test_a_strict_call_is_a_valid_call_once_its_nulls_are_dropped(schema: dict[str, Any]) -> None:
    strict = strict_parameters(schema)
    call = sample(schema, schema)
    assert jsonschema_rs.validator_for(strict, validate_formats=True).is_valid(call)
    restored = from_strict_arguments(schema, call)
    assert jsonschema_rs.validator_for(schema, validate_formats=True).is_valid(restored)


KEYWORDS = st.sampled_from(
    [
        "type", "properties", "required", "items", "enum", "const", "anyOf", "oneOf", "allOf",
        "$ref", "$defs", "definitions", "additionalProperties", "description", "default",
        "format", "minLength", "$schema", "x-ui",
    ]
)  # fmt: skip
SCALARS = st.none() | st.booleans() | st.integers() | st.text(max_size=4)
NAMED = st.sampled_from(["object", "string", "null", "array", "#", "#/$defs/a", "#/definitions/a"])
JSON = st.recursive(
    SCALARS | NAMED,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(KEYWORDS | st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=1000, deadline=None)
@given(JSON, JSON)
def test_any_document_is_rewritten_or_refused_and_arguments_never_break_the_inverse(
    schema: Any, arguments: Any
) -> None:
    try:
        strict = strict_parameters(schema)
    except NotStrict:
        pass
    else:
        assert strict_violations(strict) == []
        assert strict_parameters(strict) == strict
    if isinstance(schema, dict) and isinstance(arguments, dict):
        from_strict_arguments(schema, arguments)
