"""The HTTP backend against the scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from plugyard.llm import ChatRequest, Delta, LlmError, OpenAIChatModel, RetryPolicy
from plugyard.llm.testing import FakeModelServer, Reply

T = TypeVar("T")
SCHEMA = {
    "type": "object",
    "properties": {"tool": {"type": "string"}, "why": {"type": "string"}},
    "required": ["tool"],
}
# Retries in tests wait microseconds, not seconds.
FAST = RetryPolicy(attempts=3, base_s=0.001, cap_s=0.002)


def run(script: list[Reply], use: Callable[[OpenAIChatModel, FakeModelServer], Awaitable[T]]) -> T:
    async def main() -> T:
        async with FakeModelServer(script) as fake:
            model = OpenAIChatModel(fake.base_url, "fake-model", api_key="sk-test", retry=FAST)
            return await use(model, fake)

    return asyncio.run(main())


def ask(**options: Any) -> ChatRequest:
    return ChatRequest.of(("system", "Pick a tool."), ("user", "Weather in Oslo?"), **options)


def test_a_constrained_answer_arrives_parsed_with_its_cost() -> None:
    async def use(model: OpenAIChatModel, fake: FakeModelServer) -> Any:
        answer = await model.chat(ask(json_schema=SCHEMA))
        return answer, fake.requests, fake.headers

    answer, requests, headers = run([Reply.json({"tool": "weather"}, prompt_tokens=40)], use)
    assert answer.json == {"tool": "weather"}
    assert answer.usage.prompt_tokens == 40
    assert answer.cost()["llm_calls"] == 1
    assert answer.cost()["tokens"] == answer.usage.total_tokens > 40
    assert answer.duration_ms > 0
    assert requests[0]["response_format"]["json_schema"]["schema"] == SCHEMA
    assert requests[0]["model"] == "fake-model"
    assert headers[0]["Authorization"] == "Bearer sk-test"


def test_a_scored_answer_carries_the_alternatives_of_its_token() -> None:
    async def use(model: OpenAIChatModel, fake: FakeModelServer) -> Any:
        return await model.chat(ask(max_tokens=1, top_logprobs=2)), fake.requests

    answer, requests = run([Reply.scored({"yes": -0.2, "no": -1.8})], use)
    assert answer.text == "yes"
    assert [(t.token, t.logprob) for t in answer.top_logprobs[0]] == [("yes", -0.2), ("no", -1.8)]
    assert requests[0]["logprobs"] is True and requests[0]["top_logprobs"] == 2


def test_429_and_500_are_retried() -> None:
    script = [Reply.error(429, retry_after=0), Reply.error(500), Reply.text("hello")]

    async def use(model: OpenAIChatModel, fake: FakeModelServer) -> Any:
        return await model.chat(ask()), len(fake.requests)

    answer, sent = run(script, use)
    assert (answer.text, answer.attempts, sent) == ("hello", 3, 3)


def test_retries_stop_after_the_policy_allows() -> None:
    async def use(model: OpenAIChatModel, fake: FakeModelServer) -> Any:
        with pytest.raises(LlmError) as caught:
            await model.chat(ask())
        return caught.value, len(fake.requests)

    error, sent = run([Reply.error(503)] * 5, use)
    assert (error.code, error.details["status"], sent) == ("llm_unavailable", 503, 3)


def test_a_client_error_is_not_retried() -> None:
    async def use(model: OpenAIChatModel, fake: FakeModelServer) -> Any:
        with pytest.raises(LlmError) as caught:
            await model.chat(ask())
        return caught.value, len(fake.requests)

    error, sent = run([Reply.error(404), Reply.text("never")], use)
    assert (error.code, sent) == ("llm_unavailable", 1)


@pytest.mark.parametrize(
    "error",
    [
        # llama.cpp's server and OpenAI's (vLLM answers as OpenAI does)
        {"code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": 9000},
        {"code": "context_length_exceeded", "type": "invalid_request_error"},
    ],
)
def test_a_prompt_over_the_context_window_says_so(error: dict[str, Any]) -> None:
    body = json.dumps({"error": {"message": "too long", **error}}).encode()

    async def use(model: OpenAIChatModel, fake: FakeModelServer) -> Any:
        with pytest.raises(LlmError) as caught:
            await model.chat(ask())
        return caught.value, len(fake.requests)

    failure, sent = run([Reply(status=400, raw_body=body)], use)
    assert (failure.code, failure.http_status, sent) == ("llm_context_exceeded", 413, 1)


def test_garbage_is_an_invalid_answer() -> None:
    async def use(model: OpenAIChatModel, _: FakeModelServer) -> LlmError:
        with pytest.raises(LlmError) as caught:
            await model.chat(ask())
        return caught.value

    assert run([Reply.garbage()], use).code == "llm_invalid_answer"


def test_an_answer_off_the_schema_is_an_invalid_answer() -> None:
    async def use(model: OpenAIChatModel, _: FakeModelServer) -> LlmError:
        with pytest.raises(LlmError) as caught:
            await model.chat(ask(json_schema=SCHEMA))
        return caught.value

    assert run([Reply.text("I think weather")], use).code == "llm_invalid_answer"


def test_the_deadline_ends_a_server_that_never_answers() -> None:
    async def use(model: OpenAIChatModel, _: FakeModelServer) -> LlmError:
        with pytest.raises(LlmError) as caught:
            await model.chat(ask(deadline_s=0.2))
        return caught.value

    error = run([Reply.never()], use)
    assert (error.code, error.http_status) == ("llm_timeout", 504)


def test_tool_calls_come_back() -> None:
    tools = ({"type": "function", "function": {"name": "weather", "parameters": {}}},)

    async def use(model: OpenAIChatModel, fake: FakeModelServer) -> Any:
        return await model.chat(ask(tools=tools)), fake.requests[0]

    answer, sent = run([Reply.tool_call("weather", {"city": "Oslo"})], use)
    assert answer.tool_calls[0].arguments == {"city": "Oslo"}
    assert answer.finish_reason == "tool_calls"
    assert sent["tools"] == [dict(tools[0])]


def test_streaming_yields_pieces_then_usage() -> None:
    async def use(model: OpenAIChatModel, _: FakeModelServer) -> list[Delta]:
        return [delta async for delta in model.stream(ask(json_schema=SCHEMA))]

    deltas = run([Reply.json({"tool": "weather", "why": "forecast"})], use)
    assert "".join(d.text for d in deltas) == '{"tool": "weather", "why": "forecast"}'
    assert any(d.finish_reason == "stop" for d in deltas)
    assert deltas[-1].usage is not None


def test_a_streamed_answer_off_the_schema_is_refused_at_its_end() -> None:
    async def use(model: OpenAIChatModel, _: FakeModelServer) -> LlmError:
        with pytest.raises(LlmError) as caught:
            async for _delta in model.stream(ask(json_schema=SCHEMA)):
                pass
        return caught.value

    assert run([Reply.text("not json")], use).code == "llm_invalid_answer"


def test_a_refused_address_is_not_retried() -> None:
    refused = 0

    def guard(addr_info: tuple[Any, ...], /) -> socket.socket:
        nonlocal refused
        refused += 1
        raise OSError(f"loopback {addr_info[4][0]} is not allowlisted")

    async def main() -> LlmError:
        async with FakeModelServer([Reply.text("never")]) as fake:
            model = OpenAIChatModel(fake.base_url, "m", socket_factory=guard, retry=FAST)
            with pytest.raises(LlmError) as caught:
                await model.chat(ask())
            assert fake.requests == []
            return caught.value

    error = asyncio.run(main())
    assert (error.code, refused) == ("outbound_blocked", 1)
    assert "allowlist" in error.message


def test_an_allowing_socket_factory_lets_the_call_through() -> None:
    def allow(addr_info: tuple[Any, ...], /) -> socket.socket:
        family, type_, proto, _, _ = addr_info
        return socket.socket(family, type_, proto)

    async def main() -> str:
        async with FakeModelServer([Reply.text("ok")]) as fake:
            model = OpenAIChatModel(fake.base_url, "m", socket_factory=allow)
            return (await model.chat(ask())).text

    assert asyncio.run(main()) == "ok"


def test_nothing_listening_is_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = OpenAIChatModel(f"http://127.0.0.1:{port}/v1", "m", retry=FAST)
    with pytest.raises(LlmError) as caught:
        asyncio.run(model.chat(ask()))
    assert caught.value.code == "llm_unavailable"
    assert caught.value.details["attempts"] == 3


def test_the_key_stays_out_of_the_repr() -> None:
    model = OpenAIChatModel("https://api.example.invalid/v1", "m", api_key="sk-secret")
    assert "sk-secret" not in repr(model)
    assert model.identity == "openai:https://api.example.invalid/v1:m"
