"""A decorated typed function gives exactly the descriptor a manifest would, and runs."""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from plugyard.manifest.load import load_text
from plugyard.runtimes.base import Progress, Target
from plugyard.runtimes.python import InProcessRuntime, definition_of, plugin, tool

from .conftest import call, stream

WEATHER_YAML = """
id: weather
name: Weather Plugin
description: Current weather and forecast for a location.
description_long: Provides current weather, humidity, conditions, wind, AQI.
capabilities:
  - id: fetch_weather
    name: Get current weather
    description: Returns current weather for a city (and optional district).
    parameters:
      - name: city
        type: string
        required: true
        description: City name, e.g. Beijing.
      - name: district
        type: string
        required: false
        description: District within the city, e.g. Daxing.
    output_description: Plain text weather summary.
    post_process: true
    post_process_prompt: Suggest practical tips (umbrella, clothing).
  - id: list_cities
    name: List cities
    description: Cities with weather data.
    parameters:
      - name: country
        type: string
        required: false
        default: CN
        description: ISO country code.
      - name: limit
        type: integer
        required: false
        default: 10
"""


def weather_definition() -> Any:
    weather = plugin(
        id="weather",
        name="Weather Plugin",
        description="Current weather and forecast for a location.",
        description_long="Provides current weather, humidity, conditions, wind, AQI.",
    )

    @weather.operation(
        name="Get current weather",
        post_process=True,
        post_process_prompt="Suggest practical tips (umbrella, clothing).",
    )
    def fetch_weather(city: str, district: str | None = None):  # type: ignore[no-untyped-def]
        """Returns current weather for a city (and optional district).

        Args:
            city: City name, e.g. Beijing.
            district: District within the city, e.g. Daxing.

        Returns:
            Plain text weather summary.
        """
        return f"sunny in {city}" + (f" ({district})" if district else "")

    @weather.operation(name="List cities")
    def list_cities(
        country: Annotated[str, Field(description="ISO country code.")] = "CN", limit: int = 10
    ):  # type: ignore[no-untyped-def]
        """Cities with weather data."""
        return ["Beijing", "Shanghai"][:limit]

    return weather


def test_a_decorated_module_equals_the_homeclaw_manifest() -> None:
    assert weather_definition().descriptor == load_text(WEATHER_YAML).plugins[0]


def test_the_runtime_calls_the_decorated_functions(runtime: InProcessRuntime) -> None:
    weather = weather_definition()
    runtime.provide(weather)
    from_manifest = Target(load_text(WEATHER_YAML).plugins[0])
    assert runtime.check(from_manifest) is None
    assert call(runtime, from_manifest, "fetch_weather", city="Rome").data == "sunny in Rome"
    assert call(runtime, from_manifest, "list_cities", limit=1).data == ["Beijing"]


KB_JSON = """
{"id": "kb-decorated", "type": "kb-plugin", "name": "Decorated KB", "version": "1.0.0",
 "description": "Finds units by exact word.", "costClass": "cheap", "usesLLM": false,
 "tags": ["demo"], "plannerHints": {"expectedLatencyMs": 2, "supportedActs": ["lookup"]}}
"""


