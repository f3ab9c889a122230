"""The one extension point of the model layer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from plugyard.llm.types import ChatAnswer, ChatRequest, Delta


@runtime_checkable
class ChatModel(Protocol):
    """A chat model: a whole answer, or the same answer in pieces.

    Failures raise :class:`plugyard.llm.errors.LlmError` (``llm_unavailable``,
    ``llm_timeout``, ``llm_invalid_answer``); nothing else escapes.
    """

    @property
    def identity(self) -> str:
        """Which backend and model, e.g. ``openai:http://…/v1:gpt-4o-mini``."""
        ...

    async def chat(self, request: ChatRequest) -> ChatAnswer: ...

    def stream(self, request: ChatRequest) -> AsyncIterator[Delta]: ...


def continues(model: ChatModel) -> bool:
    """Whether ``model`` continues an answer whose beginning the request writes
    (:attr:`~plugyard.llm.types.ChatRequest.prefix`) rather than starting its own. A
    backend says so with ``continues = True``: llama.cpp's server does, OpenAI's API
    answers a trailing assistant message with a new message of its own."""
    return getattr(model, "continues", False) is True


def model_name(model: ChatModel) -> str:
    """The name a model answers to (``/v1/models``): the backend's ``name`` where it has
    one (the server's model id, the pinned file's name), else its identity."""
    name = getattr(model, "name", None)
    return name if isinstance(name, str) and name else model.identity
