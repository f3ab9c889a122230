"""Tool calls come back as calls, against the scripted OpenAI-compatible server: the
choice among the tools and ``none`` under a schema, then the calls under a schema built
from the tool's parameters; text-form calls read when a server ignores the schema."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from plugyard.llm import (
    ChatAnswer,
    ChatRequest,
    LlmError,
    Message,
    OpenAIChatModel,
    RetryPolicy,
    ToolCall,
)
from plugyard.llm.calls import (
    CALL_TOKENS,
    PARAMETER_TOKENS,
    Tool,
    _said,
    _whole_part,
    calls_schema,
    grammar_schema,
    mend,
    parse_calls,
    respond,
    stated_choices,
    tidy,
)
from plugyard.llm.testing import FakeModelServer, Reply

FAST = RetryPolicy(attempts=1, base_s=0.001, cap_s=0.002)


def tool(name: str, **properties: Any) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": f"{name} things",
        "parameters": {"type": "object", "properties": properties,
                       "required": list(properties)}}}  # fmt: skip


WEATHER = tool("get_weather", city={"type": "string"})
CONVERT = tool("convert", value={"type": "number"}, unit={"type": "string", "enum": ["km", "mi"]})


def answer(
    script: Sequence[Reply],
    *tools: dict[str, Any],
    user: str = "Weather in Oslo?",
    continues: bool = False,
    **options: Any,
) -> tuple[ChatAnswer, list[dict[str, Any]]]:
    async def main() -> tuple[ChatAnswer, list[dict[str, Any]]]:
        async with FakeModelServer(script) as fake:
            model = OpenAIChatModel(fake.base_url, "fake-model", retry=FAST, continues=continues)
            request = ChatRequest.of(("user", user), tools=tools or None, **options)
            return await respond(model, request), fake.requests

    return asyncio.run(main())


def schema_of(body: dict[str, Any]) -> Any:
    return body["response_format"]["json_schema"]["schema"]


def test_a_chosen_tool_comes_back_as_a_call_made_under_its_own_schema() -> None:
    done, requests = answer(
        [Reply.choice("get_weather"), Reply.calls(("get_weather", {"city": "Oslo"}))],
        WEATHER,
        CONVERT,
    )
    assert done.finish_reason == "tool_calls" and done.text == ""
    assert [(c.name, dict(c.arguments)) for c in done.tool_calls] == [
        ("get_weather", {"city": "Oslo"})
    ]
    assert done.tool_calls[0].id and done.llm_calls == 2
    choose, call = requests
    assert schema_of(choose)["properties"]["tool"]["enum"] == ["get_weather", "convert", "none"]
    # The tools travel in the prompt, not as the server's own tools.
    assert "tools" not in choose and '"name": "convert"' in choose["messages"][0]["content"]
    first = schema_of(call)["prefixItems"][0]
    assert first["properties"]["name"] == {"const": "get_weather"}
    assert first["properties"]["arguments"]["required"] == ["city"]
    assert first["properties"]["arguments"]["additionalProperties"] is False
    # The same conversation both times, only the last instruction differs: a server's
    # prompt cache serves the second call.
    assert choose["messages"][:-1] == call["messages"][:-1]


def test_none_is_a_real_choice_answered_in_text_without_the_tools() -> None:
    done, requests = answer(
        [Reply.choice("none"), Reply.text("I cannot book flights.", prompt_tokens=7)],
        WEATHER,
        user="Book me a flight to Rome",
    )
    assert (done.text, done.finish_reason, done.tool_calls) == ("I cannot book flights.",
                                                                "stop", ())  # fmt: skip
    assert done.llm_calls == 2
    text = requests[1]
    assert "response_format" not in text and "tools" not in text
    assert text["messages"] == [{"role": "user", "content": "Book me a flight to Rome"}]


def test_the_text_answer_keeps_the_callers_own_schema() -> None:
    schema = {"type": "object", "properties": {"reply": {"type": "string"}}}
    done, requests = answer(
        [Reply.choice("none"), Reply.json({"reply": "no"})], WEATHER, json_schema=schema
    )
    assert done.json == {"reply": "no"}
    assert schema_of(requests[1]) == schema


def test_the_number_of_calls_chosen_is_the_number_asked_for() -> None:
    two = Reply.calls(("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Rome"}))
    done, requests = answer([Reply.choice("get_weather", calls=2), two], WEATHER,
                            user="Weather in Oslo and in Rome?")  # fmt: skip
    assert [c.arguments["city"] for c in done.tool_calls] == ["Oslo", "Rome"]
    assert len({c.id for c in done.tool_calls}) == 2
    assert (schema_of(requests[1])["minItems"], schema_of(requests[1])["maxItems"]) == (2, 2)


@pytest.mark.parametrize(
    "written",
    [
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>',
        'Sure:\n```json\n{"name": "get_weather", "parameters": {"city": "Oslo"}}\n```',
        '[{"function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Oslo\\"}"}}]',
    ],
)
def test_a_server_that_ignores_the_schema_still_gives_calls(written: str) -> None:
    done, _ = answer([Reply.text(written)], WEATHER)
    assert done.finish_reason == "tool_calls"
    assert [(c.name, dict(c.arguments)) for c in done.tool_calls] == [
        ("get_weather", {"city": "Oslo"})
    ]


def test_a_call_step_written_as_text_is_read_leniently() -> None:
    fenced = '```json\n[{"name": "get_weather", "arguments": {"city": "Oslo"}}]\n```\nDone.'
    done, _ = answer([Reply.choice("get_weather"), Reply.text(fenced)], WEATHER)
    assert [c.name for c in done.tool_calls] == ["get_weather"]


def test_native_tool_calls_of_a_server_are_kept() -> None:
    done, _ = answer([Reply.tool_call("get_weather", {"city": "Oslo"})], WEATHER)
    assert [c.name for c in done.tool_calls] == ["get_weather"] and done.llm_calls == 1


def test_a_chosen_tool_without_a_call_is_an_invalid_answer() -> None:
    with pytest.raises(LlmError) as caught:
        answer([Reply.choice("get_weather"), Reply.text("I would call it.")], WEATHER)
    assert caught.value.code == "llm_invalid_answer"


def test_a_schema_the_server_cannot_compile_is_asked_again_unconstrained() -> None:
    done, requests = answer(
        [Reply.choice("get_weather"), Reply.error(400),
         Reply.calls(("get_weather", {"city": "Oslo"}))], WEATHER,
    )  # fmt: skip
    assert [c.name for c in done.tool_calls] == ["get_weather"]
    loose = schema_of(requests[2])["prefixItems"][0]["properties"]["arguments"]
    assert loose == {"type": "object"}


def test_a_model_that_continues_an_answer_writes_only_the_arguments() -> None:
    # The call's frame, which the schema fixes anyway, is written for the model: the
    # embedded default then generates about 24 tokens where it wrote 43.
    continuation = Reply.text(' {"value": 5, "unit": "km"}}\n]')
    done, requests = answer([Reply.choice("convert"), continuation], CONVERT, user="5 km in mi",
                            continues=True)  # fmt: skip
    assert requests[1]["messages"][-1] == {
        "role": "assistant", "content": '[\n  {"name": "convert", "arguments":'}  # fmt: skip
    assert [(c.name, dict(c.arguments)) for c in done.tool_calls] == [
        ("convert", {"value": 5, "unit": "km"})
    ]


def mended(script: Sequence[Reply], calls: Sequence[ToolCall], *tools: dict[str, Any],
           user: str = "5 km in mi",
           unstated: Sequence[str] = ()) -> tuple[ChatAnswer, list[dict[str, Any]]]:  # fmt: skip
    async def main() -> tuple[ChatAnswer, list[dict[str, Any]]]:
        async with FakeModelServer(script) as fake:
            model = OpenAIChatModel(fake.base_url, "fake-model", retry=FAST)
            request = ChatRequest.of(("user", user), tools=tools)
            written = await mend(model, request, calls, calls[0], "That call was not made.",
                                 unstated)  # fmt: skip
            return written, fake.requests

    return asyncio.run(main())


def test_a_refused_call_is_written_again_after_the_reason_without_a_new_choice() -> None:
    refused = ToolCall("convert", {"value": 10, "unit": "km"})
    again = Reply.calls(("convert", {"value": 5, "unit": "km"}))
    done, requests = mended([again], [refused], WEATHER, CONVERT)
    assert [(c.name, dict(c.arguments)) for c in done.tool_calls] == [
        ("convert", {"value": 5, "unit": "km"})
    ]
    (call,) = requests  # one model call: the choice is not asked again
    # The call step as respond() asks it, then the refused call and the reason: a
    # server's prompt cache serves all of it but the last two messages.
    _, first = answer([Reply.choice("convert"), again], WEATHER, CONVERT, user="5 km in mi")
    assert call["messages"][:-2] == first[1]["messages"]
    assert json.loads(call["messages"][-2]["content"]) == [
        {"name": "convert", "arguments": {"value": 10, "unit": "km"}}
    ]
    assert call["messages"][-1]["content"].startswith("That call was not made.")
    assert schema_of(call)["prefixItems"][0]["properties"]["name"] == {"const": "convert"}


def test_an_unstated_argument_is_written_again_among_the_values_the_user_states() -> None:
    refused = ToolCall("convert", {"value": 1024, "unit": "km"})
    again = Reply.calls(("convert", {"value": 1, "unit": "km"}))
    _, (call,) = mended([again], [refused], CONVERT, user="What is 1 km, or 2.5, in mi?",
                        unstated=["value"])  # fmt: skip
    arguments = schema_of(call)["prefixItems"][0]["properties"]["arguments"]
    assert arguments["properties"]["value"] == {"type": "number", "enum": [1.0, 2.5]}
    assert arguments["properties"]["unit"] == {"type": "string", "enum": ["km", "mi"]}


def test_an_argument_the_model_wrote_from_the_request_is_not_narrowed() -> None:
    refused = ToolCall("convert", {"value": 1024, "unit": "km"})
    again = Reply.calls(("convert", {"value": 1, "unit": "km"}))
    _, (call,) = mended([again], [refused], CONVERT, user="What is 1 km in mi?")
    arguments = schema_of(call)["prefixItems"][0]["properties"]["arguments"]
    assert arguments["properties"]["value"] == {"type": "number"}


@pytest.mark.parametrize(
    ("schema", "said", "expected"),
    [
        ({"type": "number"}, "What is 1 TB in GB?", [1.0]),
        # A quote of several words for a value of one word is of another kind.
        ({"type": "string"}, 'What dates are in "moved from 3 March to May"?', None),
        ({"type": "string"}, 'Count the letters of "OpenAI" and "GPT"', ["OpenAI", "GPT"]),
        ({"type": "integer"}, "split 7.5 kg over 3 bags", [3]),
        ({"type": "integer", "minimum": 5}, "3 or 8 or 12", [8, 12]),
        ({"type": "string"}, "Make the quotes straight in “smart quotes” please", ["smart quotes"]),
        # A backticked literal inside an expression is not a text of its own.
        ({"type": "string"}, "Would foo[?bar > `1`] parse as JMESPath?", None),
        ({"type": "string"}, "no quotes here at all", None),
        # A document among the JSON documents the request writes, its objects first.
        (
            {"description": "any JSON value"},
            'Take the first of {"xs": [9, 8]} using xs[0]',
            [{"xs": [9, 8]}],
        ),
        ({"type": "array"}, 'sum [2, 3] or [4] of {"a": 1}', [[2, 3], [4]]),
        ({"type": "object"}, "no document here [1, 2]", None),
        # A time of day among the times the request states, unless it states a date.
        (
            {"type": "string", "description": "The time as HH:MM"},
            "If it's noon in Tokyo, what time is it in London?",
            ["12:00"],
        ),
        ({"type": "string", "format": "time"}, "at 7pm or 9:30 am", ["19:00", "09:30"]),
        ({"type": "string", "description": "The time as HH:MM"}, "2024-03-10 at 7pm", None),
        ({"type": "number"}, "no numbers here", None),
        ({"type": "string", "enum": ["a", "b"]}, 'say "a"', None),
        ({"type": "string", "format": "date"}, 'on "2024-01-02"', None),
    ],
)
def test_stated_choices_are_the_values_of_the_parameters_kind(
    schema: dict[str, Any], said: str, expected: list[Any] | None
) -> None:
    parameters = {"type": "object", "properties": {"x": schema, "y": {"type": "number"}}}
    # The model's refused value: a word for the one-word quotes, a sentence otherwise.
    refused = "UTC" if "OpenAI" in said or "moved" in said else "a made-up sentence"
    narrowed = stated_choices(parameters, {"x": refused}, said)
    assert narrowed["properties"]["y"] == {"type": "number"}
    x = narrowed["properties"]["x"]
    assert x == (schema if expected is None else {**schema, "enum": expected})


def test_a_refused_expression_is_written_again_among_the_expressions_the_request_writes() -> None:
    parameters = {"type": "object", "properties": {"expression": {"type": "string"}}}
    said = "does sort_by(people, &age)[-1].name parse ok as JMESPath, or `a[0]`?"
    refused = {"expression": "people[?age > `100`].name"}
    narrowed = stated_choices(parameters, refused, said)["properties"]["expression"]
    assert narrowed["enum"] == ["a[0]", "sort_by(people, &age)[-1].name"]
    prose = stated_choices(parameters, refused, "I like tea (and coffee).")
    assert prose == parameters  # a remark in brackets is no expression
    # "expression" alone is no arithmetic: json-query's check takes a query
    checked = {"type": "string", "description": "The expression to check."}
    query = {"type": "object", "properties": {"expression": checked}}
    narrowed = stated_choices(query, refused, said)["properties"]["expression"]
    assert narrowed["enum"] == ["a[0]", "sort_by(people, &age)[-1].name"]


def test_a_refused_sum_is_written_again_as_the_request_writes_arithmetic() -> None:
    sums = {"type": "string", "description": "An arithmetic expression"}
    parameters = {"type": "object", "properties": {"expression": sums}}
    said = "greatest common divisor of 84 and 126"
    refused = {"expression": "84 divided by 126"}
    narrowed = stated_choices(parameters, refused, said)["properties"]["expression"]
    assert narrowed["enum"] == [said]  # no sum of its own: the request, which the tool reads
    tip = "18 percent on a 62.50 check, what's the tip?"
    assert stated_choices(parameters, refused, tip)["properties"]["expression"]["enum"] == [
        "18 percent on a 62.50", tip]  # fmt: skip


def test_only_an_offered_tools_call_is_written_again() -> None:
    with pytest.raises(LlmError) as raised:
        mended([], [ToolCall("wipe", {"disk": "sda"})], CONVERT)
    assert raised.value.code == "llm_invalid_answer"


def test_a_model_that_may_not_continue_an_answer_is_sent_none() -> None:
    written = Reply.calls(("convert", {"value": 5, "unit": "km"}))
    _, requests = answer([Reply.choice("convert"), written], CONVERT, user="5 km in mi")
    assert all(m["role"] != "assistant" for r in requests for m in r["messages"])


def test_a_call_may_take_no_more_tokens_than_the_conversation_could_fill() -> None:
    written = Reply.calls(("convert", {"value": 5, "unit": "km"}))
    _, requests = answer([Reply.choice("convert"), written], CONVERT, user="5 km in mi")
    # one call: its layout, its name, a name per parameter, a token per stated character
    expected = CALL_TOKENS + len("convert") + 2 * PARAMETER_TOKENS + len("5 km in mi")
    assert requests[1]["max_tokens"] == expected


@pytest.mark.parametrize(("written", "kept"), [
    ('[{"name": "convert", "arguments": {"value": 5, "unit": "km", "note": "I am wri',
     {"value": 5, "unit": "km"}),
    ('[{"name": "convert", "arguments": {"value": 5, "unit": "k', {"value": 5}),
    ('[{"name": "convert", "arguments": {"value": 12', {}),
    ('[{"name": "convert", "arguments": {"val', {}),
    ('{"name": "convert", "arguments": {"value": 5, "unit": "k', {"value": 5}),
    ("Sure, here is", {}),
], ids=["a text cut", "a unit cut", "a number cut", "a name cut", "no list",
        "no JSON"])  # fmt: skip
def test_a_call_cut_off_at_its_budget_keeps_only_its_whole_values(
    written: str, kept: dict[str, Any]
) -> None:
    cut = Reply(content=written, finish_reason="length")
    if not written.startswith(("[", "{")):  # nothing whole to read: no call
        with pytest.raises(LlmError) as raised:
            answer([Reply.choice("convert"), cut], CONVERT, user="convert 5 km")
        assert raised.value.code == "llm_invalid_answer"
        return
    done, _ = answer([Reply.choice("convert"), cut], CONVERT, user="convert 5 km")
    assert [(c.name, dict(c.arguments)) for c in done.tool_calls] == [("convert", kept)]


_VALUES = st.one_of(st.integers(), st.booleans(), st.text(max_size=12),
                   st.lists(st.integers(), max_size=3))  # fmt: skip


@settings(deadline=None)  # a parse is microseconds; a loaded machine made one take 200 ms
@given(arguments=st.dictionaries(st.sampled_from(["city", "days", "unit", "note"]), _VALUES),
       cut=st.integers(min_value=0))  # fmt: skip
def test_a_cut_call_keeps_only_values_it_wrote_whole(arguments: dict[str, Any], cut: int) -> None:
    written = json.dumps([{"name": "get_weather", "arguments": arguments}], ensure_ascii=False)
    read = _whole_part(written[: cut % (len(written) + 1)])
    if isinstance(read, list) and read and isinstance(read[-1], dict):
        kept = read[-1]["arguments"]
        assert all(arguments[name] == value for name, value in kept.items())


@settings(deadline=None)
@given(st.text(max_size=200))
@example("{,0")  # the parser asserted on it
def test_any_cut_text_is_read_without_raising(text: str) -> None:
    _whole_part(text)


def test_a_call_to_a_tool_not_offered_is_not_a_call() -> None:
    written = '{"name": "delete_everything", "arguments": {}}'
    done, _ = answer([Reply.text(written), Reply.text("No tool fits.")], WEATHER)
    assert done.tool_calls == () and done.text == "No tool fits."


def test_a_tool_named_none_does_not_take_the_place_of_no_tool() -> None:
    _, requests = answer([Reply.choice("_none"), Reply.text("ok")], tool("none"))
    assert schema_of(requests[0])["properties"]["tool"]["enum"] == ["none", "_none"]


def test_without_tools_it_is_one_plain_call() -> None:
    done, requests = answer([Reply.text("hi")])
    assert done.text == "hi" and len(requests) == 1 and "response_format" not in requests[0]


def test_tool_types_are_read_as_json_schemas() -> None:
    schema = grammar_schema(
        {"type": "dict", "properties": {"x": {"type": "float", "description": "d"},
         "xs": {"type": "tuple", "items": {"type": "any"}}, "n": {"type": "int"}},
         "required": ["x", "gone"]}, top=True)  # fmt: skip
    assert schema == {
        "type": "object",
        "properties": {"x": {"type": "number"}, "xs": {"type": "array", "items": {}},
                       "n": {"type": "integer"}},
        "required": ["x"],
        "additionalProperties": False,
    }  # fmt: skip
    many = calls_schema([Tool.of(WEATHER), Tool.of(CONVERT)], 3)
    assert len(many["items"]["anyOf"]) == 2 and many["minItems"] == many["maxItems"] == 3


_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


@given(st.text(max_size=300))
def test_any_text_parses_to_calls_of_offered_names_only(text: str) -> None:
    for call in parse_calls(text, ["get_weather"]):
        assert call.name == "get_weather"


@given(
    st.dictionaries(st.from_regex(r"[a-z]{1,6}", fullmatch=True), _values, max_size=4),
    st.sampled_from(["{}", "<tool_call>{}</tool_call>", "```json\n{}\n```", "Here: [{}] ok"]),
)
def test_a_written_call_reads_back_whatever_its_wrapping(
    arguments: dict[str, Any], wrapping: str
) -> None:  # fmt: skip
    written = wrapping.replace("{}", json.dumps({"name": "convert", "arguments": arguments}), 1)
    (call,) = parse_calls(written, ["convert", "get_weather"])
    assert (call.name, dict(call.arguments)) == ("convert", arguments)


# ------------------------------------------------------------------ the arguments kept


def optional_tool(name: str, required: dict[str, Any], optional: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": f"{name} things",
        "parameters": {"type": "object", "properties": {**required, **optional},
                       "required": list(required)}}}  # fmt: skip


LOAN = optional_tool(
    "loan",
    {"principal": {"type": "number"}},
    {"rate": {"type": "number", "description": "The annual rate as a decimal."},
     "years": {"type": "integer", "default": 10},
     "bank": {"type": "string"},
     "fixed": {"type": "boolean"}},
)  # fmt: skip


def called(arguments: dict[str, Any], user: str, *tools: dict[str, Any]) -> dict[str, Any]:
    offered = tools or (LOAN,)
    name = offered[0]["function"]["name"]
    done, _ = answer([Reply.choice(name), Reply.calls((name, arguments))], *offered, user=user)
    return dict(done.tool_calls[0].arguments)


def test_an_optional_argument_the_request_never_states_is_left_out() -> None:
    arguments = called({"principal": 5000, "bank": "Chase", "rate": 0.07},
                       "Repay 5000 dollars borrowed at 4%")  # fmt: skip
    assert arguments == {"principal": 5000.0}


def test_optional_arguments_the_request_states_are_kept_in_its_own_words_or_numbers() -> None:
    arguments = called({"principal": 5000, "bank": "chase bank", "years": 3, "fixed": True},
                       "Repay 5,000 to Chase over three years")  # fmt: skip
    assert arguments == {"principal": 5000.0, "bank": "chase bank", "years": 3, "fixed": True}


def test_a_word_is_stated_whatever_its_ending() -> None:
    assert called({"principal": 1, "bank": "detailed"}, "Repay 1 in detail")["bank"] == "detailed"


def test_a_required_argument_is_kept_even_when_the_request_does_not_state_it() -> None:
    assert called({"principal": 42}, "Repay my loan") == {"principal": 42.0}


def test_the_schemas_default_counts_as_stated() -> None:
    assert called({"principal": 1, "years": 10}, "Repay 1") == {"principal": 1.0, "years": 10}


def test_numbers_are_written_as_their_parameters_type() -> None:
    points = optional_tool("plot", {"xs": {"type": "array", "items": {"type": "number"}},
                                    "n": {"type": "integer"}}, {})  # fmt: skip
    arguments = called({"xs": [1, 2.5, 3], "n": 4.0}, "Plot 1, 2.5 and 3, 4 times", points)
    assert arguments == {"xs": [1.0, 2.5, 3.0], "n": 4}
    assert all(type(x) is float for x in arguments["xs"]) and type(arguments["n"]) is int


def test_a_percentage_becomes_a_fraction_where_the_parameter_asks_for_a_decimal() -> None:
    arguments = called({"principal": 100, "rate": 5}, "Repay 100 at 5% a year")
    assert arguments == {"principal": 100.0, "rate": 0.05}
    assert called({"principal": 100, "rate": 0.05}, "Repay 100 at 5% a year")["rate"] == 0.05


def test_the_call_instruction_names_required_and_optional_parameters() -> None:
    _, requests = answer([Reply.choice("loan"), Reply.calls(("loan", {"principal": 1}))], LOAN,
                         user="Repay 1")  # fmt: skip
    instruction = requests[1]["messages"][-1]["content"]
    assert "Required: principal." in instruction
    assert "Optional, only when the user gives them: rate, years, bank, fixed." in instruction


# ------------------------------------------------------------------ none, scored

#: ``{"tool": "get_weather", …}`` as a tokenizer writes it, token by token.
_SPELLED = ('{"', "tool", '":', ' "', "get", "_weather", '",')


def scored_choice(none_logprob: float) -> Reply:
    steps: list[dict[str, float]] = [{token: -0.01} for token in _SPELLED]
    steps[4] = {"get": -0.3, "none": none_logprob, "convert": -6.0}
    return Reply.json({"tool": "get_weather", "calls": 1}, top_logprobs=tuple(steps))


def test_none_is_taken_when_it_is_as_likely_as_the_chosen_tool() -> None:
    done, requests = answer([scored_choice(-0.2), Reply.text("No tool books flights.")],
                            WEATHER, CONVERT, user="Book a flight")  # fmt: skip
    assert done.tool_calls == () and done.text == "No tool books flights."
    assert requests[0]["logprobs"] is True and requests[0]["top_logprobs"] == 20


def test_a_tool_far_likelier_than_none_is_called() -> None:
    done, _ = answer([scored_choice(-6.0), Reply.calls(("get_weather", {"city": "Oslo"}))],
                     WEATHER, CONVERT)  # fmt: skip
    assert [c.name for c in done.tool_calls] == ["get_weather"]


def test_a_server_without_log_probabilities_leaves_the_models_choice() -> None:
    done, _ = answer([Reply.choice("get_weather"), Reply.calls(("get_weather", {"city": "Oslo"}))],
                     WEATHER)  # fmt: skip
    assert [c.name for c in done.tool_calls] == ["get_weather"]


# ------------------------------------------------------------------ the favoured tool


def favouring(script: Sequence[Reply], favoured: str, user: str = "Weather in Oslo?",
              *, over_none: bool = True) -> ChatAnswer:  # fmt: skip
    async def main() -> ChatAnswer:
        async with FakeModelServer(script) as fake:
            model = OpenAIChatModel(fake.base_url, "fake-model", retry=FAST)
            request = ChatRequest.of(("user", user), tools=(WEATHER, CONVERT))
            return await respond(model, request, favoured=favoured, over_none=over_none)

    return asyncio.run(main())


def spelled_choice(chosen: str, logprobs: dict[str, float]) -> Reply:
    steps: list[dict[str, float]] = [{token: -0.01} for token in _SPELLED]
    steps[4] = logprobs
    return Reply.json({"tool": chosen, "calls": 1}, top_logprobs=tuple(steps))


def test_another_tool_than_the_favoured_one_needs_a_clear_lead() -> None:
    faint = spelled_choice("get_weather", {"get": -0.3, "convert": -0.9, "none": -6.0})
    done = favouring([faint, Reply.calls(("convert", {"value": 3, "unit": "km"}))], "convert",
                     user="3 km")  # fmt: skip
    assert [c.name for c in done.tool_calls] == ["convert"]
    clear = spelled_choice("get_weather", {"get": -0.3, "convert": -4.0, "none": -6.0})
    done = favouring([clear, Reply.calls(("get_weather", {"city": "Oslo"}))], "convert")
    assert [c.name for c in done.tool_calls] == ["get_weather"]


def test_none_against_the_favoured_tool_needs_a_clear_lead() -> None:
    faint = spelled_choice("none", {"none": -0.4, "convert": -0.8, "get": -5.0})
    done = favouring([faint, Reply.calls(("convert", {"value": 3, "unit": "km"}))], "convert",
                     user="3 km")  # fmt: skip
    assert [c.name for c in done.tool_calls] == ["convert"]
    clear = spelled_choice("none", {"none": -0.1, "convert": -5.0, "get": -5.0})
    done = favouring([clear, Reply.text("Nothing here books flights.")], "convert",
                     user="Book a flight")  # fmt: skip
    assert done.tool_calls == () and done.text == "Nothing here books flights."


def test_a_favoured_tool_not_over_none_leaves_a_choice_of_none_but_not_of_another_tool() -> None:
    faint_none = spelled_choice("none", {"none": -0.4, "convert": -0.8, "get": -5.0})
    done = favouring([faint_none, Reply.text("Nothing here books flights.")], "convert",
                     user="Book a flight", over_none=False)  # fmt: skip
    assert done.tool_calls == ()
    faint_tool = spelled_choice("get_weather", {"get": -0.3, "convert": -0.9, "none": -6.0})
    done = favouring([faint_tool, Reply.calls(("convert", {"value": 3, "unit": "km"}))],
                     "convert", user="3 km", over_none=False)  # fmt: skip
    assert [c.name for c in done.tool_calls] == ["convert"]


def test_without_log_probabilities_the_models_choice_stands_against_the_favoured() -> None:
    done = favouring([Reply.choice("get_weather"), Reply.calls(("get_weather", {"city": "Oslo"}))],
                     "convert")  # fmt: skip
    assert [c.name for c in done.tool_calls] == ["get_weather"]


def test_two_names_that_begin_alike_are_weighed_where_they_part() -> None:
    search = tool("product_search", q={"type": "string"})
    compare = tool("product_compare", q={"type": "string"})

    def chosen(search_logprob: float) -> list[str]:
        tokens = ('{"', "tool", '":', ' "', "product", "_compare", '",')
        steps: list[dict[str, float]] = [{token: -0.01} for token in tokens]
        steps[4] = {"product": -0.1, "none": -5.0}
        steps[5] = {"_compare": -0.5, "_search": search_logprob}
        choice = Reply.json({"tool": "product_compare", "calls": 1}, top_logprobs=tuple(steps))

        # The server calls whatever the call step names: the schema's constant.
        expected = "product_search" if search_logprob > -1.5 else "product_compare"

        async def main() -> ChatAnswer:
            async with FakeModelServer([choice, Reply.calls((expected, {"q": "tv"}))]) as fake:
                model = OpenAIChatModel(fake.base_url, "fake-model", retry=FAST)
                request = ChatRequest.of(("user", "tv"), tools=(search, compare))
                done = await respond(model, request, favoured="product_search")
                name = schema_of(fake.requests[1])["prefixItems"][0]["properties"]["name"]
                assert name == {"const": expected}
                return done

        return [c.name for c in asyncio.run(main()).tool_calls]

    assert chosen(-0.9) == ["product_search"]  # the model's lead of 0.4 is too faint
    assert chosen(-4.0) == ["product_compare"]


_COUNTED = (*_SPELLED, ' "', "calls", '":', " ", "1", "}")


def counted_choice(counts: dict[str, float]) -> Reply:
    """The model writes one call and weighs the counts at the count's token."""
    steps: list[dict[str, float]] = [{token: -0.01} for token in _COUNTED]
    steps[_COUNTED.index("1")] = counts
    return Reply.json({"tool": "get_weather", "calls": 1}, top_logprobs=tuple(steps))


