"""A strict call's arguments given back in the form the operation's own schema expects."""

from __future__ import annotations

from typing import Any

import jsonschema_rs

from plugyard import Operation, PluginDescriptor, export_tools
from plugyard.manifest.exporters.strict_arguments import from_strict_arguments

PARAMETERS = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "units": {"type": "string", "enum": ["metric", "imperial"], "default": "metric"},
        "note": {"type": ["string", "null"]},
        "stops": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "hours": {"type": "integer"}},
                "required": ["name"],
            },
        },
        "user": {"type": "string", "x-binding": "identity:email"},
    },
    "required": ["city"],
}


def valid(schema: dict[str, Any], instance: Any) -> bool:
    return bool(jsonschema_rs.validator_for(schema).is_valid(instance))


def test_a_strict_tools_null_optional_argument_validates_after_the_inverse() -> None:
    weather = PluginDescriptor(
        id="weather", name="Weather", operations=(Operation(id="execute", parameters=PARAMETERS),)
    )
    strict = export_tools([weather], "openai", strict=True)[0]["function"]
    assert strict["strict"] is True
    call = {"city": "Lisbon", "units": None, "note": None, "stops": None}
    assert valid(strict["parameters"], call)
    assert not valid(PARAMETERS, call)
    restored = from_strict_arguments(PARAMETERS, call)
    assert restored == {"city": "Lisbon", "note": None}
    assert valid(PARAMETERS, restored)


def test_nulls_are_dropped_at_every_depth_and_values_pass_unchanged() -> None:
    call = {
        "city": "Porto",
        "units": "imperial",
        "note": "x",
        "stops": [{"name": "A", "hours": None}],
    }
    restored = from_strict_arguments(PARAMETERS, call)
    assert restored == {**call, "stops": [{"name": "A"}]}
    assert valid(PARAMETERS, restored)


def test_a_required_null_is_the_executors_to_refuse() -> None:
    assert from_strict_arguments(PARAMETERS, {"city": None}) == {"city": None}


def test_references_and_anyof_branches_are_followed() -> None:
    schema = {
        "type": "object",
        "properties": {
            "shape": {
                "anyOf": [
                    {"$ref": "#/$defs/Circle"},
                    {
                        "type": "object",
                        "properties": {"side": {"type": "number"}, "label": {"type": "string"}},
                        "required": ["side"],
                    },
                ]
            }
        },
        "required": ["shape"],
        "$defs": {
            "Circle": {
                "type": "object",
                "properties": {"radius": {"type": "number"}, "label": {"type": "string"}},
                "required": ["radius"],
            }
        },
    }
    for call, expected in (
        ({"shape": {"radius": 2, "label": None}}, {"shape": {"radius": 2}}),
        ({"shape": {"side": 3, "label": None}}, {"shape": {"side": 3}}),
    ):
        restored = from_strict_arguments(schema, call)
        assert restored == expected
        assert valid(schema, restored)


def test_a_cycle_of_references_ends() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}},
        "$defs": {"A": {"anyOf": [{"$ref": "#/$defs/A"}]}},
    }
    assert from_strict_arguments(schema, {"a": None}) == {}
