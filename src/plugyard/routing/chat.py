"""The OpenAI-compatible chat flow (DESIGN.md §8; docs/openai.md): a client's
conversation answered by the yard's model, with the yard's tools run here.

For each request the operations relevant to the latest user turn that the caller may
call are retrieved (retrieve.py) and offered to the model as OpenAI functions, beside
the client's own tools. When the model calls a yard tool, the executor runs it with the
caller's context — policy, approvals, validation, deadline and audit, as on every path —
and its output goes back as a ``tool`` message, delimited as data; up to ``max_rounds``
rounds, then the model answers without the yard's tools. When the model calls one of
the client's tools, the request ends there and the client runs it: none of the yard's
calls of that answer is made, so no side effect happens that the client's history
would not show. The set offered never grows: it comes from the caller's rights, and an
action that needs an approval stays pending.

Between the model's call and the executor the same steps run as in the routing flow
(act.py): the arguments are grounded in the user's turns and earlier tool output (an
ungrounded one goes back to the model once as an ``argument_ungrounded`` tool result,
then the request ends asking the user for it), a write or destructive call made after
a tool's output is held for the caller's confirmation, and an identical call is not
made twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from plugyard.discovery.offloop import off_loop
from plugyard.errors import PlugyardError
from plugyard.execution.executor import Executor, new_request_id
from plugyard.governance.core import Governance
from plugyard.llm import ChatAnswer, ChatModel, ChatRequest, LlmError, Message, ToolCall, Usage
from plugyard.llm import model_name as name_of
from plugyard.llm.calls import respond
from plugyard.llm.errors import timed_out, unavailable
from plugyard.routing.act import Calls, is_side_effect
from plugyard.routing.choice import Candidate
from plugyard.routing.compose import compose
from plugyard.routing.flow import DEFAULT_K, Rights
from plugyard.routing.offer import TOOL_DATA_NOTE, Offer, refused_output, tool_output
from plugyard.routing.retrieve import Search, retrieve
from plugyard.runtimes.base import CallContext
from plugyard.telemetry import traced
from plugyard.types import Caller

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
class ToolRun:
    """One call of a yard tool the model asked for: made, or refused before it was."""

    round: int
    name: str
    plugin: str | None
    operation: str | None
    status: str
    error_code: str | None = None
    pending: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"round": self.round, "name": self.name, "plugin": self.plugin,
                               "operation": self.operation, "status": self.status}  # fmt: skip
        if self.error_code is not None:
            out["error_code"] = self.error_code
        if self.pending is not None:
            out["pending"] = dict(self.pending)
        return out


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


@dataclass(slots=True)
class _Run:
    context: CallContext
    model: ChatModel
    deadline: float
    offered: tuple[str, ...]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_calls: int = 0
    runs: list[ToolRun] = field(default_factory=list)

    calls: Calls | None = None
    repaired: bool = False  # an ungrounded call went back to the model once
    ending: str | None = None  # the request ends with this text, after this round

    def done(self, answer: ChatAnswer, finish: str, calls: tuple[ToolCall, ...] = (),
             limit: str | None = None, text: str | None = None) -> Completion:  # fmt: skip
        usage = Usage(self.prompt_tokens, self.completion_tokens)
        text = answer.text if text is None else text
        return Completion(text, finish, name_of(self.model), usage,
                          self.context.request_id, calls, self.offered, tuple(self.runs),
                          self.llm_calls, limit)  # fmt: skip


class ChatFlow:
    """Answers OpenAI-style conversations with the tools a caller may call."""

    def __init__(
        self,
        executor: Executor,
        search: Search,
        rights: Rights,
        llm: Callable[[], ChatModel],
        governance: Governance | None = None,
    ) -> None:
        self._executor, self._search, self._rights, self._llm = executor, search, rights, llm
        self._governance = governance

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
        messages = list(conversation.messages)
        if offer.tools:
            messages.insert(0, Message("system", TOOL_DATA_NOTE))
        run = _Run(context, model, time.monotonic() + deadline_s, tuple(offer.by_name))
        said = tuple(m.content for m in conversation.messages if m.role == "user")
        run.calls = Calls(self._executor, context, said, self._governance)
        # Tool output already in the client's transcript after its latest user turn
        # counts as output of this request: it, too, never chooses a side effect.
        run.calls.outputs += _since_last_user(conversation.messages)
        for number in range(1, max_rounds + 2):
            last = number > max_rounds
            tools = (*conversation.tools, *(() if last else offer.tools))
            answer = await self._chat(run, conversation, messages, tools)
            theirs = tuple(c for c in answer.tool_calls if c.name in reserved)
            if theirs:
                return run.done(answer, "tool_calls", theirs)
            if not answer.tool_calls:
                return run.done(answer, answer.finish_reason)
            if last:  # the yard's tools were withdrawn and the model called one anyway
                return run.done(answer, "stop", limit="max_rounds")
            calls = _with_ids(answer.tool_calls, number)
            messages.append(Message("assistant", answer.text, tool_calls=calls))
            for call in calls:
                output = await self._execute(run, offer, call, number)
                messages.append(Message("tool", output, tool_call_id=call.id))
                if run.ending is not None:  # nothing after it runs: the user decides
                    return run.done(answer, "stop", text=run.ending)
        raise AssertionError("unreachable: the last round always returns")

    async def _chat(
        self,
        run: _Run,
        conversation: Conversation,
        messages: list[Message],
        tools: tuple[Mapping[str, Any], ...],
    ) -> ChatAnswer:
        left = run.deadline - time.monotonic()
        if left <= 0:
            raise timed_out("the conversation ran past its deadline")
        request = ChatRequest(
            tuple(messages),
            json_schema=conversation.json_schema,
            schema_name=conversation.schema_name,
            tools=tools or None,
            temperature=conversation.temperature,
            max_tokens=conversation.max_tokens,
            deadline_s=left,
        )
        try:
            # Calls come back as calls whatever the server (llm/calls.py).
            answer = await respond(run.model, request)
        except LlmError:
            run.llm_calls += 1
            raise
        except PlugyardError as exc:
            raise LlmError(exc.message, code=exc.code) from None
        except TimeoutError:
            raise timed_out("the model did not answer in time") from None
        except OSError as exc:
            raise unavailable(f"the model cannot be reached: {exc}") from None
        run.llm_calls += answer.llm_calls
        run.prompt_tokens += answer.usage.prompt_tokens
        run.completion_tokens += answer.usage.completion_tokens
        return answer

    async def _execute(self, run: _Run, offer: Offer, call: ToolCall, number: int) -> str:
        candidate = offer.by_name.get(call.name)
        if candidate is None:
            # Not offered: a hallucinated name, or an operation the caller may not call.
            run.runs.append(ToolRun(number, call.name, None, None, "error", "operation_not_found"))
            return refused_output("operation_not_found", f"no tool {call.name!r} is offered")
        calls = run.calls
        assert calls is not None
        plugin, operation = candidate.plugin_id, candidate.operation.id

        def record(status: str, code: str | None = None, held: Any = None) -> None:
            pending = dict(held) if isinstance(held, Mapping) else None
            run.runs.append(ToolRun(number, call.name, plugin, operation, status, code, pending))

        grounded = calls.ground(candidate, call.arguments)
        if grounded.missing:
            record("needs_input", "argument_ungrounded")
            if run.repaired:
                run.ending = f"{call.name} was not called: {grounded.question()}"
            run.repaired = True
            return refused_output(
                "argument_ungrounded",
                grounded.reason() + ". Use only values the user stated, or ask the user.",
            )
        arguments = grounded.arguments
        if is_side_effect(candidate) and calls.after_output():
            held = calls.hold(candidate, arguments)
            record("pending_confirmation", held=held)
            run.ending = (
                f"{call.name} was chosen after a tool's output, so it has not run; "
                "it runs only if you confirm it"
                + (f" (action {held['action_id']})." if held.get("action_id") else ".")
            )
            return tool_output_pending(held)
        earlier = calls.repeat(candidate, arguments)
        if earlier is not None:
            record("repeated")
            run.ending = compose(earlier.data, candidate.operation.output_schema)
            return tool_output(earlier)
        result = await calls.call(candidate, arguments)
        pending = result.data if result.status == "pending_approval" else None
        code = result.error.code if result.error else None
        record(result.status, code, pending)
        return tool_output(result)


def _since_last_user(messages: Sequence[Message]) -> list[Any]:
    """The tool results in a transcript after its latest user turn."""
    found: list[Any] = []
    for message in reversed(messages):
        if message.role == "user":
            break
        if message.role == "tool":
            found.append(message.content)
    return found[::-1]


def tool_output_pending(held: Mapping[str, Any]) -> str:
    return refused_output("pending_confirmation", "held for the user's confirmation; it has "
                          f"not run (action {held.get('action_id')})")  # fmt: skip


def _with_ids(calls: tuple[ToolCall, ...], number: int) -> tuple[ToolCall, ...]:
    """The calls with ids unique in the answer: a ``tool`` message names the call it
    answers, and some servers leave the id out."""
    seen: set[str] = set()
    out = []
    for index, call in enumerate(calls):
        ident = call.id if call.id and call.id not in seen else f"call_{number}_{index}"
        seen.add(ident)
        out.append(ToolCall(call.name, call.arguments, ident))
    return tuple(out)