def test_a_count_weighed_close_behind_one_is_asked_for() -> None:
    two = Reply.calls(("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Rome"}))
    done, requests = answer([counted_choice({"1": -0.5, "2": -1.2, "3": -4.0}), two], WEATHER,
                            user="Weather in Oslo and in Rome?")  # fmt: skip
    assert [c.arguments["city"] for c in done.tool_calls] == ["Oslo", "Rome"]
    assert schema_of(requests[1])["minItems"] == 2


def test_a_count_weighed_far_behind_one_is_not() -> None:
    one = Reply.calls(("get_weather", {"city": "Oslo"}))
    _, requests = answer([counted_choice({"1": -0.1, "2": -3.0}), one], WEATHER)
    assert schema_of(requests[1])["minItems"] == 1


def planning(script: Sequence[Reply], user: str, parts: Sequence[str]
             ) -> tuple[ChatAnswer, list[dict[str, Any]]]:  # fmt: skip
    async def main() -> tuple[ChatAnswer, list[dict[str, Any]]]:
        async with FakeModelServer(script) as fake:
            model = OpenAIChatModel(fake.base_url, "fake-model", retry=FAST)
            request = ChatRequest.of(("user", user), tools=(WEATHER, CONVERT))
            return await respond(model, request, parts=parts), fake.requests

    return asyncio.run(main())


