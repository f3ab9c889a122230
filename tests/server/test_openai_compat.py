"""``/v1/chat/completions`` and ``/v1/models`` driven by the official ``openai`` client
over loopback, the scripted fake as the yard's model: plain and streamed answers, a yard
tool run server-side, a client tool handed back, an approval that stays pending, a
caller whose rights keep a tool away, and errors in OpenAI's shape."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx2
import openai
import pytest
from openai import OpenAI

from plugyard.llm.testing import Reply, ScriptedModel
from plugyard.server import ServerSettings, create_app
from plugyard.server.testing import serving
from plugyard.yard import Yard

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
CLERKS = """
grants:
  - {to: "role:admin", plugin: "*", operation: "*", verb: "*", effect: allow}
  - {to: "role:reader", plugin: "*", operation: "*", operation_effect: read, effect: allow}
  - {to: "role:clerk", plugin: mailer, operation: send, effect: allow_with_approval}
  - {to: "role:clerk", plugin: mailer, operation: outbox, effect: allow}
  - {to: "role:clerk", plugin: model, operation: use, verb: use, effect: allow}
"""
MAIL = "send one message to x@example.org with the mailer"


@pytest.fixture
def base_url(yard: Yard) -> Iterator[str]:
    with serving(create_app(yard, ServerSettings(health_checks=False))) as base:
        yield base


def sdk(base_url: str, key: str) -> OpenAI:
    return OpenAI(base_url=f"{base_url}/v1", api_key=key, max_retries=0)


def user(text: str) -> list[Any]:
    return [{"role": "user", "content": text}]


def offered(body: dict[str, Any]) -> list[str]:
    return Reply.offered(body)


def sent(yard: Yard) -> int:
    """How many messages the mailer has sent (its outbox, read as the application)."""
    return int(asyncio.run(yard.call("mailer", "outbox")).data["count"])


def test_models_lists_the_configured_model(base_url: str, admin_key: str) -> None:
    assert [m.id for m in sdk(base_url, admin_key).models.list().data] == ["fake-model"]


def test_a_plain_answer_with_usage(base_url: str, admin_key: str, model: ScriptedModel) -> None:
    model.script(Reply.text("Hello there.", prompt_tokens=12, completion_tokens=3))
    done = sdk(base_url, admin_key).chat.completions.create(model="fake-model",
                                                            messages=user("say hello"))  # fmt: skip
    assert done.object == "chat.completion" and done.model == "fake-model"
    assert done.choices[0].message.content == "Hello there."
    assert done.choices[0].finish_reason == "stop"
    usage = done.usage
    assert usage is not None and (usage.prompt_tokens, usage.total_tokens) == (12, 15)


def test_a_yard_tool_is_run_server_side_and_its_output_given_back(
    base_url: str, admin_key: str, model: ScriptedModel
) -> None:
    model.script(Reply.tool_call("calculator", {"expression": "6*7"}), Reply.choice("none"),
                 Reply.text("It is 42."))  # fmt: skip
    done = sdk(base_url, admin_key).chat.completions.create(
        model="plugyard", messages=user("calculate 6*7 with the calculator")
    )
    assert done.choices[0].message.content == "It is 42."
    assert done.choices[0].message.tool_calls is None
    assert "calculator" in offered(model.requests[0])
    tool = model.requests[2]["messages"][-1]
    assert tool["role"] == "tool" and '"result": 42' in tool["content"]
    extension = (done.model_extra or {})["plugyard"]
    assert [(r["plugin"], r["status"]) for r in extension["tool_runs"]] == [
        ("calculator", "success")
    ]


def test_a_stream_is_chunks_then_done_with_usage(
    base_url: str, admin_key: str, model: ScriptedModel
) -> None:
    model.script(Reply.tool_call("calculator", {"expression": "6*7"}), Reply.choice("none"),
                 Reply.text("It is 42."))  # fmt: skip
    stream = sdk(base_url, admin_key).chat.completions.create(
        model="fake-model",
        messages=user("calculate 6*7 with the calculator"),
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert {c.object for c in chunks} == {"chat.completion.chunk"}
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert text == "It is 42." and finishes[-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0


def test_a_call_of_the_clients_own_tool_is_handed_back(
    base_url: str, admin_key: str, model: ScriptedModel
) -> None:
    model.script(Reply.tool_call("get_weather", {"city": "Oslo"}))
    done = sdk(base_url, admin_key).chat.completions.create(
        model="fake-model", messages=user("the weather in Oslo?"), tools=[WEATHER]
    )
    choice = done.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.tool_calls
    (called,) = choice.message.tool_calls
    assert called.function.name == "get_weather"
    assert json.loads(called.function.arguments) == {"city": "Oslo"}
    assert len(model.requests) == 1 and "get_weather" in offered(model.requests[0])


@pytest.mark.parametrize(
    "replies",
    [
        (Reply.choice("get_weather"), Reply.calls(("get_weather", {"city": "Oslo"}))),
        (Reply.text('<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}'),),
        (Reply.text('```json\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n```'),),
    ],
    ids=["constrained", "tagged-text", "fenced-text"],
)
def test_a_call_the_model_writes_comes_back_as_tool_calls(
    base_url: str, admin_key: str, model: ScriptedModel, replies: tuple[Reply, ...]
) -> None:
    model.script(*replies)
    done = sdk(base_url, admin_key).chat.completions.create(
        model="fake-model", messages=user("the weather in Oslo?"), tools=[WEATHER]
    )
    choice = done.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    (called,) = choice.message.tool_calls or ()
    assert called.function.name == "get_weather" and called.id
    assert json.loads(called.function.arguments) == {"city": "Oslo"}


def test_no_tool_serving_the_request_is_answered_in_text(
    base_url: str, admin_key: str, model: ScriptedModel
) -> None:
    model.script(Reply.choice("none"), Reply.text("I can only tell the weather."))
    done = sdk(base_url, admin_key).chat.completions.create(
        model="fake-model", messages=user("book me a flight"), tools=[WEATHER]
    )
    choice = done.choices[0]
    assert choice.finish_reason == "stop" and choice.message.tool_calls is None
    assert choice.message.content == "I can only tell the weather."
    assert (done.model_extra or {})["plugyard"]["llm_calls"] == 2


def test_the_client_answers_its_tool_and_the_conversation_goes_on(
    base_url: str, admin_key: str, model: ScriptedModel
) -> None:
    model.script(Reply.choice("none"), Reply.text("Sunny in Oslo."))
    history = [
        *user("the weather in Oslo?"),
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]  # fmt: skip
    done = sdk(base_url, admin_key).chat.completions.create(
        model="fake-model", messages=history, tools=[WEATHER]
    )
    assert done.choices[0].message.content == "Sunny in Oslo."
    forwarded = model.requests[1]["messages"][-2:]
    assert forwarded[0]["tool_calls"][0]["id"] == "c1" and forwarded[1]["tool_call_id"] == "c1"


def test_a_client_tool_call_streams_as_a_tool_call_delta(
    base_url: str, admin_key: str, model: ScriptedModel
) -> None:
    model.script(Reply.tool_call("get_weather", {"city": "Oslo"}))
    chunks = list(sdk(base_url, admin_key).chat.completions.create(
        model="fake-model", messages=user("weather?"), tools=[WEATHER], stream=True))  # fmt: skip
    calls = [t for c in chunks if c.choices for t in c.choices[0].delta.tool_calls or ()]
    assert [t.function.name for t in calls if t.function] == ["get_weather"]
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_an_action_needing_approval_stays_pending_with_no_side_effect(
    base_url: str, yard: Yard, admin_key: str, model: ScriptedModel
) -> None:
    yard.admin.load_policy(CLERKS, by="admin")
    clerk = yard.keys.create("bob", ("clerk",))[1]
    before = sent(yard)
    model.script(Reply.tool_call("mailer__send", {"to": "x@example.org"}), Reply.choice("none"),
                 Reply.text("Your message waits for approval."))  # fmt: skip
    done = sdk(base_url, clerk).chat.completions.create(model="fake-model", messages=user(MAIL))
    (run,) = (done.model_extra or {})["plugyard"]["tool_runs"]
    assert run["status"] == "pending_approval" and run["pending"]["receipt"]
    assert "pending_approval" in model.requests[2]["messages"][-1]["content"]
    assert sent(yard) == before


def test_a_caller_without_the_right_is_never_offered_nor_runs_the_tool(
    base_url: str, yard: Yard, reader_key: str, model: ScriptedModel
) -> None:
    before = sent(yard)
    model.script(Reply.tool_call("mailer__send", {"to": "x@example.org"}), Reply.text("No."))
    done = sdk(base_url, reader_key).chat.completions.create(
        model="fake-model", messages=user(MAIL), user="admin"
    )
    assert "mailer__send" not in offered(model.requests[0])
    # A call to a tool not offered is not read as a call at all: no run, an answer.
    assert (done.model_extra or {})["plugyard"]["tool_runs"] == []
    assert done.choices[0].message.content == "No."
    assert sent(yard) == before


def test_errors_come_in_openais_shape(base_url: str, admin_key: str, model: ScriptedModel) -> None:
    cases: list[tuple[str, Any, type[openai.APIStatusError], str]] = [
        ("nobody", {"model": "fake-model"}, openai.AuthenticationError, "unauthenticated"),
        (admin_key, {"model": "gpt-4o"}, openai.NotFoundError, "model_not_found"),
        (admin_key, {"model": "fake-model", "messages": []}, openai.BadRequestError,
         "invalid_request"),
        (admin_key, {"model": "fake-model", "temperature": 9}, openai.BadRequestError,
         "invalid_request"),
        (admin_key, {"model": "fake-model"}, openai.InternalServerError, "llm_unavailable"),
    ]  # fmt: skip
    for key, options, kind, code in cases:
        arguments = {"messages": user("hi"), **options}
        with pytest.raises(kind) as raised:
            sdk(base_url, key).chat.completions.create(**arguments)
        body = raised.value.body
        assert isinstance(body, dict) and body["code"] == code, body
        assert set(body) == {"message", "type", "param", "code"}
    assert raised.value.status_code == 503


def test_framework_refusals_on_v1_are_in_openais_shape_too(base_url: str, admin_key: str) -> None:
    auth = {"Authorization": f"Bearer {admin_key}"}
    with httpx2.Client(base_url=base_url, headers=auth) as http:
        wrong = http.get("/v1/chat/completions")
        missing = http.get("/v1/nothing")
        big = http.post("/v1/chat/completions", content=b"x" * (2 * 1024 * 1024),
                        headers={"Content-Type": "application/json"})  # fmt: skip
        unauthenticated = http.get("/v1/models", headers={"Authorization": ""})
    for reply, status, code in [(wrong, 405, "method_not_allowed"), (missing, 404,
                                "route_not_found"), (big, 413, "request_too_large"),
                                (unauthenticated, 401, "unauthenticated")]:  # fmt: skip
        assert reply.status_code == status and reply.json()["error"]["code"] == code
    assert wrong.headers["allow"] == "POST"
    assert "Bearer" in unauthenticated.headers["www-authenticate"]
