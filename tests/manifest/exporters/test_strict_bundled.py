"""OpenAI's strict-mode rules checked over every bundled and example tool, each plugin
described as registration describes it (the bundled code is loaded; the examples have
none to load)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from plugyard import PluginDescriptor, export_tools
from plugyard.builtins import BUILTINS_DIR
from plugyard.cli.described import describe_files, trusted
from plugyard.manifest.exporters.openai_strict import strict_problems
from plugyard.manifest.exporters.strict_arguments import from_strict_arguments
from plugyard.manifest.exporters.strict_rules import strict_violations
from plugyard.manifest.load import manifest_files
from plugyard.manifest.pointer import resolve

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "plugins"


@pytest.fixture(scope="module")
def plugins() -> list[PluginDescriptor]:
    found: list[PluginDescriptor] = []
    for folder in (BUILTINS_DIR, EXAMPLES):
        code = trusted(folder, plugin_dirs=())
        found.extend(describe_files(manifest_files(folder), load_code=code).plugins)
    return found


@pytest.fixture(scope="module")
def tools(plugins: list[PluginDescriptor]) -> list[dict[str, Any]]:
    return export_tools(plugins, "openai", strict=True)


def originals(plugins: list[PluginDescriptor]) -> list[dict[str, Any]]:
    return [t["function"]["parameters"] for t in export_tools(plugins, "openai")]


def test_every_strict_tool_meets_the_rules(tools: list[dict[str, Any]]) -> None:
    strict = [t["function"] for t in tools if t["function"]["strict"]]
    assert strict
    for function in strict:
        assert strict_violations(function["parameters"]) == [], function["name"]
        assert jsonschema_rs.meta.is_valid(function["parameters"])


def test_every_other_tool_says_where_its_schema_has_no_strict_form(
    plugins: list[PluginDescriptor], tools: list[dict[str, Any]]
) -> None:
    plain = originals(plugins)
    problems = {p.document: p for p in strict_problems(tools)}
    for index, tool in enumerate(tools):
        if tool["function"]["strict"]:
            continue
        problem = problems[index]
        assert tool["function"]["parameters"] == plain[index]
        resolve(plain[index], problem.pointer)  # the pointer names a place in the schema
        assert "no strict form" in problem.message


def test_tools_with_plain_schemas_are_strict(tools: list[dict[str, Any]]) -> None:
    strict = {t["function"]["name"] for t in tools if t["function"]["strict"]}
    assert {"calculator", "text-stats", "unit-convert__convert", "weather__fetch_weather"} <= strict


def test_the_bundled_calculator_is_exported_with_the_parameters_of_its_code(
    tools: list[dict[str, Any]],
) -> None:
    [calculator] = [
        t["function"]["parameters"]
        for t in tools
        if t["function"]["name"] == "calculator" and t["function"]["parameters"]["properties"]
    ]
    assert calculator["required"] == ["expression", "precision"]
    assert calculator["properties"]["precision"]["type"] == ["integer", "null"]


def test_a_strict_call_leaving_out_every_optional_parameter_comes_back_without_them(
    plugins: list[PluginDescriptor], tools: list[dict[str, Any]]
) -> None:
    for original, tool in zip(originals(plugins), tools, strict=True):
        if not tool["function"]["strict"]:
            continue
        optional = set(original["properties"]) - set(original.get("required", []))
        restored = from_strict_arguments(original, dict.fromkeys(optional))
        # The required values this call leaves out are its only faults.
        faults = jsonschema_rs.validator_for(original).iter_errors(restored)
        assert {type(f.kind).__name__ for f in faults} <= {"Required"}