def test_each_tool_a_part_of_the_request_points_to_is_called_in_turn() -> None:
    calls = Reply.calls(("get_weather", {"city": "Oslo"}), ("convert", {"value": 3, "unit": "km"}))
    asked = "Weather in Oslo, then 3 km in miles"
    done, requests = planning(
        [Reply.choice("get_weather"), calls], asked, ["convert", "get_weather"]
    )
    assert [c.name for c in done.tool_calls] == ["get_weather", "convert"]
    schema = schema_of(requests[1])
    names = [item["properties"]["name"]["const"] for item in schema["prefixItems"]]
    assert names == ["get_weather", "convert"] and schema["minItems"] == 2
    # each planned tool's parameters are named with the tool
    assert "convert: Required: value, unit." in requests[1]["messages"][-1]["content"]


def test_a_parts_call_on_values_the_request_does_not_state_is_dropped() -> None:
    calls = Reply.calls(("get_weather", {"city": "Oslo"}), ("convert", {"value": 10, "unit": "km"}))
    done, _ = planning([Reply.choice("get_weather"), calls], "Weather in Oslo and in miles?",
                       ["convert"])  # fmt: skip
    assert [c.name for c in done.tool_calls] == ["get_weather"]


def test_parts_ask_for_nothing_when_the_model_chooses_none() -> None:
    done, requests = planning([Reply.choice("none"), Reply.text("I cannot book flights.")],
                              "Book a flight, then a hotel", ["convert"])  # fmt: skip
    assert done.tool_calls == () and len(requests) == 2
    assert "response_format" not in requests[1]


