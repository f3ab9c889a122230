"""Which operations are called without asking the model for arguments."""

from __future__ import annotations

from typing import Any

import pytest

from plugyard.manifest.model import Operation
from plugyard.routing.choice import takes_no_arguments


@pytest.mark.parametrize(
    "parameters", [{"type": "object", "properties": {}}, {"type": "object"}, {}]
)
def test_an_operation_declaring_no_parameters_takes_none(parameters: dict[str, Any]) -> None:
    assert takes_no_arguments(Operation(id="now", parameters=parameters))


@pytest.mark.parametrize(
    "parameters",
    [
        {"type": "object", "properties": {"zone": {"type": "string"}}},
        {"type": "object", "required": ["zone"]},
        {"type": "object", "additionalProperties": {"type": "string"}},
        {"type": "object", "patternProperties": {"^x": {}}},
        {"$ref": "#/$defs/args", "$defs": {"args": {"type": "object"}}},
        {"anyOf": [{"type": "object", "properties": {"a": {}}}]},
    ],
)
def test_anything_declared_is_asked_for(parameters: dict[str, Any]) -> None:
    assert not takes_no_arguments(Operation(id="run", parameters=parameters))
