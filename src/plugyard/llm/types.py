"""The values that cross the model layer: what is asked, what comes back."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]

#: Long enough for a routing decision or a short answer, short enough that a small local
#: model on one core finishes in seconds.
DEFAULT_MAX_TOKENS = 512
DEFAULT_DEADLINE_S = 60.0
#: OpenAI's own ceiling; llama.cpp's server takes more, but a flow needs a handful.
MAX_TOP_LOGPROBS = 20


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    arguments: Mapping[str, Any]
    id: str = ""


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a conversation. An assistant's message may carry the tool calls
    it made (``tool_calls``); a ``tool`` message answers one of them (``tool_call_id``)."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One chat turn.

    ``json_schema`` constrains the answer to JSON matching it (the answer's ``json`` is
    then parsed and checked); ``tools`` are OpenAI function definitions the model may
    call instead. ``top_logprobs`` asks for that many alternatives of each generated
    token with their log-probabilities (OpenAI's ``logprobs``; 0: none), which lets a
    flow score choices with one short answer instead of reading a long one.
    ``deadline_s`` bounds the whole call, retries included. ``lenient`` keeps an answer
    that is not JSON on the schema (its ``json`` is then ``None``) for a caller that
    reads the text itself (llm/calls.py) instead of refusing it. ``prefix`` is the
    answer's beginning, already written: a backend that continues an answer
    (:func:`plugyard.llm.model.continues`) generates only what follows it, and the
    answer's ``text`` holds both (a stream carries only what the server sends); send it
    to no other backend.
    """

    messages: tuple[Message, ...]
    json_schema: Mapping[str, Any] | None = None
    schema_name: str = "answer"
    tools: tuple[Mapping[str, Any], ...] | None = None
    temperature: float = 0.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    deadline_s: float = DEFAULT_DEADLINE_S
    top_logprobs: int = 0
    lenient: bool = False
    prefix: str = ""

    def __post_init__(self) -> None:
        if not self.messages:
            raise ValueError("a chat request needs at least one message")
        if self.max_tokens <= 0 or self.deadline_s <= 0:
            raise ValueError("max_tokens and deadline_s must be positive")
        if not 0 <= self.top_logprobs <= MAX_TOP_LOGPROBS:
            raise ValueError(f"top_logprobs must be 0-{MAX_TOP_LOGPROBS}")

    @classmethod
    def of(cls, *messages: tuple[Role, str], **options: Any) -> ChatRequest:
        """``ChatRequest.of(("system", "…"), ("user", "…"), json_schema=…)``."""
        return cls(tuple(Message(role, content) for role, content in messages), **options)


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class TokenLogprob:
    """One candidate for a generated token, with its log-probability."""

    token: str
    logprob: float


@dataclass(frozen=True, slots=True)
class ChatAnswer:
    """A finished answer and what it cost.

    ``json`` is the parsed answer when the request carried a schema (already checked
    against it); ``top_logprobs`` the alternatives of each generated token, if asked;
    ``duration_ms`` is wall time of the whole call, retries included, so a flow can put
    ``llm_calls`` and ``tokens`` into a result's ``cost``; ``llm_calls`` is more than one
    for an answer made of several calls (llm/calls.py).
    """

    text: str
    finish_reason: str
    usage: Usage
    duration_ms: float
    model: str
    json: Any = None
    tool_calls: tuple[ToolCall, ...] = ()
    attempts: int = 1
    #: Per generated token, its alternatives best first (when ``top_logprobs`` asked).
    top_logprobs: tuple[tuple[TokenLogprob, ...], ...] = ()
    llm_calls: int = 1

    def cost(self) -> dict[str, float | int]:
        """This answer as the result envelope's ``cost`` counts it."""
        return {
            "llm_calls": self.llm_calls,
            "tokens": self.usage.total_tokens,
            "duration_ms": round(self.duration_ms, 3),
        }


@dataclass(frozen=True, slots=True)
class Delta:
    """One piece of a streamed answer; the last one carries ``finish_reason`` and, where
    the backend reports it, ``usage``."""

    text: str = ""
    finish_reason: str | None = None
    usage: Usage | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