@pytest.mark.parametrize("second", ["Oslo", "Paris"], ids=["a repeat", "an invented city"])
def test_a_surplus_call_that_repeats_or_invents_is_dropped(second: str) -> None:
    two = Reply.calls(("get_weather", {"city": "Oslo"}), ("get_weather", {"city": second}))
    done, _ = answer([counted_choice({"1": -0.5, "2": -1.2}), two], WEATHER)
    assert [c.arguments["city"] for c in done.tool_calls] == ["Oslo"]


def test_calls_the_model_wrote_it_needed_are_all_kept() -> None:
    two = Reply.calls(("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Oslo"}))
    done, _ = answer([Reply.choice("get_weather", calls=2), two], WEATHER)
    # a written count is the model's own: a repeat is the routing flow's to refuse
    assert len(done.tool_calls) == 2


def test_an_optional_yes_or_no_written_as_a_string_is_kept() -> None:
    properties = {"field": {"type": "string"}, "strict": {"type": "string"}}
    flags = Tool("flag", "", {"type": "object", "properties": properties, "required": ["field"]})
    said = _said((Message("user", "Check the field 'email'"),))
    kept = tidy({"field": "email", "strict": "true"}, flags, said)
    assert kept == {"field": "email", "strict": "true"}
    assert tidy({"field": "email", "strict": "loose"}, flags, said) == {"field": "email"}


