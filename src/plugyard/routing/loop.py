"""The one step loop of every routed request: retrieve → decide → ground → call → compose.

``yard.ask`` (routing/flow.py) and ``/v1/chat/completions`` (routing/chat.py) both run
it; they differ only in the transcript they hand it and in who writes the final answer.

- **Decide.** The model answers the transcript with the offered tools through
  :func:`plugyard.llm.calls.respond`: it chooses a tool or "none" under a JSON schema,
  then writes the calls under a schema built from the tool's parameters (text-form
  calls read as a fallback). One method, the one measured on BFCL.
- **Ground, hold, once per need** (act.py): an argument the conversation does not
  support goes back to the model once with the reason (ask: its call written again
  after it, llm/calls.mend; chat: as an ``argument_ungrounded`` tool result), then the
  request ends ``needs_input``; a write chosen after a tool's output is held
  (``pending_confirmation``); an identical call is not made twice (``repeated``).
- **Call** through the executor with the caller's context and an idempotency key
  derived from the request id, so the same request id replays instead of running twice.
- **Compose.** ``answers_with="output"`` (ask): the loop itself answers from the
  outputs (compose.py; ``post_process`` through the model, fact-checked), after the
  model's one decision, and a failed call or a pending approval ends the request.
  ``answers_with="model"`` (chat): every output, failures included, goes back to the
  model as delimited data and the model decides again, up to ``max_rounds``; a client
  tool's call ends the request for the client to run, once its required values are
  grounded in the client's conversation (an invented one is sent back once, like a
  yard call's, then the request ends ``needs_input``).

Every step is recorded as a :class:`~plugyard.routing.trace.Step`, as it happens.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from plugyard.errors import PlugyardError
from plugyard.execution.result import Result
from plugyard.llm import ChatAnswer, ChatModel, ChatRequest, LlmError, Message, ToolCall, Usage
from plugyard.llm.calls import mend, parse_calls, respond
from plugyard.llm.errors import timed_out, unavailable
from plugyard.llm.grounding import Evidence
from plugyard.routing.act import Calls, Grounded, is_side_effect
from plugyard.routing.choice import Candidate, Choice
from plugyard.routing.compose import compose, unsupported
from plugyard.routing.offer import TOOL_DATA_NOTE, Offer, refused_output, tool_output
from plugyard.routing.outcomes import Status
from plugyard.routing.prompt import post_process_messages
from plugyard.routing.ranked import Favoured
from plugyard.routing.trace import Retrieved, Step
from plugyard.runtimes.base import ErrorInfo

AnswersWith = Literal["output", "model"]
OnStep = Callable[[Step], None]

#: What the model reads when an argument was refused: the one repair round's reason.
REPAIR_NOTE = (
    "Use only values the request states and leave out what it does not state (a time "
    "of day without a date when it gives no date); never copy an example from a tool's "
    "description, or ask the user."
)


class OutOfTokens(Exception):
    """The request's token budget was spent before a model call."""


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
class Ending:
    """How the loop ended: a status of outcomes.py (or ``text``: the model's own answer,
    ``client``: calls of the client's tools), the answer's text and data."""

    status: Status | Literal["text", "client"]
    text: str = ""
    data: Any = None
    error: ErrorInfo | None = None
    pending: Mapping[str, Any] | None = None
    limit: str | None = None
    answer: ChatAnswer | None = None  # the model's last answer, for ``text``/``client``
    client_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True, slots=True)
class Mending:
    """The ask flow's repair round: the call that was not made or failed and why, how
    the request ends if the model writes no call again, and the answer's calls (the
    others ran, and are not asked for again: a call repeated would end the request with
    the outputs so far, before the one mended is made)."""

    refused: ToolCall
    reason: str
    ending: Ending
    calls: tuple[ToolCall, ...]
    #: The arguments refused because the request does not state them.
    unstated: tuple[str, ...] = ()


