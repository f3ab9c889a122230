"""What a tools/call answers, in every case, is a shape strict MCP clients accept: the
structured content of a success fits the advertised output schema, an error has none."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from plugyard.execution.result import Result, failure
from plugyard.manifest.exporters.dialect import to_dialect
from plugyard.manifest.exporters.mcp_schema import output_schema
from plugyard.manifest.model import Operation, PluginDescriptor, PythonRuntime
from plugyard.mcp_server import McpFront
from plugyard.mcp_server.results import result_to_mcp
from plugyard.types import Caller
from plugyard.yard import Settings, Yard

from .conftest import error_code

TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
CODE = """
def shout(text):
    return text.upper()

def words(text):
    return text.split()
"""


@pytest.fixture
def shouting(tmp_path: Path) -> Iterator[Yard]:
    """A plugin whose operations answer a string (schema: string) and a list (no schema)."""
    descriptor = PluginDescriptor(
        id="shout",
        name="Shout",
        description="Shouts.",
        runtime=PythonRuntime(),
        operations=(
            Operation(id="shout", parameters=TEXT, output_schema={"type": "string"}),
            Operation(id="words", parameters=TEXT, output_schema=None),
        ),
    )
    folder = tmp_path / "plugins" / "shout"
    folder.mkdir(parents=True)
    (folder / "plugin.json").write_text(json.dumps(to_dialect(descriptor, "canonical")))
    (folder / "plugin.py").write_text(CODE)
    settings = Settings(database=str(tmp_path / "y.db"), builtins=False, governed=False,
                        plugin_dirs=(tmp_path / "plugins",), embedder="hashing")  # fmt: skip
    with Yard.from_settings(settings) as yard:
        yield yard


def call(front: McpFront, name: str, args: dict[str, Any]) -> Any:
    return asyncio.run(front.call_tool(Caller("alice"), name, args))


def test_data_that_is_not_an_object_is_wrapped_as_the_schema_advertises(shouting: Yard) -> None:
    front = McpFront(shouting)
    tools = {t["name"]: t for t in front.list_tools(Caller("alice"))}
    shout = call(front, "shout__shout", {"text": "hi"})
    assert shout["structuredContent"] == {"result": "HI"}
    assert jsonschema_rs.is_valid(tools["shout__shout"]["outputSchema"], shout["structuredContent"])
    assert json.loads(shout["content"][0]["text"]) == shout["structuredContent"]
    assert "outputSchema" not in tools["shout__words"]
    words = call(front, "shout__words", {"text": "a b"})
    assert words["structuredContent"] == {"result": ["a", "b"]}


def test_invalid_parameters_are_an_error_without_structured_content(shouting: Yard) -> None:
    assert error_code(call(McpFront(shouting), "shout__shout", {})) == "invalid_parameters"


def test_a_timeout_is_an_error_with_its_code() -> None:
    result = result_to_mcp(failure("timeout", "no result within 10 ms"), None, "")
    assert error_code(result) == "timeout"
    assert result["_meta"]["io.plugyard/status"] == "timeout"


def test_a_cut_result_is_an_error_when_a_schema_would_refuse_its_preview() -> None:
    preview = {"x-plugyard-truncated": True, "bytes": 2_000_000, "ref": "payload:1",
               "preview": "{"}  # fmt: skip
    cut = Result(status="success", data=preview, payload_ref="payload:1")
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    answer = result_to_mcp(cut, schema, "")
    assert error_code(answer) == "output_validation_error"
    assert answer["_meta"]["io.plugyard/error"]["details"]["payload_ref"] == "payload:1"
    unchecked = result_to_mcp(cut, None, "")
    assert unchecked["isError"] is False and unchecked["structuredContent"] == preview


def test_the_advertised_schema_and_the_shape_agree_for_every_kind_of_output() -> None:
    values: list[tuple[dict[str, Any] | None, Any]] = [
        ({"type": "object", "properties": {"a": {"type": "integer"}}}, {"a": 1}),
        ({"type": "array", "items": {"type": "integer"}}, [1, 2]),
        ({"type": ["integer", "null"]}, None),
        ({"type": "null"}, None),
        ({"anyOf": [{"type": "object"}, {"type": "string"}]}, {"x": 1}),
    ]
    for schema, data in values:
        answer = result_to_mcp(Result(status="success", data=data), schema, "")
        advertised = output_schema(schema)
        assert advertised is not None and advertised["type"] == "object"
        assert jsonschema_rs.is_valid(advertised, answer["structuredContent"]), schema