def test_a_surplus_call_that_only_flips_a_yes_or_no_is_dropped() -> None:
    star = tool("star", repos={"type": "string"})
    star["function"]["parameters"]["properties"]["aligned"] = {"type": "boolean"}
    calls = Reply.calls(("star", {"repos": "a/b,c/d", "aligned": True}),
                        ("star", {"repos": "a/b,c/d", "aligned": False}))  # fmt: skip
    counted = (*_COUNTED[:4], "star", '",', *_COUNTED[7:])
    steps = [{token: -0.01} for token in counted]
    steps[counted.index("1")] = {"1": -0.5, "2": -1.2}
    choice = Reply.json({"tool": "star", "calls": 1}, top_logprobs=tuple(steps))
    done, _ = answer([choice, calls], star, user="Star history of a/b and c/d, aligned")
    assert [c.arguments["aligned"] for c in done.tool_calls] == [True]


def test_a_surplus_call_with_a_stated_negative_number_is_kept() -> None:
    area = tool("area", coefficients={"type": "array", "items": {"type": "integer"}})
    two = Reply.calls(
        ("area", {"coefficients": [3, -2, 1]}), ("area", {"coefficients": [1, 0, -1]})
    )
    counted = (*_COUNTED[:4], "area", '",', *_COUNTED[7:])
    steps = [{token: -0.01} for token in counted]
    steps[counted.index("1")] = {"1": -0.5, "2": -1.2}
    choice = Reply.json({"tool": "area", "calls": 1}, top_logprobs=tuple(steps))
    done, _ = answer([choice, two], area, user="Areas for [3, -2, 1] and for [1, 0, -1]")
    assert [c.arguments["coefficients"] for c in done.tool_calls] == [[3, -2, 1], [1, 0, -1]]


