"""The OpenAI wire format, built and read in one place."""

from __future__ import annotations

import pytest

from plugyard.llm import ChatRequest, LlmError, Message, ToolCall
from plugyard.llm.retry import RetryPolicy, retry_after
from plugyard.llm.wire import answer_from, checked_json, delta_from, request_body

SCHEMA = {
    "type": "object",
    "properties": {"tool": {"type": "string", "enum": ["weather", "calc"]}},
    "required": ["tool"],
}


def _completion(content: str | None, **extra: object) -> dict[str, object]:
    message = {"role": "assistant", "content": content, **extra}
    return {
        "model": "m",
        "choices": [{"message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 3},
    }


def test_a_schema_becomes_a_non_strict_response_format() -> None:
    request = ChatRequest.of(("user", "hi"), json_schema=SCHEMA, schema_name="route")
    body = request_body(request, "m")
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "route", "schema": SCHEMA, "strict": False},
    }
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert "stream" not in body


def test_a_streamed_request_asks_for_usage() -> None:
    body = request_body(ChatRequest.of(("user", "hi")), "m", stream=True)
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}


def test_an_answer_carries_usage_and_its_checked_json() -> None:
    request = ChatRequest.of(("user", "17*23?"), json_schema=SCHEMA)
    answer = answer_from(_completion('{"tool": "calc"}'), request, model="m", duration_ms=5.0)
    assert answer.json == {"tool": "calc"}
    assert answer.usage.total_tokens == 14
    assert answer.cost() == {"llm_calls": 1, "tokens": 14, "duration_ms": 5.0}


def test_a_fenced_json_answer_is_read() -> None:
    assert checked_json('```json\n{"tool": "weather"}\n```', SCHEMA) == {"tool": "weather"}


@pytest.mark.parametrize(
    ("text", "why"),
    [("not json", "not valid JSON"), ('{"tool": "mail"}', "does not match the schema")],
)
def test_an_answer_off_the_schema_is_refused(text: str, why: str) -> None:
    with pytest.raises(LlmError, match=why) as caught:
        checked_json(text, SCHEMA)
    assert caught.value.code == "llm_invalid_answer"
    assert caught.value.http_status == 502


def test_tool_calls_are_parsed() -> None:
    call = {"id": "c1", "function": {"name": "weather", "arguments": '{"city": "Oslo"}'}}
    answer = answer_from(
        _completion(None, tool_calls=[call]),
        ChatRequest.of(("user", "x")),
        model="m",
        duration_ms=1.0,
    )
    assert answer.tool_calls[0].name == "weather"
    assert answer.tool_calls[0].arguments == {"city": "Oslo"}
    assert answer.text == ""


@pytest.mark.parametrize("payload", [[], {"choices": []}, {"choices": [{"message": 3}]}])
def test_something_that_is_not_a_completion_is_refused(payload: object) -> None:
    with pytest.raises(LlmError) as caught:
        answer_from(payload, ChatRequest.of(("user", "x")), model="m", duration_ms=1.0)
    assert caught.value.code == "llm_invalid_answer"


def test_deltas() -> None:
    opener = {"choices": [{"delta": {"role": "assistant"}, "finish_reason": None}]}
    assert delta_from(opener) is None
    piece = delta_from({"choices": [{"delta": {"content": "ab"}, "finish_reason": None}]})
    assert piece is not None
    assert piece.text == "ab"
    tail = delta_from({"choices": [], "usage": {"prompt_tokens": 2, "completion_tokens": 1}})
    assert tail is not None
    assert tail.usage is not None
    assert tail.usage.total_tokens == 3


def test_a_request_needs_messages_and_positive_limits() -> None:
    with pytest.raises(ValueError, match="at least one message"):
        ChatRequest(messages=())
    with pytest.raises(ValueError, match="positive"):
        ChatRequest.of(("user", "x"), max_tokens=0)


def test_backoff_is_bounded_and_honours_retry_after() -> None:
    policy = RetryPolicy(base_s=0.5, cap_s=2.0)
    assert all(0 <= policy.delay(n) <= 2.0 for n in range(1, 10))
    assert policy.delay(1, retry_after_s=1.5) >= 1.5
    assert policy.delay(1, retry_after_s=60) <= 2.0
    assert retry_after("3") == 3.0
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT") is None


def test_a_conversation_with_tool_calls_goes_out_as_openai_writes_it() -> None:
    call = ToolCall("calculator", {"expression": "6*7"}, "call_1")
    messages = (
        Message("user", "6*7?"),
        Message("assistant", "", tool_calls=(call,)),
        Message("tool", "42", tool_call_id="call_1"),
    )
    body = request_body(ChatRequest(messages), "m")
    assert body["messages"][1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "calculator", "arguments": '{"expression": "6*7"}'},
                }
            ],
        },
        {"role": "tool", "content": "42", "tool_call_id": "call_1"},
    ]


def test_alternatives_of_each_token_are_asked_for_and_read() -> None:
    request = ChatRequest.of(("user", "Fits? yes or no"), max_tokens=1, top_logprobs=2)
    body = request_body(request, "m")
    assert body["logprobs"] is True and body["top_logprobs"] == 2
    alternatives = [{"token": "yes", "logprob": -0.1}, {"token": " no", "logprob": -2.5}]
    logprobs = {"content": [{"token": "yes", "logprob": -0.1, "top_logprobs": alternatives}]}
    payload = _completion("yes")
    payload["choices"][0]["logprobs"] = logprobs  # type: ignore[index]
    answer = answer_from(payload, request, model="m", duration_ms=1.0)
    ((first, second),) = answer.top_logprobs
    assert (first.token, first.logprob) == ("yes", -0.1)
    assert (second.token, second.logprob) == (" no", -2.5)


def test_no_alternatives_unless_asked_and_malformed_ones_read_as_none() -> None:
    assert "logprobs" not in request_body(ChatRequest.of(("user", "hi")), "m")
    request = ChatRequest.of(("user", "hi"), top_logprobs=3)
    for odd in (None, "x", {"content": "x"}, {"content": [{"top_logprobs": [{"token": 1}]}]}):
        payload = _completion("hi")
        payload["choices"][0]["logprobs"] = odd  # type: ignore[index]
        answer = answer_from(payload, request, model="m", duration_ms=1.0)
        assert all(not alternatives for alternatives in answer.top_logprobs)


def test_top_logprobs_are_bounded() -> None:
    with pytest.raises(ValueError, match="top_logprobs"):
        ChatRequest.of(("user", "hi"), top_logprobs=21)


@pytest.mark.parametrize("sent", ['[{"a": 1}]', "1}]"], ids=["whole text", "continuation"])
def test_an_answer_begun_by_the_request_comes_back_whole(sent: str) -> None:
    schema = {"type": "array", "items": {"type": "object"}}
    request = ChatRequest.of(("user", "go"), json_schema=schema, prefix='[{"a": ')
    body = request_body(request, "m")
    assert body["messages"][-1] == {"role": "assistant", "content": '[{"a": '}
    answer = answer_from(_completion(sent), request, model="m", duration_ms=1.0)
    assert (answer.text, answer.json) == ('[{"a": 1}]', [{"a": 1}])


def test_no_answer_is_begun_unless_asked() -> None:
    body = request_body(ChatRequest.of(("user", "go")), "m")
    assert [m["role"] for m in body["messages"]] == ["user"]