def test_a_decorated_family_plugin_equals_the_mrp_manifest(runtime: InProcessRuntime) -> None:
    kb = plugin(
        id="kb-decorated",
        name="Decorated KB",
        version="1.0.0",
        description="Finds units by exact word.",
        family="kb",
        cost_class="cheap",
        uses_llm=False,
        tags=["demo"],
        planner_hints={"expected_latency_ms": 2, "supported_acts": ["lookup"]},
    )

    @kb.operation
    def retrieve(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
        found = [u for u in input.get("context", []) if input["prompt"] in u["text"]]
        return {"status": "success" if found else "insufficient", "resolvedIntents": found}

    assert kb.descriptor == load_text(KB_JSON).plugins[0]
    runtime.provide(kb)
    outcome = call(runtime, Target(kb.descriptor), "retrieve", prompt="x", context=[])
    assert outcome.status == "insufficient"
    hook = call(runtime, Target(kb.descriptor), "on_source_text", text="t")
    assert hook.status == "skipped"


def test_a_family_plugin_refuses_functions_outside_its_contract() -> None:
    kb = plugin(id="kb-x", family="kb")
    with pytest.raises(ValueError, match="family method"):

        @kb.operation
        def summarise(input: Any, ctx: Any) -> None: ...


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(BaseModel):
    x: int
    y: int


class Reading(TypedDict):
    value: float
    unit: str


def test_signature_types_become_json_schema() -> None:
    @tool
    def paint(
        colour: Colour,
        mode: Literal["fast", "slow"] = "fast",
        at: Point | None = None,
        tags: list[str] | None = None,
        strength: Annotated[float, Field(ge=0, le=1, description="How strong.")] = 0.5,
    ) -> Reading:
        """Paint something.

        :param colour: The colour.
        :param mode: How.
        """
        return {"value": strength, "unit": colour.value}

    definition = definition_of(paint)
    assert definition is not None
    op = definition.descriptor.operations[0]
    assert op.parameters == {
        "type": "object",
        "properties": {
            "colour": {"enum": ["red", "blue"], "type": "string", "description": "The colour."},
            "mode": {"enum": ["fast", "slow"], "type": "string", "default": "fast",
                     "description": "How."},
            "at": {"type": "object", "properties": {"x": {"type": "integer"},
                   "y": {"type": "integer"}}, "required": ["x", "y"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "strength": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5,
                         "description": "How strong."},
        },
        "required": ["colour"],
    }  # fmt: skip
    assert op.output_schema == {
        "type": "object",
        "properties": {"value": {"type": "number"}, "unit": {"type": "string"}},
        "required": ["value", "unit"],
    }
    assert op.description == "Paint something."


def test_parameters_are_converted_to_their_annotated_types(runtime: InProcessRuntime) -> None:
    seen: dict[str, Any] = {}

    @tool(inline=True)
    def place(at: Point, colour: Colour) -> Point:
        seen.update(at=at, colour=colour)
        return Point(x=at.x + 1, y=at.y)

    runtime.provide(place)
    definition = definition_of(place)
    assert definition is not None
    outcome = call(
        runtime, Target(definition.descriptor), "place", at={"x": 1, "y": 2}, colour="red"
    )
    assert seen == {"at": Point(x=1, y=2), "colour": Colour.RED}
    assert outcome.data == {"x": 2, "y": 2}
    bad = call(runtime, Target(definition.descriptor), "place", at={"x": "a"}, colour="red")
    assert bad.error is not None and bad.error.code == "invalid_parameters"


def test_numpy_and_google_docstrings_describe_parameters() -> None:
    @tool
    def numpy_style(a: int) -> int:
        """Double it.

        Parameters
        ----------
        a : int
            The number.

        Returns
        -------
        int
            Twice the number.
        """
        return 2 * a

    definition = definition_of(numpy_style)
    assert definition is not None
    op = definition.descriptor.operations[0]
    assert op.parameters["properties"] == {"a": {"type": "integer", "description": "The number."}}
    assert op.output_description == "Twice the number."
    assert op.output_schema == {"type": "integer"}


def test_operation_options_reach_the_descriptor() -> None:
    mail = plugin(id="mail", description="Mail.")

    @mail.operation(effect="write", requires_approval=True, idempotent=True, kind="action")
    def send(to: str, body: str) -> None:
        """Send a mail."""

    op = mail.descriptor.operations[0]
    assert (op.effect, op.requires_approval, op.idempotent, op.kind) == (
        "write", True, True, "action"
    )  # fmt: skip
    assert op.output_schema == {"type": "null"}


def test_an_async_generator_is_a_streaming_operation(runtime: InProcessRuntime) -> None:
    @tool
    async def countdown(n: int) -> AsyncIterator[Any]:
        """Count down."""
        for i in range(n, 0, -1):
            yield Progress(message=str(i))
        yield {"done": True}

    definition = definition_of(countdown)
    assert definition is not None
    op = definition.descriptor.operations[0]
    assert op.streaming and op.output_schema is None
    runtime.provide(countdown)
    items = stream(runtime, Target(definition.descriptor), "countdown", n=2)
    assert [getattr(i, "message", None) for i in items[:-1]] == ["2", "1"]
    assert items[-1].data == {"done": True}  # type: ignore[union-attr]


def test_tool_defaults_come_from_the_function() -> None:
    @tool
    def shout(text: str) -> str:
        """Upper-case a text."""
        return text.upper()

    definition = definition_of(shout)
    assert definition is not None
    descriptor = definition.descriptor
    assert (descriptor.id, descriptor.name, descriptor.description) == (
        "shout", "shout", "Upper-case a text."
    )  # fmt: skip
    assert shout("a") == "A"  # the function itself is unchanged


def test_misuse_raises() -> None:
    thing = plugin(id="thing")

    @thing.operation
    def op() -> None: ...

    with pytest.raises(ValueError, match="already"):
        thing.operation(id="op")(lambda: None)
    with pytest.raises(TypeError, match="positional-only"):

        @thing.operation
        def positional(a: int, /) -> None: ...

    with pytest.raises(ValueError, match="id"):
        plugin(id="has space")


class Node(BaseModel):
    name: str
    children: list[Node] = []


def test_recursive_models_keep_their_defs() -> None:
    @tool
    def walk(tree: Node) -> int:
        """Count nodes."""
        return 1

    definition = definition_of(walk)
    assert definition is not None
    assert "$defs" in definition.descriptor.operations[0].parameters


def test_an_unknown_operation_option_is_refused_before_anything_is_declared() -> None:
    definition = plugin(id="strict", description="Refuses typos.")
    with pytest.raises(TypeError):
        definition.operation(requires_aproval=True)  # type: ignore[call-overload]
    assert definition.specs == {}


def test_tool_splits_options_between_the_plugin_and_its_operation() -> None:
    @tool(id="splitter", tags=["t"], effect="write", requires_approval=True, name="Splitter")
    def run() -> None:
        """Runs."""

    found = definition_of(run)
    assert found is not None
    assert found.descriptor.name == "Splitter"
    assert found.descriptor.tags == ("t",)
    op = found.descriptor.operations[0]
    assert (op.id, op.effect, op.requires_approval) == ("run", "write", True)