def test_an_optional_date_is_kept_in_another_form_only_when_its_numbers_are_stated() -> None:
    properties = {"city": {"type": "string"}, "date": {"type": "string"}}
    weather = Tool("weather", "", {"type": "object", "properties": properties,
                                   "required": ["city"]})  # fmt: skip
    said = _said((Message("user", "The weather in Sacramento on April 22nd 2023?"),))
    kept = tidy({"city": "Sacramento", "date": "2023-04-22"}, weather, said)
    assert kept == {"city": "Sacramento", "date": "2023-04-22"}
    assert tidy({"city": "Sacramento", "date": "2023-05-22"}, weather, said) == {
        "city": "Sacramento"}  # fmt: skip
    at = _said((Message("user", "A flight on the 12th of March 2023 at 3 in the afternoon"),))
    assert tidy({"city": "Paris", "date": "2023-03-12T15:00:00"}, weather, at)["date"]


def test_a_surplus_call_that_only_changes_the_operators_of_a_text_is_dropped() -> None:
    calc = tool("calc", expression={"type": "string"})
    three = Reply.calls(
        ("calc", {"expression": "345 + 678 + 912"}),
        ("calc", {"expression": "345 - 678 - 912"}),
        ("calc", {"expression": "345 * 678 * 912"}),
    )
    counted = (*_COUNTED[:4], "calc", '",', *_COUNTED[7:])
    steps = [{token: -0.01} for token in counted]
    steps[counted.index("1")] = {"1": -0.5, "3": -1.2}
    choice = Reply.json({"tool": "calc", "calls": 1}, top_logprobs=tuple(steps))
    done, _ = answer([choice, three], calc, user="Add 345, 678 and 912")
    assert [c.arguments["expression"] for c in done.tool_calls] == ["345 + 678 + 912"]
    # a text with a number of its own is a need of its own
    two = Reply.calls(("calc", {"expression": "5 + 3"}), ("calc", {"expression": "10 * 2"}))
    steps[counted.index("1")] = {"1": -0.5, "2": -1.2}
    choice = Reply.json({"tool": "calc", "calls": 1}, top_logprobs=tuple(steps))
    done, _ = answer([choice, two], calc, user="What is 5 + 3 and 10 * 2?")
    assert [c.arguments["expression"] for c in done.tool_calls] == ["5 + 3", "10 * 2"]


def test_a_text_nested_past_the_json_decoder_holds_no_call() -> None:
    assert parse_calls("[" * 100_000, ["f"]) == ()
