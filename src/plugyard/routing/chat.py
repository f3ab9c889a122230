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

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from plugyard.discovery.documents import Document
from plugyard.discovery.engine import Match as Hit
from plugyard.discovery.fusion import decompose
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
from plugyard.routing.loop import Favoured, Loop, ToolRun
from plugyard.routing.offer import TOOL_DATA_NOTE, Offer
from plugyard.routing.retrieve import Search, retrieve
from plugyard.runtimes.base import CallContext
from plugyard.telemetry import traced
from plugyard.types import Caller

__all__ = ["ChatFlow", "Completion", "Conversation", "ToolRun"]

DEFAULT_ROUNDS = 4
MAX_ROUNDS = 8
DEFAULT_DEADLINE_S = 120.0
DEFAULT_MAX_TOKENS = 1024
#: How much nearer (cosine) a part of a request must be to a tool than the whole
#: request is, for the part to ask for a call of its own (bench/labs/BFCL_LAB.md).
PART_LEAD = 0.05

#: Discovery's ranking of documents outside the catalog (``DiscoveryService.rank``).
Rank = Callable[[str, Sequence[Document]], Sequence[Hit]]


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
        client_first = None
        if conversation.tools and not offer.tools and self._rank is not None and query:
            client_first = await off_loop(_client_first, self._rank, query, conversation.tools)
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
                    request_text=query, client_first=client_first)  # fmt: skip
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


def _client_first(rank: Rank, query: str, tools: Sequence[Mapping[str, Any]]) -> Favoured | None:
    """The client's tool its request's words point to, ranked by discovery as the yard's
    own operations are (each read by its name's words and its description). On BFCL's
    tuning halves that first one was right for 24 of 25 multiple and 22 of 25
    live_multiple requests, the 0.5B model's own choice for 20 and 13
    (bench/labs/BFCL_LAB.md). It overrules a choice of none only when it clears the
    embedder's relevance floor: a client offers its tools whatever the request."""
    documents = []
    for tool in tools:
        function = tool.get("function", {})
        name = str(function.get("name", "")) if isinstance(function, Mapping) else ""
        if name:
            words = re.sub(r"[_.\-]+", " ", name).strip()
            documents.append(Document(name, words, str(function.get("description") or "")))
    hits = rank(query, documents)
    if not hits:
        return None
    return Favoured(hits[0].doc_id, over_none=hits[0].relevant,
                    parts=_parts_first(rank, query, documents, hits))  # fmt: skip


def _parts_first(rank: Rank, query: str, documents: Sequence[Document],
                 hits: Sequence[Hit]) -> tuple[str, ...]:  # fmt: skip
    """The tools the separate parts of a request point to ("… and then …"): each
    part's first, when it is relevant to the part and the part is nearer to it than
    the whole request is by :data:`PART_LEAD` (cosine). A small model writes one call
    for most requests that need several functions (bench/labs/BFCL_LAB.md)."""
    whole = {hit.doc_id: hit.cosine for hit in hits}
    found: list[str] = []
    for part in decompose(query) if len(documents) > 1 else ():
        ranked = rank(part, documents)
        if ranked and ranked[0].relevant \
                and ranked[0].cosine - whole.get(ranked[0].doc_id, 0.0) >= PART_LEAD:  # fmt: skip
            found.append(ranked[0].doc_id)
    return tuple(dict.fromkeys(found))


def _since_last_user(messages: Sequence[Message]) -> list[Any]:
    """The tool results in a transcript after its latest user turn."""
    found: list[Any] = []
    for message in reversed(messages):
        if message.role == "user":
            break
        if message.role == "tool":
            found.append(message.content)
    return found[::-1]
