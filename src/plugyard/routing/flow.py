"""The routing flow (HomeClaw §5): retrieve → the model chooses → the arguments are
grounded → the executor calls → the answer is composed; up to ``max_steps`` calls.

How the model chooses is decide.py's: by default it judges each candidate and its
verdicts are fused with retrieval's scores, then only the chosen operation's arguments
are asked for. ``dry_run`` stops before the call and answers with the plan.

The model never calls anything itself: its constrained answer is read back against the
candidates (the caller's rights decided them) and turned into an executor call with the
caller's context, so policy, approvals, idempotency, validation and audit apply as on
every other path. Every ending is an :class:`Answer` (outcomes.py), never an exception.

Retrieval searches with the user's message only, once per request: what a tool returned
never decides which operations are offered. Between the choice and the call, act.py
grounds the arguments, holds back a side effect chosen after tool output and refuses to
repeat an identical call; compose.py turns the output into the sentence people read.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from plugyard.discovery.offloop import off_loop
from plugyard.discovery.query import CanSee, Filters, Match
from plugyard.errors import PlugyardError
from plugyard.execution.executor import Executor, new_request_id
from plugyard.execution.result import Result
from plugyard.governance.core import Governance
from plugyard.llm import ChatAnswer, ChatModel, ChatRequest, LlmError, Message
from plugyard.routing.act import Calls, Grounded, confirm, is_side_effect
from plugyard.routing.choice import (
    Candidate,
    Choice,
    answer_schema,
    read_choice,
    read_tool_call,
    route_tool,
    takes_no_arguments,
)
from plugyard.routing.compose import compose, unsupported
from plugyard.routing.decide import (
    DEFAULT_METHOD,
    Judged,
    Method,
    judge,
    verdict_options,
)
from plugyard.routing.failures import (
    ModelFailed,
    OutOfTokens,
    check_request,
    failure,
    refused,
)
from plugyard.routing.outcomes import Answer, Status
from plugyard.routing.prompt import known_line, post_process_messages, routing_messages
from plugyard.routing.retrieve import Search, Teacher, retrieve
from plugyard.routing.trace import Retrieved, Step
from plugyard.runtimes.base import CallContext, ErrorInfo
from plugyard.telemetry import traced
from plugyard.types import Caller

Rights = Callable[[str | None, Sequence[str]], CanSee]
OnStep = Callable[[Step], None]
Mode = Literal["constrained", "tools"]

#: The answer's text is cut here; ``data`` keeps the output as the executor returned it.
MAX_ANSWER_CHARS = 16_000
DEFAULT_K = 5
DEFAULT_MAX_STEPS = 3
DEFAULT_MAX_TOKENS = 16_000
NONE_TEXT = "None of the operations available to you fits this request."


@dataclass(slots=True)
class _Run:
    """What the steps of one request share (mutable, private to one ``ask``)."""

    message: str
    context: CallContext
    can_see: CanSee
    model: ChatModel
    mode: Mode
    k: int
    max_tokens: int
    deadline_s: float
    on_step: OnStep | None
    method: Method = DEFAULT_METHOD
    dry_run: bool = False
    steps: list[Step] = field(default_factory=list)
    known: list[str] = field(default_factory=list)
    llm_calls: int = 0
    tokens: int = 0
    llm_ms: float = 0.0
    output: tuple[str, Any] | None = None  # the last step's answer text and data
    loose: bool = False  # the model refused a schema with parameter schemas inside
    search_id: str | None = None  # the request's search, for discovery to learn from
    calls: Calls | None = None
    candidates: tuple[Candidate, ...] | None = None  # retrieved once, by the message

    def record(self, step: Step) -> None:
        self.steps.append(step)
        if self.on_step is not None:
            self.on_step(step)

    def end(self, status: Status, text: str = "", data: Any = None, **extra: Any) -> Answer:
        if len(text) > MAX_ANSWER_CHARS:
            text = text[:MAX_ANSWER_CHARS] + f"\n…[cut: {len(text) - MAX_ANSWER_CHARS} more]"
        tool_calls = self.calls.count if self.calls is not None else 0
        cost = {"llm_calls": self.llm_calls, "tokens": self.tokens,
                "duration_ms": round(self.llm_ms, 3), "tool_calls": tool_calls}  # fmt: skip
        return Answer(status, text, data, steps=tuple(self.steps), cost=cost,
                      request_id=self.context.request_id, **extra)  # fmt: skip

    def fail(self, code: str, message: str, data: Any = None) -> Answer:
        return self.end("error", f"{code}: {message}", data, error=ErrorInfo(code, message))

    def nothing_fits(self, reply: str | None) -> Answer:
        if self.output is None:
            return self.end("none", reply or NONE_TEXT)
        return self.end("answered", *self.output)


class Router:
    """Answers requests by routing them to the operations a caller may call."""

    def __init__(
        self,
        executor: Executor,
        search: Search,
        rights: Rights,
        llm: Callable[[], ChatModel],
        teacher: Teacher | None = None,
        governance: Governance | None = None,
    ) -> None:
        self._executor, self._search, self._rights, self._llm = executor, search, rights, llm
        self._teacher, self._governance = teacher, governance

    def _search_for(self, run: _Run) -> Search:
        """The step's search: as the subject when discovery may learn from it."""
        teacher, subject = self._teacher, run.context.subject
        if teacher is None or subject is None:
            return self._search

        def search(query: str, k: int, filters: Filters) -> Sequence[Match]:
            assert teacher is not None and subject is not None
            found = teacher.search(query, k, filters, subject)
            run.search_id = getattr(found, "search_id", None)
            return found

        return search

    @traced("ask")  # the parent span of its calls (docs/telemetry.md)
    async def ask(
        self,
        message: str,
        *,
        subject: str | None = None,
        roles: Sequence[str] | None = None,
        k: int = DEFAULT_K,
        max_steps: int = DEFAULT_MAX_STEPS,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        llm: ChatModel | None = None,
        mode: Mode = "constrained",
        request_id: str | None = None,
        deadline_s: float = 60.0,
        on_step: OnStep | None = None,
        method: Method = DEFAULT_METHOD,
        dry_run: bool = False,
    ) -> Answer:
        """Route ``message`` for ``subject`` (no subject: the embedding application,
        with the admin role, as ``yard.call``). The same ``request_id`` again replays
        the steps that ran instead of running them twice (governed yards). ``method``
        is how the model chooses (decide.py); ``dry_run`` ends ``planned`` with the
        first call chosen (``data``: its plugin, operation and arguments), not made."""
        roles = Caller.of(subject, roles).roles
        context = CallContext(request_id or new_request_id(), subject, tuple(roles))
        problem = check_request(message, k, max_steps, method)
        if problem is not None:
            return refused(context, "invalid_request", problem)
        try:
            model = llm or self._llm()
        except (PlugyardError, ValueError) as exc:
            return refused(context, getattr(exc, "code", "llm_unavailable"), str(exc))
        can_see = self._rights(subject, roles)
        run = _Run(message.strip(), context, can_see, model, mode, k, max_tokens, deadline_s,
                   on_step, method, dry_run)  # fmt: skip
        run.calls = Calls(self._executor, context, (run.message,), self._governance)
        try:
            for number in range(1, max_steps + 1):
                ended = await self._step(run, number)
                if ended is not None:
                    return ended
        except OutOfTokens:
            text, data = run.output or ("", None)
            return run.end("step_limit", text, data, limit="max_tokens")
        text, data = run.output or ("", None)
        return run.end("step_limit", text, data, limit="max_steps")

    async def _step(self, run: _Run, number: int) -> Answer | None:
        started, calls0, tokens0 = time.perf_counter(), run.llm_calls, run.tokens
        calls = run.calls
        assert calls is not None

        def step(choice: Choice | None, status: str, **extra: Any) -> Step:
            made = Step(number, retrieved, choice.to_dict() if choice else None, status,
                        llm_calls=run.llm_calls - calls0, tokens=run.tokens - tokens0,
                        ms=(time.perf_counter() - started) * 1000, **extra)  # fmt: skip
            run.record(made)
            return made

        retrieved: tuple[Retrieved, ...] = ()
        try:
            candidates = await self._retrieve(run)
        except PlugyardError as exc:
            step(None, "error", error_code=exc.code)
            return run.fail(exc.code, exc.message)
        retrieved = tuple(Retrieved(c.plugin_id, c.operation.id, c.score) for c in candidates)
        if not candidates:
            step(None, "none", notes=("nothing relevant the caller may call",))
            return run.nothing_fits(None)
        offered: Sequence[Candidate] = candidates
        if run.method == "scored" and run.mode == "constrained" and len(candidates) > 1:
            try:
                judged = await self._judge(run, candidates)
            except OutOfTokens:
                step(None, "step_limit", notes=("the token budget is spent",))
                raise
            except ModelFailed as exc:
                step(None, "error", error_code=exc.code)
                return run.fail(exc.code, exc.message)
            verdicts = {j.candidate.key: j.verdict for j in judged}
            retrieved = tuple(r.judged(verdicts[(r.plugin, r.operation)]) for r in retrieved)
            offered = (judged[0].candidate,)  # only its arguments are asked for

        repair: str | None = None
        notes: list[str] = []
        attempt = 0
        while True:
            try:
                choice = await self._choose(run, offered, repair)
            except OutOfTokens:
                step(None, "step_limit", notes=(*notes, "the token budget is spent"))
                raise
            except ModelFailed as exc:
                if exc.code == "llm_invalid_answer" and repair is None:
                    repair = exc.message
                    notes.append(f"repair: {exc.message}")
                    continue
                step(None, "error", error_code=exc.code, repaired=repair is not None,
                     notes=tuple(notes))  # fmt: skip
                return run.fail(exc.code, exc.message)
            if choice.candidate is None:
                step(choice, "none", repaired=repair is not None, notes=tuple(notes))
                return run.nothing_fits(choice.reply)
            candidate = choice.candidate
            grounded = calls.ground(candidate, choice.arguments)
            if grounded.missing:
                reason = grounded.reason()
                if repair is None:
                    repair = (f"argument_ungrounded: {reason}. Use only values the request "
                              "states and leave out what it does not state (a time of day "
                              "without a date when it gives no date); never copy an example "
                              "from a tool's description")  # fmt: skip
                    notes.append(f"repair: {repair}")
                    continue
                step(choice, "needs_input", error_code="argument_ungrounded", repaired=True,
                     notes=(*notes, f"not called: {reason}"))  # fmt: skip
                return self._needs_input(run, candidate, grounded)
            notes += grounded.notes()
            choice = Choice(candidate, dict(grounded.arguments), choice.final, choice.reply)
            if run.dry_run:
                step(choice, "planned", repaired=repair is not None, notes=tuple(notes))
                planned = choice.to_dict()
                text = f"would call {planned['plugin']}.{planned['operation']}"
                return run.end("planned", text, planned)
            if is_side_effect(candidate) and calls.after_output():
                return self._hold(run, step, choice, notes, repair is not None)
            if calls.repeat(candidate, choice.arguments) is not None:
                step(choice, "repeated", repaired=repair is not None,
                     notes=(*notes, "an identical call already ran in this request; "
                            "not made again"))  # fmt: skip
                text, data = run.output or ("", None)
                return run.end("answered", text, data)
            key = f"{run.context.request_id}:{number}.{attempt}"
            result = await calls.call(candidate, choice.arguments, key)
            code = result.error.code if result.error is not None else None
            if code == "invalid_parameters" and repair is None and result.error is not None:
                repair = f"invalid_parameters: {result.error.message}"
                notes.append(f"repair: {repair}")
                attempt += 1
                continue
            break

        def called(**extra: Any) -> Step:
            extra.setdefault("notes", tuple(notes))
            return step(choice, result.status, error_code=code, idempotency_key=key,
                        repaired=repair is not None, **extra)  # fmt: skip

        if result.status == "pending_approval":
            called()
            pending = result.data if isinstance(result.data, dict) else {}
            text = (f"{candidate.plugin_id}.{candidate.operation.id} waits for approval "
                    f"(action {pending.get('action_id')}); it has not run.")  # fmt: skip
            return run.end("pending_approval", text, pending=pending)
        if not result.ok:
            called()
            error = result.error or ErrorInfo(result.status, f"the call ended {result.status}")
            return run.end("error", f"{error.code}: {error.message}", result.data, error=error)
        if self._teacher is not None and run.search_id and run.context.subject is not None:
            self._teacher.accepted(run.search_id, run.context.subject, candidate.plugin_id,
                                   candidate.operation.id)  # fmt: skip
        operation = candidate.operation
        text = compose(result.data, operation.output_schema)
        if operation.post_process:
            try:
                written = await self._post_process(run, candidate, result.data)
            except OutOfTokens:  # the call ran: its output is still the answer's data
                called(notes=(*notes, "not post-processed: the token budget is spent"))
                return run.end("step_limit", text, result.data, limit="max_tokens")
            except ModelFailed as exc:
                called()
                return run.fail(exc.code, exc.message, result.data)
            made_up = unsupported(written, result.data, run.message)
            if made_up:
                notes.append("the model's answer was not used: the output does not hold "
                             + ", ".join(made_up[:5]))  # fmt: skip
            elif written.strip():
                text = written.strip()
        run.output = (text, result.data)
        run.known.append(known_line(candidate, choice.arguments, result.data))
        called()
        return run.end("answered", text, result.data) if choice.final else None

    async def _retrieve(self, run: _Run) -> tuple[Candidate, ...]:
        """The request's candidates, searched for once with the user's message alone —
        never with a tool's output — and off the event loop (search embeds the query)."""
        if run.candidates is None:
            search = self._search_for(run)
            # A pool of its own (discovery.offloop): in-process plugins use the default
            # one, and a burst of searches must not queue ahead of them.
            run.candidates = await off_loop(retrieve, search, run.message, run.k, run.can_see)
        return run.candidates

    def _hold(self, run: _Run, step: Callable[..., Step], choice: Choice, notes: list[str],
              repaired: bool) -> Answer:  # fmt: skip
        """A side effect chosen after tool output: not called, held for confirmation."""
        assert choice.candidate is not None and run.calls is not None
        candidate = choice.candidate
        pending = run.calls.hold(candidate, choice.arguments)
        step(
            choice,
            "pending_confirmation",
            repaired=repaired,
            notes=(*notes, "a write chosen after a tool output waits for your confirmation"),
        )
        text = (
            f"{candidate.plugin_id}.{candidate.operation.id} was chosen after a tool's "
            "output, so it has not run; it runs only if you confirm it"
            + (f" (action {pending['action_id']})." if pending.get("action_id") else ".")
        )
        return run.end("pending_confirmation", text, pending=pending)

    def _needs_input(self, run: _Run, candidate: Candidate, grounded: Grounded) -> Answer:
        first = grounded.missing[0]
        text = (f"{candidate.plugin_id}.{candidate.operation.id} was not called: "
                f"{grounded.question()}")  # fmt: skip
        error = ErrorInfo("argument_ungrounded", grounded.reason(),
                          {"pointer": first.pointer, "argument": first.name})  # fmt: skip
        return run.end("needs_input", text, error=error)

    async def confirm(self, receipt: str, *, subject: str | None = None,
                      roles: Sequence[str] | None = None) -> Result:  # fmt: skip
        """Run the side effect a ``pending_confirmation`` answer held back, by its
        receipt, for the subject it was held for (act.confirm)."""
        roles = Caller.of(subject, roles).roles
        context = CallContext(new_request_id(), subject, tuple(roles))
        if self._governance is None:
            error = ErrorInfo("invalid_receipt", "this yard keeps no approvals")
            return Result(status="error", error=error, request_id=context.request_id)
        try:
            return await confirm(self._executor, self._governance, receipt, context)
        except PlugyardError as exc:
            error = ErrorInfo(exc.code, exc.message)
            return Result(status="error", error=error, request_id=context.request_id)

    async def _judge(self, run: _Run, candidates: Sequence[Candidate]) -> tuple[Judged, ...]:
        async def ask(messages: tuple[Message, ...]) -> ChatAnswer:
            return await self._chat(run, messages, **verdict_options())

        try:
            return await judge(" ".join([run.message, *run.known[-1:]]), candidates, ask)
        except LlmError as exc:
            raise ModelFailed(exc.code, exc.message) from None

    async def _choose(
        self, run: _Run, candidates: Sequence[Candidate], repair: str | None
    ) -> Choice:
        # The scored method has chosen; an operation without parameters needs no answer.
        scored = run.method == "scored" and run.mode == "constrained"
        if scored and len(candidates) == 1 and takes_no_arguments(candidates[0].operation):
            return Choice(candidates[0], {})
        messages = routing_messages(run.message, candidates, run.known, repair)
        try:
            if run.mode == "tools":
                tool = route_tool(candidates)
                answer = await self._chat(run, messages, tools=(tool,))
                return read_tool_call(answer, candidates)
            try:
                schema = answer_schema(candidates, loose=run.loose)
                answer = await self._chat(run, messages, json_schema=schema, schema_name="route")
            except ModelFailed as exc:
                if not exc.schema_refused or run.loose:
                    raise
                # Once more with bare-object arguments: the executor validates them anyway.
                run.loose = True
                schema = answer_schema(candidates, loose=True)
                answer = await self._chat(run, messages, json_schema=schema, schema_name="route")
            return read_choice(answer.json, candidates)
        except LlmError as exc:
            raise ModelFailed(exc.code, exc.message) from None

    async def _post_process(self, run: _Run, candidate: Candidate, data: Any) -> str:
        instruction = candidate.operation.post_process_prompt
        answer = await self._chat(run, post_process_messages(run.message, instruction, data))
        return answer.text

    async def _chat(self, run: _Run, messages: tuple[Message, ...], **options: Any) -> ChatAnswer:
        if run.tokens >= run.max_tokens:
            raise OutOfTokens
        request = ChatRequest(messages, deadline_s=run.deadline_s, **options)
        started = time.perf_counter()
        run.llm_calls += 1
        try:
            answer = await run.model.chat(request)
        except (PlugyardError, TimeoutError, OSError) as exc:
            run.llm_ms += (time.perf_counter() - started) * 1000
            raise failure(exc) from None
        cost = answer.cost()
        run.tokens += int(cost["tokens"])
        run.llm_ms += float(cost["duration_ms"])
        return answer
