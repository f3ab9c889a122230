"""The request's LLM budget and the model bridge family plugins chat through.

A request has one budget of model calls (DS003 ``budgets``). Before each family call the
executor skips a plugin whose ``maxLLMCalls`` exceeds what is left (``skipped-budget``);
after it, what the call really used is deducted — the most of what it reported
(``cost.llm_calls``, DS027 ``metadata.llmCalls``) and what it asked through the bridge,
so a plugin that under-reports cannot spend more than the request allows.

The bridge is the ``llm`` callback of an in-process call's context: ``await
ctx["llm"].chat(messages, role=…, json_schema=…)``. It asks the yard's chat model (the
model layer) and refuses a call past the plugin's own ``maxLLMCalls`` or past what the
request has left (``budget_exceeded``), so the bound a descriptor declares is honest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from plugyard.errors import PlugyardError
from plugyard.llm import ChatModel, ChatRequest, Message
from plugyard.llm.errors import unavailable
from plugyard.llm.types import DEFAULT_MAX_TOKENS

ModelSource = Callable[[], ChatModel]
_ROLES = ("system", "user", "assistant")


@dataclass
class Budget:
    """What one request may still spend on model calls."""

    limit: int
    used: int = 0

    @property
    def remaining(self) -> int:
        return max(self.limit - self.used, 0)

    def spend(self, calls: int) -> None:
        self.used += max(calls, 0)


class ModelBridge:
    """One family call's way to the model: counted, and bounded by ``allowed``."""

    def __init__(self, model: ModelSource | None, allowed: int, roles: Sequence[str]) -> None:
        self._model = model
        self._allowed = allowed
        self._roles = tuple(roles)
        self.calls = 0
        self.model_names: list[str] = []

    async def chat(
        self,
        messages: str | Sequence[Mapping[str, str]],
        *,
        role: str | None = None,
        json_schema: Mapping[str, Any] | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
    ) -> dict[str, Any]:
        """One chat call: ``{text, json, model, usage}``. ``role`` names the model role
        the call is for (one of the plugin's ``modelRoles``); one model serves them all."""
        if self._model is None:
            raise unavailable("no chat model is configured for reasoning")
        if self.calls >= self._allowed:
            raise PlugyardError(
                f"this call may make at most {self._allowed} model call(s)",
                code="budget_exceeded",
            )
        request = ChatRequest(
            _messages(messages),
            json_schema=json_schema,
            temperature=temperature,
            max_tokens=max_tokens,
        )
        self.calls += 1  # counted before it is made: a failed call may still have cost
        answer = await self._model().chat(request)
        self.model_names.append(answer.model)
        return {
            "text": answer.text,
            "json": answer.json,
            "model": answer.model,
            "role": role or (self._roles[0] if self._roles else None),
            "usage": {
                "promptTokens": answer.usage.prompt_tokens,
                "completionTokens": answer.usage.completion_tokens,
            },
        }


def model_settings(model: ModelSource | None, roles: Sequence[str]) -> dict[str, Any]:
    """DS003 ``modelSettings``: the model each of the plugin's ``modelRoles`` uses."""
    if model is None:
        return {"model": None, "roles": {}}
    identity = model().identity
    role = {"model": identity, "temperature": 0.0, "maxTokens": DEFAULT_MAX_TOKENS}
    return {"model": identity, "roles": {name: dict(role) for name in roles}}


def _messages(messages: str | Sequence[Mapping[str, str]]) -> tuple[Message, ...]:
    if isinstance(messages, str):
        return (Message("user", messages),)
    out = []
    for item in messages:
        role = item.get("role", "user")
        if role not in _ROLES:
            raise PlugyardError(f"a message role is one of {_ROLES}", code="invalid_request")
        out.append(Message(role, str(item.get("content", ""))))  # type: ignore[arg-type]
    if not out:
        raise PlugyardError("a chat call needs a message", code="invalid_request")
    return tuple(out)