@dataclass(slots=True)
class Loop:
    """One request's run of the loop (mutable, private to that request)."""

    model: ChatModel
    calls: Calls
    offer: Offer
    answers_with: AnswersWith
    deadline: float  # time.monotonic() by which every model call must be done
    retrieved: tuple[Retrieved, ...] = ()
    client_tools: tuple[Mapping[str, Any], ...] = ()
    max_rounds: int = 2
    max_calls: int | None = None
    max_tokens: int | None = None  # the request's token budget, every model call counted
    reply_tokens: int | None = None  # each model answer's cap
    temperature: float = 0.0
    json_schema: Mapping[str, Any] | None = None
    schema_name: str = "answer"
    dry_run: bool = False
    on_step: OnStep | None = None
    accepted: Callable[[Candidate], None] | None = None  # discovery learns what answered
    request_text: str = ""  # what the post-processed answer is fact-checked against
    favoured: Favoured | None = None  # what the first decision favours (ranked.py)

    steps: list[Step] = field(default_factory=list)
    runs: list[ToolRun] = field(default_factory=list)
    outputs: list[tuple[str, Any]] = field(default_factory=list)  # answered text, data
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_ms: float = 0.0
    repaired: bool = False  # the one repair round is spent
    _retry: bool = False
    _notes: list[str] = field(default_factory=list)
    _mark: tuple[float, int, int] = (0.0, 0, 0)
    _conversation: tuple[Message, ...] = ()
    _refused: tuple[str, Grounded] | None = None  # the client's call sent back for its values
    _mending: Mending | None = None  # ask's repair round: the call to write again
    _answer: tuple[ToolCall, ...] = ()  # the calls of the model's answer being acted on

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def client_functions(self) -> dict[str, Mapping[str, Any]]:
        """The client's own tools' function definitions, by name."""
        return {str(t.get("function", {}).get("name", "")): t.get("function", {})
                for t in self.client_tools}  # fmt: skip

    @property
    def reserved(self) -> frozenset[str]:
        return frozenset(self.client_functions)

    def usage(self) -> Usage:
        return Usage(self.prompt_tokens, self.completion_tokens)

    # ------------------------------------------------------------------ the loop

    async def run(self, messages: list[Message]) -> Ending:
        """Decide, act on each call, and go on as ``answers_with`` says. Raises
        :class:`LlmError` when the model fails, :class:`OutOfTokens` on the budget."""
        self._mark = (time.perf_counter(), 0, 0)
        self._conversation = tuple(messages)  # as the caller sent it, before any round
        by_model = self.answers_with == "model"
        # Chat: one more round without the yard's tools, so the model answers in words.
        for number in range(1, self.max_rounds + (2 if by_model else 1)):
            last = by_model and number > self.max_rounds
            tools = (*self.client_tools, *(() if last else self.offer.tools))
            mending, self._mending = self._mending, None
            if mending is not None:
                mended = await self._mend(mending)
                if isinstance(mended, Ending):
                    return mended
                answer = mended
            else:
                answer = await self._decide(messages, tools, self._favoured(number))
            theirs = tuple(c for c in answer.tool_calls if c.name in self.reserved)
            if theirs:  # none of the yard's calls of that answer is made
                handed, invented = self._grounded_client(theirs)
                if invented is None:
                    return Ending("client", answer=answer, client_calls=handed)
                repair = by_model and number <= self.max_rounds
                ending = self._refuse_client(invented, theirs, answer, messages, number, repair)
                if ending is not None:
                    return ending
                continue
            if not answer.tool_calls:
                if self._refused is not None and self._echoes(answer.text):
                    return _needs_input(*self._refused)
                return self._no_call(answer)
            if last:  # the yard's tools were withdrawn and the model called one anyway
                return Ending("text", answer=answer, limit="max_rounds")
            calls = self._answer = _with_ids(answer.tool_calls, number)
            messages.append(Message("assistant", answer.text, tool_calls=calls))
            self._retry = False
            self.calls.next_answer()
            for call in calls:
                output, ending = await self._act(call, number)
                messages.append(Message("tool", output, tool_call_id=call.id))
                if ending is not None:  # nothing after it runs: the user decides
                    return ending
            if not by_model and not self._retry:
                return self.answered()
        return self.answered()  # ask: the repair round was its last

    def _grounded_client(
        self, calls: tuple[ToolCall, ...]
    ) -> tuple[tuple[ToolCall, ...], tuple[ToolCall, Grounded] | None]:
        """The client's calls as the yard's own are made (act.py): in the form the
        tool's schema asks for, from what the request states ("Lisboa" → "Lisbon",
        "9am" → "09:00" for a time of day), the unstated optional values left out; and
        the first call with a required value that the conversation does not state, if
        any. The evidence is the client's conversation as it came (its system and user
        messages and every tool result in it) and the output of the yard's calls in
        this request — not what the rounds added, whose refusals quote the invented
        values."""
        sent = self._conversation
        texts = [m.content for m in sent
                 if m.role in ("system", "user") and m.content != TOOL_DATA_NOTE]  # fmt: skip
        data = [m.content for m in sent if m.role == "tool"] + list(self.calls.outputs)
        evidence = Evidence.of(texts, data)
        schemas = self.client_functions
        handed = []
        for call in calls:
            function = schemas.get(call.name, {})
            parameters = function.get("parameters") if isinstance(function, Mapping) else None
            if not isinstance(parameters, Mapping):
                handed.append(call)
                continue
            grounded = self.calls.grounded(call.arguments, parameters, evidence)
            if grounded.missing:
                return tuple(handed), (call, grounded)
            handed.append(replace(call, arguments=dict(grounded.arguments)))
        return tuple(handed), None

    def _echoes(self, text: str) -> bool:
        """Whether a text answer after a refused call only writes calls or the refusal
        back: a small model's words there copied its call and the refusal's JSON, which
        is no answer for the user (the request then asks for the missing values)."""
        return bool(parse_calls(text, sorted(self.reserved))) or "argument_ungrounded" in text

    def _refuse_client(self, invented: tuple[ToolCall, Grounded], calls: tuple[ToolCall, ...],
                       answer: ChatAnswer, messages: list[Message], number: int,
                       repair: bool) -> Ending | None:  # fmt: skip
        """A client's call on values nobody stated is not handed out: the model reads
        why once and decides again (``None``), then the request ends ``needs_input``."""
        call, grounded = invented
        reason = grounded.reason()
        if repair and self._spend_repair(f"argument_ungrounded: {reason}"):
            self._refused = (call.name, grounded)
            self.record(None, "needs_input", call=call, round=number,
                        arguments=call.arguments, error_code="argument_ungrounded",
                        notes=("sent back to the model once with the reason",),
                        spends=True)  # fmt: skip
            ided = _with_ids(calls, number)
            messages.append(Message("assistant", answer.text, tool_calls=ided))
            for each in ided:
                why = f"{reason}. {REPAIR_NOTE}" if each.name == call.name else "not run"
                messages.append(Message("tool", refused_output("argument_ungrounded", why),
                                        tool_call_id=each.id))  # fmt: skip
            return None
        self.record(None, "needs_input", call=call, round=number,
                    arguments=call.arguments, error_code="argument_ungrounded",
                    notes=(f"not handed out: {reason}",))  # fmt: skip
        return _needs_input(call.name, grounded)

    def _no_call(self, answer: ChatAnswer) -> Ending:
        if self.answers_with == "model":
            return Ending("text", answer.text, answer=answer)
        if self.outputs:
            return self.answered()
        reply = answer.text.strip()
        self.record(None, "none", choice={"none": True} | ({"reply": reply} if reply else {}))
        return Ending("none", reply)

    def answered(self, status: Status = "answered", **extra: Any) -> Ending:
        # Two calls whose outputs read the same (one sum written two ways) answer once;
        # what each returned stays in the trace.
        first: dict[str, tuple[str, Any]] = {}
        for text, data in self.outputs:
            first.setdefault(text, (text, data))
        outputs = list(first.values())
        if not outputs:
            return Ending(status, **extra)
        if len(outputs) == 1:
            text, data = outputs[0]
            return Ending(status, text, data, **extra)
        text = "\n".join(t for t, _ in outputs)
        return Ending(status, text, [d for _, d in outputs], **extra)

    # ------------------------------------------------------------------ one call

    async def _act(self, call: ToolCall, number: int) -> tuple[str, Ending | None]:
        candidate = self.offer.by_name.get(call.name)
        if candidate is None:
            # Not offered: a hallucinated name, or an operation the caller may not call.
            why = f"no tool {call.name!r} is offered"
            output = refused_output("operation_not_found", why)
            if self.answers_with == "model":  # the model reads the refusal and goes on
                self.record(None, "error", name=call.name, round=number,
                             error_code="operation_not_found")  # fmt: skip
                return output, None
            spends = self._spend_repair(f"llm_invalid_answer: {why}")
            self.record(None, "error", name=call.name, round=number,
                         error_code="operation_not_found", spends=spends)  # fmt: skip
            if spends:
                return output, None
            error = ErrorInfo("llm_invalid_answer", why)
            return output, Ending("error", f"llm_invalid_answer: {why}", error=error)
        calls = self.calls
        grounded = calls.ground(candidate, call.arguments)
        if grounded.missing:
            reason = grounded.reason()
            ending = _needs_input(f"{candidate.plugin_id}.{candidate.operation.id}", grounded)
            if not self.repaired:
                self._spend_repair(f"argument_ungrounded: {reason}", Mending(
                    call, f"{_that(call, self._answer)} was not made: {reason}. {REPAIR_NOTE}",
                    ending, self._answer,
                    tuple(dict.fromkeys(u.name for u in grounded.missing))))  # fmt: skip
                self.record(candidate, "needs_input", call=call, round=number,
                             arguments=call.arguments, error_code="argument_ungrounded",
                             notes=("sent back to the model once with the reason",),
                             spends=True)  # fmt: skip
                return refused_output("argument_ungrounded", f"{reason}. {REPAIR_NOTE}"), None
            self.record(candidate, "needs_input", call=call, round=number,
                         arguments=call.arguments, error_code="argument_ungrounded",
                         notes=(f"not called: {reason}",))  # fmt: skip
            return refused_output("argument_ungrounded", reason), ending
        arguments = dict(grounded.arguments)
        self._notes += grounded.notes()
        if self.dry_run:
            self.record(candidate, "planned", call=call, round=number, arguments=arguments)
            planned = Choice(candidate, arguments).to_dict()
            text = f"would call {planned['plugin']}.{planned['operation']}"
            return refused_output("planned", "not called: a dry run"), Ending("planned", text,
                                                                             planned)  # fmt: skip
        if is_side_effect(candidate) and calls.after_output():
            held = calls.hold(candidate, arguments)
            self.record(candidate, "pending_confirmation", call=call, round=number,
                         arguments=arguments, pending=held,
                         notes=("a write chosen after a tool output waits for your "
                                "confirmation",))  # fmt: skip
            text = (
                f"{candidate.plugin_id}.{candidate.operation.id} was chosen after a tool's "
                "output, so it has not run; it runs only if you confirm it"
                + (f" (action {held['action_id']})." if held.get("action_id") else ".")
            )
            output = refused_output("pending_confirmation", "held for the user's confirmation; "
                                    f"it has not run (action {held.get('action_id')})")  # fmt: skip
            return output, Ending("pending_confirmation", text, pending=held)
        earlier = calls.repeat(candidate, arguments)
        if earlier is not None:
            self.record(candidate, "repeated", call=call, round=number, arguments=arguments,
                         notes=("an identical call already ran in this request; "
                                "not made again",))  # fmt: skip
            if not self.outputs:
                self.outputs.append(self._composed(candidate, earlier.data))
            return tool_output(earlier), self.answered()
        if self.max_calls is not None and calls.count >= self.max_calls:
            return refused_output("step_limit", "no more calls"), self.answered(
                "step_limit", limit="max_steps"
            )
        key = f"{calls.context.request_id}:{len(self.steps) + 1}"
        result = await calls.call(candidate, arguments, key)
        return await self._called(call, number, candidate, arguments, result, key)

    async def _called(self, call: ToolCall, number: int, candidate: Candidate,
                      arguments: Mapping[str, Any], result: Result,
                      key: str) -> tuple[str, Ending | None]:  # fmt: skip
        code = result.error.code if result.error is not None else None
        pending = result.data if result.status == "pending_approval" else None
        record: dict[str, Any] = {"call": call, "round": number, "arguments": arguments,
                                  "error_code": code, "idempotency_key": key,
                                  "pending": pending}  # fmt: skip
        output = tool_output(result)
        if self.answers_with == "model" and not result.ran_ok:
            # The model reads the failure, or that the call waits for an approver.
            self.record(candidate, result.status, **record)
            return output, None
        if result.status == "pending_approval":
            self.record(candidate, result.status, **record)
            held = pending if isinstance(pending, Mapping) else {}
            text = (f"{candidate.plugin_id}.{candidate.operation.id} waits for approval "
                    f"(action {held.get('action_id')}); it has not run.")  # fmt: skip
            return output, Ending("pending_approval", text, pending=dict(held))
        if not result.ok:
            error = result.error or ErrorInfo(result.status, f"the call ended {result.status}")
            failed = Ending("error", f"{error.code}: {error.message}", result.data, error=error)
            if code == "invalid_parameters" and not self.repaired:
                # What the tool said stays data between tags, as every output does.
                self._spend_repair(f"invalid_parameters: {error.message}", Mending(
                    call, f"{_that(call, self._answer)} failed; the tool returned:\n{output}\n",
                    failed, self._answer))  # fmt: skip
                self.record(candidate, result.status, spends=True, **record)
                return output, None
            self.record(candidate, result.status, **record)
            return output, failed
        if self.accepted is not None:
            self.accepted(candidate)
        if self.answers_with == "output":
            try:
                self.outputs.append(await self._composed_by_model(candidate, result.data))
            except OutOfTokens:  # the call ran: its output is still the answer's data
                self._notes.append("not post-processed: the token budget is spent")
                self.outputs.append(self._composed(candidate, result.data))
                self.record(candidate, result.status, **record)
                return output, self.answered("step_limit", limit="max_tokens")
            except LlmError as exc:
                self.record(candidate, result.status, **record)
                error = ErrorInfo(exc.code, exc.message)
                return output, Ending("error", f"{exc.code}: {exc.message}", result.data,
                                      error=error)  # fmt: skip
        self.record(candidate, result.status, **record)
        return output, None

    def _spend_repair(self, note: str, mending: Mending | None = None) -> bool:
        """Spend the request's one repair round on ``note``; whether it was still there.
        ``mending``: a call of the ask flow that was not made or failed; the repair round
        then has the model write the answer's calls again after its reason
        (llm/calls.mend) instead of deciding anew."""
        if self.repaired:
            return False
        self.repaired = self._retry = True
        self._notes.append(f"repair: {note}")
        if mending is not None and self.answers_with == "output":
            self._mending = mending
        return True

    # ------------------------------------------------------------------ compose

    def _composed(self, candidate: Candidate, data: Any) -> tuple[str, Any]:
        return compose(data, candidate.operation.output_schema), data

    async def _composed_by_model(self, candidate: Candidate, data: Any) -> tuple[str, Any]:
        text, _ = self._composed(candidate, data)
        operation = candidate.operation
        if not operation.post_process:
            return text, data
        messages = post_process_messages(self.request_text, operation.post_process_prompt, data)
        written = (await self._chat(ChatRequest(messages, **self._options()))).text
        made_up = unsupported(written, data, self.request_text)
        if made_up:
            self._notes.append("the model's answer was not used: the output does not hold "
                               + ", ".join(made_up[:5]))  # fmt: skip
        elif written.strip():
            text = written.strip()
        return text, data

    # ------------------------------------------------------------------ the model

    def _options(self) -> dict[str, Any]:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise timed_out("the request ran past its deadline")
        options: dict[str, Any] = {"temperature": self.temperature, "deadline_s": left}
        if self.reply_tokens is not None:
            options["max_tokens"] = self.reply_tokens
        return options

    def _favoured(self, number: int) -> Favoured | None:
        """What the request's first decision favours: the model's choice of another
        tool, or of none, needs a clear lead over it (llm/calls.py). The first of a
        client's own tools as discovery ranked them, with the tools the request's parts
        point to (ranked.py), when the yard offers none of its own; else retrieval's
        first match. Not after a tool output (then "none" means the request is
        answered)."""
        if number != 1:
            return None
        if self.favoured is not None:
            return self.favoured
        if self.client_tools or not self.offer.tools:
            return None
        return Favoured(str(self.offer.tools[0]["function"]["name"]))

    async def _decide(self, messages: Sequence[Message], tools: tuple[Mapping[str, Any], ...],
                      favoured: Favoured | None = None) -> ChatAnswer:  # fmt: skip
        """The model's answer: calls or text. ``llm_invalid_answer`` (it chose a tool
        and wrote no call) is asked once more in the ask flow's repair round."""
        while True:
            try:
                request = ChatRequest(tuple(messages), json_schema=self.json_schema,
                                      schema_name=self.schema_name, tools=tools or None,
                                      **self._options())  # fmt: skip
                # Ask composes its own answer: no words are written when nothing fits.
                return await self._chat(request, text=self.answers_with == "model",
                                        favoured=favoured)  # fmt: skip
            except OutOfTokens:
                self.record(None, "step_limit", notes=("the token budget is spent",))
                raise
            except LlmError as exc:
                if exc.code == "llm_invalid_answer" and self.answers_with == "output" \
                        and not self.repaired:  # fmt: skip
                    self._spend_repair(exc.message)
                    continue
                if self.answers_with == "output":
                    self.record(None, "error", error_code=exc.code)
                raise

    async def _mend(self, mending: Mending) -> ChatAnswer | Ending:
        """The ask flow's repair round: the calls written again after the reason, over
        the conversation as the caller sent it. A model that writes no call then leaves
        the refusal as it was: the request ends as it would have without the round."""
        try:
            request = ChatRequest(self._conversation, tools=self.offer.tools or None,
                                  **self._options())  # fmt: skip
            return await self._chat(request, mending=mending)
        except OutOfTokens:
            self.record(None, "step_limit", notes=("the token budget is spent",))
            raise
        except LlmError as exc:
            if exc.code != "llm_invalid_answer":
                self.record(None, "error", error_code=exc.code)
                raise
            ending = mending.ending
            self.record(None, ending.status, error_code=ending.error.code if ending.error
                        else None, notes=("the repair round wrote no call",))  # fmt: skip
            return ending

    async def _chat(self, request: ChatRequest, *, text: bool = True,
                    favoured: Favoured | None = None,
                    mending: Mending | None = None) -> ChatAnswer:  # fmt: skip
        if self.max_tokens is not None and self.tokens >= self.max_tokens:
            raise OutOfTokens
        started = time.perf_counter()
        try:
            # Calls come back as calls whatever the server (llm/calls.py).
            if mending is not None:
                answer = await mend(self.model, request, mending.calls, mending.refused,
                                    mending.reason, mending.unstated)  # fmt: skip
            else:
                answer = await respond(self.model, request, text=text,
                                       favoured=favoured.name if favoured else None,
                                       over_none=favoured.over_none if favoured else True,
                                       parts=favoured.parts if favoured else ())  # fmt: skip
        except LlmError:
            self.llm_calls += 1
            self.llm_ms += (time.perf_counter() - started) * 1000
            raise
        except PlugyardError as exc:
            raise LlmError(exc.message, code=exc.code) from None
        except TimeoutError:
            raise timed_out("the model did not answer in time") from None
        except OSError as exc:
            raise unavailable(f"the model cannot be reached: {exc}") from None
        self.llm_calls += answer.llm_calls
        self.prompt_tokens += answer.usage.prompt_tokens
        self.completion_tokens += answer.usage.completion_tokens
        self.llm_ms += answer.duration_ms
        return answer

    # ------------------------------------------------------------------ the trace

    def record(self, candidate: Candidate | None, status: str, *, call: ToolCall | None = None,
                round: int = 0, name: str | None = None, arguments: Mapping[str, Any] = {},
                choice: Mapping[str, Any] | None = None, error_code: str | None = None,
                idempotency_key: str | None = None, pending: Any = None,
                notes: Sequence[str] = (), spends: bool = False) -> None:  # fmt: skip
        """One step of the trace (and, for a call, its run); ``spends``: this step sent
        its call back to the model, so it is the one before the repair, not after."""
        started, calls0, tokens0 = self._mark
        now = time.perf_counter()
        if candidate is not None:
            choice = Choice(candidate, dict(arguments)).to_dict()
        step = Step(len(self.steps) + 1, self.retrieved, choice, status, error_code=error_code,
                    repaired=self.repaired and not spends,
                    idempotency_key=idempotency_key, llm_calls=self.llm_calls - calls0,
                    tokens=self.tokens - tokens0, ms=(now - started) * 1000,
                    notes=(*self._notes, *notes))  # fmt: skip
        self._notes = []
        self._mark = (now, self.llm_calls, self.tokens)
        self.steps.append(step)
        if self.on_step is not None:
            self.on_step(step)
        tool = call.name if call is not None else name
        if tool is not None:
            held = dict(pending) if isinstance(pending, Mapping) else None
            plugin = candidate.plugin_id if candidate is not None else None
            operation = candidate.operation.id if candidate is not None else None
            self.runs.append(ToolRun(round, tool, plugin, operation, status, error_code, held))


def _needs_input(tool: str, grounded: Grounded) -> Ending:
    """How a request ends when ``tool``'s call still lacks a stated value after the
    repair round, a yard tool's or a client's: the question, and the first value's
    pointer."""
    first = grounded.missing[0]
    error = ErrorInfo("argument_ungrounded", grounded.reason(),
                      {"pointer": first.pointer, "argument": first.name})  # fmt: skip
    return Ending("needs_input", f"{tool} was not called: {grounded.question()}", error=error)


def _that(call: ToolCall, answer: Sequence[ToolCall]) -> str:
    """How the repair's reason names the call: "That call" when it was the answer's
    only one."""
    return "That call" if len(answer) <= 1 else f"The call of {call.name}"


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
