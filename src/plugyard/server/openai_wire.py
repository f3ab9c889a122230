"""OpenAI's chat-completions format at the edge of the server (docs/openai.md): the
request body read into a :class:`~plugyard.routing.chat.Conversation`, and a
:class:`~plugyard.routing.chat.Completion` written as a ``chat.completion`` or as
``chat.completion.chunk`` events.

Members OpenAI's API takes and plugyard does not use (``user``, ``seed``, ``logprobs``,
``tool_choice`` …) are accepted and not read; ``user`` in particular names nobody here:
who calls is the API key's subject. Sizes are bounded: the body as every body (1 MiB by
default), and the number of messages and tools here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Literal

import msgspec
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from plugyard.llm import Message, ToolCall
from plugyard.routing.chat import Completion, Conversation
from plugyard.server.faults import InvalidRequest, fault, from_validation

MAX_MESSAGES = 512
MAX_TOOLS = 128
MAX_COMPLETION_TOKENS = 32_768
TOOL_NAME = r"^[A-Za-z0-9_-]{1,64}$"
#: How much of the answer's text one streamed chunk carries.
CHUNK_CHARS = 256
_encode = msgspec.json.Encoder().encode


class _Open(BaseModel):
    # OpenAI adds members to its API often: one a client sends and plugyard does not
    # know is not read, rather than refused.
    model_config = ConfigDict(extra="allow", strict=True)


class TextPart(_Open):
    type: Literal["text"]
    text: str


class FunctionCall(_Open):
    name: str = Field(pattern=TOOL_NAME)
    arguments: str


class ToolCallIn(_Open):
    id: str = Field(max_length=256)
    type: Literal["function"] = "function"
    function: FunctionCall


class MessageIn(_Open):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[TextPart] | None = None
    name: str | None = None
    tool_calls: list[ToolCallIn] | None = Field(default=None, max_length=MAX_TOOLS)
    tool_call_id: str | None = Field(default=None, max_length=256)


class FunctionDef(_Open):
    name: str = Field(pattern=TOOL_NAME)
    description: str | None = None
    parameters: dict[str, Any] | None = None


class ToolIn(_Open):
    type: Literal["function"]
    function: FunctionDef


class JsonSchemaFormat(_Open):
    name: str = Field(default="answer", pattern=TOOL_NAME)
    schema_: dict[str, Any] = Field(default_factory=lambda: {"type": "object"}, alias="schema")


class ResponseFormat(_Open):
    type: Literal["text", "json_object", "json_schema"]
    json_schema: JsonSchemaFormat | None = None


class StreamOptions(_Open):
    include_usage: bool = False


class ChatCompletionBody(_Open):
    model: str = Field(min_length=1, max_length=256)
    messages: list[MessageIn] = Field(min_length=1, max_length=MAX_MESSAGES)
    tools: list[ToolIn] | None = Field(default=None, max_length=MAX_TOOLS)
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_COMPLETION_TOKENS)
    max_completion_tokens: int | None = Field(default=None, ge=1, le=MAX_COMPLETION_TOKENS)
    response_format: ResponseFormat | None = None
    n: int | None = Field(default=None, ge=1, le=1, description="One choice only.")


def read_body(raw: Any) -> ChatCompletionBody:
    """The body, checked: ``invalid_request`` with every fault and its pointer."""
    try:
        return ChatCompletionBody.model_validate(raw)
    except ValidationError as exc:
        errors = [{**e, "loc": ("body", *e.get("loc", ()))} for e in exc.errors()]
        raise from_validation(errors) from None


def conversation_of(body: ChatCompletionBody, default_max_tokens: int) -> Conversation:
    messages = tuple(_message(m, i) for i, m in enumerate(body.messages))
    tools = tuple(t.model_dump(exclude_none=True) for t in body.tools or ())
    names = [t.function.name for t in body.tools or ()]
    if len(set(names)) < len(names):
        raise InvalidRequest([fault("/body/tools", "two tools have the same name")])
    options: dict[str, Any] = {}
    form = body.response_format
    if form is not None and form.type == "json_object":
        options = {"json_schema": {"type": "object"}}
    elif form is not None and form.type == "json_schema":
        spec = form.json_schema or JsonSchemaFormat()
        options = {"json_schema": spec.schema_, "schema_name": spec.name}
    return Conversation(
        messages,
        tools,
        temperature=body.temperature if body.temperature is not None else 0.0,
        max_tokens=body.max_completion_tokens or body.max_tokens or default_max_tokens,
        **options,
    )


def _message(message: MessageIn, index: int) -> Message:
    content = message.content
    text = "\n".join(p.text for p in content) if isinstance(content, list) else content or ""
    role = "system" if message.role == "developer" else message.role
    if role == "tool":
        if not message.tool_call_id:
            where = f"/body/messages/{index}/tool_call_id"
            raise InvalidRequest([fault(where, "a tool message names the call it answers")])
        return Message("tool", text, tool_call_id=message.tool_call_id)
    calls = []
    for number, call in enumerate(message.tool_calls or ()):
        try:
            arguments = json.loads(call.function.arguments or "{}")
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            where = f"/body/messages/{index}/tool_calls/{number}/function/arguments"
            raise InvalidRequest([fault(where, "must be a JSON object, as text")])
        calls.append(ToolCall(call.function.name, arguments, call.id))
    return Message(role, text, tool_calls=tuple(calls))


# ------------------------------------------------------------------ answers


def _calls(calls: tuple[ToolCall, ...]) -> list[dict[str, Any]]:
    return [
        {
            "id": c.id,
            "type": "function",
            "function": {"name": c.name, "arguments": json.dumps(dict(c.arguments))},
        }
        for c in calls
    ]


def _usage(done: Completion) -> dict[str, int]:
    usage = done.usage
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens}  # fmt: skip


def _extension(done: Completion) -> dict[str, Any]:
    """plugyard's own member: what ran here, which the client's history does not show."""
    out: dict[str, Any] = {"request_id": done.request_id, "llm_calls": done.llm_calls,
                           "offered": list(done.offered),
                           "tool_runs": [r.to_dict() for r in done.runs]}  # fmt: skip
    if done.limit is not None:
        out["limit"] = done.limit
    return out


def completion_body(done: Completion, created: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": done.text or None}
    if done.tool_calls:
        message["tool_calls"] = _calls(done.tool_calls)
    return {
        "id": f"chatcmpl-{done.request_id}",
        "object": "chat.completion",
        "created": created,
        "model": done.model,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": done.finish_reason}],
        "usage": _usage(done),
        "plugyard": _extension(done),
    }  # fmt: skip


def chunk_events(done: Completion, created: int, include_usage: bool) -> Iterator[bytes]:
    """The completion as server-sent ``chat.completion.chunk`` events, up to ``[DONE]``."""
    head = {"id": f"chatcmpl-{done.request_id}", "object": "chat.completion.chunk",
            "created": created, "model": done.model}  # fmt: skip

    def event(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return b"data: " + _encode({**head, "choices": [choice], **extra}) + b"\n\n"

    yield event({"role": "assistant", "content": ""})
    text = done.text
    for start in range(0, len(text), CHUNK_CHARS):
        yield event({"content": text[start : start + CHUNK_CHARS]})
    if done.tool_calls:
        calls = [{"index": i, **c} for i, c in enumerate(_calls(done.tool_calls))]
        yield event({"tool_calls": calls})
    yield event({}, done.finish_reason, plugyard=_extension(done))
    if include_usage:
        yield b"data: " + _encode({**head, "choices": [], "usage": _usage(done)}) + b"\n\n"
    yield b"data: [DONE]\n\n"


def models_body(name: str) -> dict[str, Any]:
    model = {"id": name, "object": "model", "created": 0, "owned_by": "plugyard"}
    return {"object": "list", "data": [model]}
