"""The OpenAI-compatible chat flow (DESIGN.md §8; docs/openai.md): a client's
conversation answered by the yard's model, over the one step loop (loop.py) that
``yard.ask`` runs too.

For each request the operations relevant to the latest user turn that the caller may
call are retrieved (retrieve.py) and offered to the model beside the client's own
tools; the model decides through ``llm/calls.respond``. When it calls a yard tool, the
loop grounds, holds or refuses to repeat it and runs it through the executor with the
caller's context — policy, approvals, validation, deadline and audit, as on every path
— and its output goes back as a ``tool`` message, delimited as data; up to
``max_rounds`` rounds, then the model answers without the yard's tools. When the model
calls one of the client's tools, the request ends there (``finish_reason:
"tool_calls"``) and the client runs it: none of the yard's calls of that answer is
made, so no side effect happens that the client's history would not show.

Tool output already in the client's transcript after its latest user turn counts as
output of this request: it, too, never chooses a side effect (pending_confirmation).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from plugyard.discovery.offloop import off_loop
from plugyard.errors import PlugyardError
from plugyard.execution.executor import Executor, new_request_id
from plugyard.governance.core import Governance
from plugyard.llm import ChatModel, Message, ToolCall, Usage
from plugyard.llm import model_name as name_of
from plugyard.llm.errors import unavailable
from plugyard.routing.act import Calls
from plugyard.routing.choice import Candidate
from plugyard.routing.flow import DEFAULT_K, Rights
from plugyard.routing.loop import Loop, ToolRun
from plugyard.routing.offer import TOOL_DATA_NOTE, Offer
from plugyard.routing.ranked import Rank, first
from plugyard.routing.retrieve import Search, retrieve
from plugyard.runtimes.base import CallContext
from plugyard.telemetry import traced
from plugyard.types import Caller

__all__ = ["ChatFlow", "Completion", "Conversation", "ToolRun"]

DEFAULT_ROUNDS = 4
MAX_ROUNDS = 8
DEFAULT_DEADLINE_S = 120.0
DEFAULT_MAX_TOKENS = 1024


@dataclass(frozen=True, slots=True)
class Conversation:
    """What a client sends: its messages, its own tools (OpenAI function definitions,
    which it runs itself) and the sampling options passed on to the model."""

    messages: tuple[Message, ...]
    tools: tuple[Mapping[str, Any], ...] = ()
    temperature: float = 0.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    json_schema: Mapping[str, Any] | None = None
    schema_name: str = "answer"

    @property
    def client_tool_names(self) -> frozenset[str]:
        return frozenset(str(t.get("function", {}).get("name", "")) for t in self.tools)

    @property
    def latest_user_text(self) -> str:
        for message in reversed(self.messages):
            if message.role == "user":
                return message.content.strip()
        return ""


@dataclass(frozen=True, slots=True)
class Completion:
    """The model's last answer: its text, or the client's tool calls for it to run."""

    text: str
    finish_reason: str
    model: str
    usage: Usage
    request_id: str
    tool_calls: tuple[ToolCall, ...] = ()
    offered: tuple[str, ...] = ()
    runs: tuple[ToolRun, ...] = ()
    llm_calls: int = 0
    limit: str | None = None


class ChatFlow:
    """Answers OpenAI-style conversations with the tools a caller may call."""

    def __init__(
        self,
        executor: Executor,
        search: Search,
        rights: Rights,
        llm: Callable[[], ChatModel],
        governance: Governance | None = None,
        rank: Rank | None = None,
    ) -> None:
        self._executor, self._search, self._rights, self._llm = executor, search, rights, llm
        self._governance = governance
        self._rank = rank

    def model(self) -> ChatModel:
        """The yard's model; ``llm_unavailable`` when it cannot be built."""
        try:
            return self._llm()
        except (PlugyardError, ValueError) as exc:
            raise unavailable(str(exc)) from None

    @traced("chat")  # the parent span of its calls (docs/telemetry.md)
    async def complete(
        self,
        conversation: Conversation,
        *,
        subject: str | None = None,
        roles: Sequence[str] | None = None,
        k: int = DEFAULT_K,
        max_rounds: int = DEFAULT_ROUNDS,
        deadline_s: float = DEFAULT_DEADLINE_S,
        request_id: str | None = None,
    ) -> Completion:
        """The conversation answered for ``subject`` (no subject: the embedding
        application, with the admin role, as ``yard.call``). A model that fails raises
        :class:`LlmError`; a tool that fails is data the model reads."""
        roles = Caller.of(subject, roles).roles
        if not 1 <= max_rounds <= MAX_ROUNDS:
            raise ValueError(f"max_rounds must be 1-{MAX_ROUNDS}, not {max_rounds}")
        context = CallContext(request_id or new_request_id(), subject, tuple(roles))
        model = self.model()
        reserved = conversation.client_tool_names
        query = conversation.latest_user_text
        candidates: tuple[Candidate, ...] = ()
        if query:
            can_see = self._rights(subject, roles)
            candidates = await off_loop(retrieve, self._search, query, k, can_see)
        offer = Offer.of(candidates, reserved)
        favoured = None
        if conversation.tools and not offer.tools and self._rank is not None and query:
            # beside the yard's own operations the client's tools are not ranked: the
            # two rankings are not on one scale
            favoured = await off_loop(first, self._rank, query, conversation.tools)
        messages = list(conversation.messages)
        if offer.tools:
            messages.insert(0, Message("system", TOOL_DATA_NOTE))
        said = tuple(m.content for m in conversation.messages if m.role == "user")
        calls = Calls(self._executor, context, said, self._governance)
        calls.outputs += _since_last_user(conversation.messages)
        loop = Loop(model, calls, offer, "model", time.monotonic() + deadline_s,
                    client_tools=conversation.tools, max_rounds=max_rounds,
                    reply_tokens=conversation.max_tokens, temperature=conversation.temperature,
                    json_schema=conversation.json_schema, schema_name=conversation.schema_name,
                    request_text=query, favoured=favoured)  # fmt: skip
        ending = await loop.run(messages)
        answer = ending.answer
        if ending.status == "client":
            text, finish = "", "tool_calls"
        elif ending.status == "text" and answer is not None:
            text = answer.text
            finish = "stop" if ending.limit else answer.finish_reason
        else:  # the loop ended the request itself: the user decides what comes next
            text, finish = ending.text, "stop"
        return Completion(text, finish, name_of(model), loop.usage(), context.request_id,
                          ending.client_calls, tuple(offer.by_name), tuple(loop.runs),
                          loop.llm_calls, ending.limit)  # fmt: skip


def _since_last_user(messages: Sequence[Message]) -> list[Any]:
    """The tool results in a transcript after its latest user turn."""
    found: list[Any] = []
    for message in reversed(messages):
        if message.role == "user":
            break
        if message.role == "tool":
            found.append(message.content)
    return found[::-1]
