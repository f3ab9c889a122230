"""The OpenAI chat-completions wire format, both ways.

Every backend speaks it: the HTTP backend sends it to a server, the embedded backend
hands the same body to llama.cpp's server core in-process, and the fake for tests
serves it. So a request is built, and an answer read and checked, in one place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache
from typing import Any

import jsonschema_rs

from plugyard.llm.errors import LlmError, invalid_answer
from plugyard.llm.types import (
    ChatAnswer,
    ChatRequest,
    Delta,
    Message,
    TokenLogprob,
    ToolCall,
    Usage,
)
from plugyard.telemetry import record_tokens


def request_body(request: ChatRequest, model: str, *, stream: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model,
        "messages": [message_body(m) for m in request.messages]
        + ([{"role": "assistant", "content": request.prefix}] if request.prefix else []),
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
    }
    if request.json_schema is not None:
        # strict false: strict mode refuses schemas that are not closed and fully
        # required, and every server named in docs/llm.md accepts the non-strict form.
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": request.schema_name,
                "schema": dict(request.json_schema),
                "strict": False,
            },
        }
    if request.tools:
        body["tools"] = [dict(tool) for tool in request.tools]
    if request.top_logprobs:
        body["logprobs"] = True
        body["top_logprobs"] = request.top_logprobs
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def message_body(message: Message) -> dict[str, Any]:
    """One message as the wire carries it, tool calls and the call answered included."""
    body: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        # An assistant that only called tools has no content: null, as OpenAI writes it.
        body["content"] = message.content or None
        body["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(dict(call.arguments))},
            }
            for call in message.tool_calls
        ]
    if message.tool_call_id is not None:
        body["tool_call_id"] = message.tool_call_id
    return body


def usage_of(payload: Mapping[str, Any]) -> Usage | None:
    raw = payload.get("usage")
    if not isinstance(raw, Mapping):
        return None
    return Usage(
        prompt_tokens=_count(raw.get("prompt_tokens")),
        completion_tokens=_count(raw.get("completion_tokens")),
    )


def answer_from(
    payload: Any,
    request: ChatRequest,
    *,
    model: str,
    duration_ms: float,
    attempts: int = 1,
) -> ChatAnswer:
    """A completion body read into a :class:`ChatAnswer`, its JSON checked when a
    schema was asked for; ``llm_invalid_answer`` when it is not a completion."""
    if not isinstance(payload, Mapping):
        raise invalid_answer("the model server's answer is not a JSON object")
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise invalid_answer("the model server's answer has no choices")
    message = choices[0].get("message")
    if not isinstance(message, Mapping):
        raise invalid_answer("the model server's answer has no message")
    text = message.get("content") or ""
    if not isinstance(text, str):
        raise invalid_answer("the answer's content is not text")
    if request.prefix and not text.startswith(request.prefix):
        # llama.cpp's server answers with the whole text, a continued one included;
        # a server that sends only the continuation gets the beginning put back.
        text = request.prefix + text
    finish = str(choices[0].get("finish_reason") or "stop")
    reported = usage_of(payload)
    answer = ChatAnswer(
        text=text,
        finish_reason=finish,
        usage=reported or Usage(),
        duration_ms=duration_ms,
        model=str(payload.get("model") or model),
        tool_calls=_tool_calls(message.get("tool_calls")),
        attempts=attempts,
        top_logprobs=_top_logprobs(choices[0].get("logprobs")),
    )
    if reported is not None:  # where every model's answers arrive (docs/telemetry.md)
        record_tokens(answer.model, reported.prompt_tokens, reported.completion_tokens)
    if request.json_schema is None or answer.tool_calls:
        return answer
    try:
        parsed = checked_json(text, request.json_schema, finish_reason=finish)
    except LlmError:
        if request.lenient:
            return answer
        raise
    return replace(answer, json=parsed)


def checked_json(text: str, schema: Mapping[str, Any], *, finish_reason: str = "stop") -> Any:
    """``text`` parsed and checked against ``schema``; ``llm_invalid_answer`` if not."""
    try:
        value = json.loads(_unfenced(text))
    except ValueError:
        why = " (cut off at max_tokens)" if finish_reason == "length" else ""
        raise invalid_answer(
            f"the answer is not valid JSON{why}", text=text[:500], finish_reason=finish_reason
        ) from None
    errors = [e.message for e in _validator(json.dumps(schema, sort_keys=True)).iter_errors(value)]
    if errors:
        raise invalid_answer(
            f"the answer does not match the schema: {errors[0]}", errors=errors[:5]
        )
    return value


def delta_from(chunk: Any) -> Delta | None:
    """One ``chat.completion.chunk`` as a :class:`Delta`; ``None`` for one carrying
    nothing (the role-only opener)."""
    if not isinstance(chunk, Mapping):
        raise invalid_answer("a streamed chunk is not a JSON object")
    usage = usage_of(chunk)
    choices = chunk.get("choices") or []
    first: Mapping[str, Any] = choices[0] if choices and isinstance(choices[0], Mapping) else {}
    raw_delta = first.get("delta")
    delta: Mapping[str, Any] = raw_delta if isinstance(raw_delta, Mapping) else {}
    text = delta.get("content") or ""
    finish = first.get("finish_reason")
    if not text and finish is None and usage is None:
        return None
    if usage is not None:  # a stream's usage comes once, on its last chunk
        record_tokens(str(chunk.get("model") or ""), usage.prompt_tokens, usage.completion_tokens)
    return Delta(text=str(text), finish_reason=finish, usage=usage)


def _unfenced(text: str) -> str:
    # Some servers ignore response_format and wrap JSON in a Markdown fence; the fence
    # is dropped, the content is still checked against the schema.
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```"):
        inner = stripped[3:-3]
        return inner.split("\n", 1)[1] if "\n" in inner else inner
    return stripped


def _tool_calls(raw: Any) -> tuple[ToolCall, ...]:
    if not isinstance(raw, list):
        return ()
    calls = []
    for item in raw:
        function = item.get("function") if isinstance(item, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise invalid_answer("a tool call has no function name")
        arguments = function.get("arguments") or "{}"
        try:
            parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
        except ValueError:
            raise invalid_answer(
                f"the arguments of tool call {function['name']!r} are not JSON"
            ) from None
        if not isinstance(parsed, Mapping):
            raise invalid_answer(f"the arguments of {function['name']!r} are not an object")
        calls.append(ToolCall(function["name"], dict(parsed), str(item.get("id") or "")))
    return tuple(calls)


def _top_logprobs(raw: Any) -> tuple[tuple[TokenLogprob, ...], ...]:
    # OpenAI's shape, which llama.cpp's server shares: {"content": [{"token", "logprob",
    # "top_logprobs": [{"token", "logprob"}, …]}, …]}. Anything else reads as none: the
    # caller asked for evidence, and no evidence is an answer it must handle anyway.
    content = raw.get("content") if isinstance(raw, Mapping) else None
    if not isinstance(content, list):
        return ()
    tokens = []
    for item in content:
        found = item.get("top_logprobs") if isinstance(item, Mapping) else None
        alternatives = [
            TokenLogprob(alt["token"], float(alt["logprob"]))
            for alt in (found if isinstance(found, list) else [])
            if isinstance(alt, Mapping)
            and isinstance(alt.get("token"), str)
            and isinstance(alt.get("logprob"), int | float)
        ]
        tokens.append(tuple(alternatives))
    return tuple(tokens)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


@lru_cache(maxsize=64)
def _validator(schema_text: str) -> Any:
    # A flow asks with the same few schemas over and over: compile each once.
    return jsonschema_rs.validator_for(json.loads(schema_text))
