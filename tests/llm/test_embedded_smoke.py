"""Short generations with the real embedded models, when they are installed: the smoke
model (SmolLM2-135M) for the mechanics, the default (Qwen 0.5B) for one call."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from plugyard.llm import ChatRequest, Delta, LlmError
from plugyard.llm.calls import respond
from plugyard.llm.embedded import EmbeddedChatModel
from plugyard.llm.pinned import DEFAULT, SMOLLM2_135M, installed

pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(
        importlib.util.find_spec("xllamacpp") is None, reason="xllamacpp is not installed"
    ),
]

SCHEMA = {
    "type": "object",
    "properties": {"tool": {"type": "string", "enum": ["weather", "calculator"]}},
    "required": ["tool"],
}


@pytest.fixture(scope="module")
def model() -> EmbeddedChatModel:
    try:
        SMOLLM2_135M.locate()
    except Exception as exc:  # the model package is installed by scripts/setup.sh
        pytest.skip(str(exc))
    return EmbeddedChatModel(SMOLLM2_135M)


def test_a_schema_constrained_answer_with_its_cost(model: EmbeddedChatModel) -> None:
    request = ChatRequest.of(
        ("system", "Choose the tool. weather: forecasts. calculator: arithmetic."),
        ("user", "What is 17 times 23?"),
        json_schema=SCHEMA,
        max_tokens=48,
    )
    answer = asyncio.run(model.chat(request))
    # A grammar constrains the tokens, so a finished answer is valid JSON on the schema;
    # which tool a 135M model picks is the routing benchmark's business, not this test's.
    assert answer.finish_reason == "stop"
    assert answer.json["tool"] in {"weather", "calculator"}
    assert answer.usage.prompt_tokens > 10
    assert answer.usage.completion_tokens > 0
    assert answer.model == SMOLLM2_135M.name


def test_an_answer_begun_by_the_request_is_continued_under_its_schema(
    model: EmbeddedChatModel,
) -> None:
    schema = {"type": "array", "minItems": 1, "maxItems": 1, "items": {
        "type": "object", "required": ["name", "arguments"], "additionalProperties": False,
        "properties": {"name": {"const": "weather"}, "arguments": {
            "type": "object", "properties": {"city": {"type": "string"}},
            "required": ["city"], "additionalProperties": False}}}}  # fmt: skip
    begun = '[{"name": "weather", "arguments": '
    request = ChatRequest.of(("user", "Weather in Oslo?"), json_schema=schema, max_tokens=48,
                             prefix=begun)  # fmt: skip
    answer = asyncio.run(model.chat(request))
    # The grammar read the beginning first, so what was generated completes it.
    assert answer.text.startswith(begun) and answer.json[0]["name"] == "weather"
    assert set(answer.json[0]["arguments"]) == {"city"}


def test_streaming_stops_at_max_tokens(model: EmbeddedChatModel) -> None:
    async def pieces() -> list[Delta]:
        return [d async for d in model.stream(ChatRequest.of(("user", "Hi"), max_tokens=4))]

    deltas = asyncio.run(pieces())
    assert any(d.finish_reason == "length" for d in deltas)
    assert deltas[-1].usage is not None
    assert deltas[-1].usage.completion_tokens == 4


def test_the_default_model_answers_a_tool_request_with_a_call(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    if not installed(DEFAULT):  # the six parts are installed by scripts/setup.sh
        pytest.skip(f"{DEFAULT.name} is not installed")
    path = DEFAULT.locate(tmp_path_factory.mktemp("home"))
    model = EmbeddedChatModel(DEFAULT, path=path)
    weather = {"type": "function", "function": {
        "name": "get_weather", "description": "The current weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]}}}  # fmt: skip
    request = ChatRequest.of(("user", "What is the weather like in Oslo?"), tools=(weather,),
                             max_tokens=64)  # fmt: skip
    answer = asyncio.run(respond(model, request))
    assert answer.finish_reason == "tool_calls" and answer.llm_calls == 2
    (call,) = answer.tool_calls
    assert call.name == "get_weather" and "Oslo" in call.arguments["city"]
    assert answer.model == DEFAULT.name


def test_a_prompt_over_the_context_window_is_its_own_error() -> None:
    try:
        SMOLLM2_135M.locate()
    except Exception as exc:
        pytest.skip(str(exc))
    small = EmbeddedChatModel(SMOLLM2_135M, context=256)
    request = ChatRequest.of(("user", "word " * 600), max_tokens=4)
    with pytest.raises(LlmError) as caught:
        asyncio.run(small.chat(request))
    assert caught.value.code == "llm_context_exceeded"
    assert caught.value.details["context"] == 256
