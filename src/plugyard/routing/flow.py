"""The routing flow (HomeClaw §5): retrieve → the model chooses → the executor calls →
post-process when the operation asks → answer; up to ``max_steps`` calls.

How the model chooses is decide.py's: by default it judges each candidate and its
verdicts are fused with retrieval's scores, then only the chosen operation's arguments
are asked for. ``dry_run`` stops before the call and answers with the plan.

The model never calls anything itself: its constrained answer is read back against the
candidates (the caller's rights decided them) and turned into an executor call with the
caller's context, so policy, approvals, idempotency, validation and audit apply as on
every other path. Every ending is an :class:`Answer` (outcomes.py), never an exception.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from plugyard.discovery.offloop import off_loop
from plugyard.discovery.query import CanSee, Filters, Match
from plugyard.errors import PlugyardError
from plugyard.execution.executor import CallRequest, Executor, new_request_id
from plugyard.execution.result import Result
from plugyard.llm import ChatAnswer, ChatModel, ChatRequest, LlmError, Message
from plugyard.routing.choice import (
    Candidate,
    Choice,
    answer_schema,
    read_choice,
    read_tool_call,
    route_tool,
    takes_no_arguments,
)
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
from plugyard.routing.prompt import known_line, post_process_messages, render, routing_messages
from plugyard.routing.retrieve import Search, Teacher, retrieve
from plugyard.routing.trace import Retrieved, Step
from plugyard.runtimes.base import CallContext, ErrorInfo
from plugyard.store.keys import ADMIN_ROLE

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
    tool_calls: int = 0
    output: tuple[str, Any] | None = None  # the last step's answer text and data
    loose: bool = False  # the model refused a schema with parameter schemas inside
    search_id: str | None = None  # the last step's search, for discovery to learn from

    def record(self, step: Step) -> None:
        self.steps.append(step)
        if self.on_step is not None:
            self.on_step(step)

    def end(self, status: Status, text: str = "", data: Any = None, **extra: Any) -> Answer:
        if len(text) > MAX_ANSWER_CHARS:
            text = text[:MAX_ANSWER_CHARS] + f"\n…[cut: {len(text) - MAX_ANSWER_CHARS} more]"
        cost = {"llm_calls": self.llm_calls, "tokens": self.tokens,
                "duration_ms": round(self.llm_ms, 3), "tool_calls": self.tool_calls}  # fmt: skip
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
    ) -> None:
        self._executor, self._search, self._rights, self._llm = executor, search, rights, llm
        self._teacher = teacher

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
        if roles is None:
            roles = (ADMIN_ROLE,) if subject is None else ()
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

        def step(choice: Choice | None, status: str, **extra: Any) -> Step:
            made = Step(number, retrieved, choice.to_dict() if choice else None, status,
                        llm_calls=run.llm_calls - calls0, tokens=run.tokens - tokens0,
                        ms=(time.perf_counter() - started) * 1000, **extra)  # fmt: skip
            run.record(made)
            return made

        query = " ".join([run.message, *run.known[-1:]])
        retrieved: tuple[Retrieved, ...] = ()
        try:
            # Off the loop: the query's embedding and the search are CPU work that would
            # hold every other request of this process until they finish.
            search = self._search_for(run)
            candidates = await off_loop(retrieve, search, query, run.k, run.can_see)
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
            if run.dry_run:
                step(choice, "planned", repaired=repair is not None, notes=tuple(notes))
                planned = choice.to_dict()
                text = f"would call {planned['plugin']}.{planned['operation']}"
                return run.end("planned", text, planned)
            key = f"{run.context.request_id}:{number}.{attempt}"
            result = await self._call(run, choice.candidate, choice, key)
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

        candidate = choice.candidate
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
        if candidate.operation.post_process:
            try:
                text = await self._post_process(run, candidate, result.data)
            except OutOfTokens:  # the call ran: its output is still the answer's data
                called(notes=(*notes, "not post-processed: the token budget is spent"))
                return run.end("step_limit", render(result.data), result.data, limit="max_tokens")
            except ModelFailed as exc:
                called()
                return run.fail(exc.code, exc.message, result.data)
        else:
            text = render(result.data)
        run.output = (text, result.data)
        run.known.append(known_line(candidate, choice.arguments, result.data))
        called()
        return run.end("answered", text, result.data) if choice.final else None

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

    async def _call(self, run: _Run, candidate: Candidate, choice: Choice, key: str) -> Result:
        # The key makes a retried ask (same request id) replay this step, not rerun it.
        context = CallContext(run.context.request_id, run.context.subject, run.context.roles,
                              idempotency_key=key)  # fmt: skip
        run.tool_calls += 1
        request = CallRequest(candidate.plugin_id, candidate.operation.id,
                              dict(choice.arguments), context)  # fmt: skip
        return await self._executor.call(request)

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
