"""The routing flow (HomeClaw §5) over the one step loop (loop.py): retrieve → the model
decides → the arguments are grounded → the executor calls → the answer is composed.

The request is a transcript of one user message; the operations the caller may call
that retrieval finds for it are offered to the model as tools, and the model decides
through ``llm/calls.respond`` as it does for ``/v1/chat/completions`` (chat.py) — one
decision, which may hold up to ``max_steps`` calls, plus one repair round when an
argument was ungrounded or refused. The flow then answers from the outputs itself
(compose.py): a sentence, post-processed by the model when the operation asks.
``dry_run`` stops before the first call and answers with the plan.

The model never calls anything itself: its calls are read back against the tools
offered (the caller's rights decided them) and made through the executor with the
caller's context, so policy, approvals, idempotency, validation and audit apply as on
every other path. Every ending is an :class:`Answer` (outcomes.py), never an exception.

Retrieval searches with the user's message only, once per request: what a tool returned
never decides which operations are offered.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from plugyard.discovery.offloop import off_loop
from plugyard.discovery.query import CanSee, Filters, Match
from plugyard.errors import PlugyardError
from plugyard.execution.executor import Executor, new_request_id
from plugyard.execution.result import Result
from plugyard.governance.core import Governance
from plugyard.llm import ChatModel, LlmError, Message
from plugyard.routing.act import Calls, confirm
from plugyard.routing.choice import Candidate
from plugyard.routing.failures import check_request, refused
from plugyard.routing.loop import Ending, Loop, OnStep, OutOfTokens
from plugyard.routing.offer import TOOL_DATA_NOTE, Offer
from plugyard.routing.outcomes import Answer, Status
from plugyard.routing.ranked import Favoured, yard_parts
from plugyard.routing.retrieve import Search, Teacher, retrieve
from plugyard.routing.trace import Retrieved
from plugyard.runtimes.base import CallContext, ErrorInfo
from plugyard.telemetry import traced
from plugyard.types import Caller

Rights = Callable[[str | None, Sequence[str]], CanSee]

#: The answer's text is cut here; ``data`` keeps the output as the executor returned it.
MAX_ANSWER_CHARS = 16_000
DEFAULT_K = 5
DEFAULT_MAX_STEPS = 3
DEFAULT_MAX_TOKENS = 16_000
DEFAULT_DEADLINE_S = 60.0
NONE_TEXT = "None of the operations available to you fits this request."


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
        request_id: str | None = None,
        deadline_s: float = DEFAULT_DEADLINE_S,
        on_step: OnStep | None = None,
        dry_run: bool = False,
    ) -> Answer:
        """Route ``message`` for ``subject`` (no subject: the embedding application,
        with the admin role, as ``yard.call``). The same ``request_id`` again replays
        the calls that ran instead of making them twice (governed yards). ``max_steps``
        bounds the calls, ``max_tokens`` the tokens of every model call together,
        ``deadline_s`` the model's time; ``dry_run`` ends ``planned`` with the first
        call chosen (``data``: its plugin, operation and arguments), not made."""
        roles = Caller.of(subject, roles).roles
        context = CallContext(request_id or new_request_id(), subject, tuple(roles))
        problem = check_request(message, k, max_steps)
        if problem is not None:
            return refused(context, "invalid_request", problem)
        try:
            model = llm or self._llm()
        except (PlugyardError, ValueError) as exc:
            return refused(context, getattr(exc, "code", "llm_unavailable"), str(exc))
        text = message.strip()
        search, found = self._search_for(subject)
        can_see = self._rights(subject, roles)
        try:
            candidates = await self._retrieve(search, text, k, can_see)
            # Searched for apart from the whole request and not taught from (the
            # search's id names the whole request's search).
            parts = await off_loop(yard_parts, self._search, text, can_see)
        except PlugyardError as exc:
            return refused(context, exc.code, exc.message)
        held = {(c.plugin_id, c.operation.id) for c in candidates}
        candidates += tuple(c for c in parts if (c.plugin_id, c.operation.id) not in held)
        offer = Offer.of(candidates)
        retrieved = tuple(Retrieved(c.plugin_id, c.operation.id, c.score) for c in candidates)
        calls = Calls(self._executor, context, (text,), self._governance)

        def accepted(candidate: Candidate) -> None:
            if self._teacher is not None and found and subject is not None:
                self._teacher.accepted(found[-1], subject, candidate.plugin_id,
                                       candidate.operation.id)  # fmt: skip

        loop = Loop(model, calls, offer, "output", time.monotonic() + deadline_s,
                    retrieved=retrieved, max_calls=max_steps, max_tokens=max_tokens,
                    dry_run=dry_run, on_step=on_step, accepted=accepted,
                    request_text=text, favoured=_favoured(offer, parts))  # fmt: skip
        if not offer.tools:
            loop.record(None, "none", notes=("nothing relevant the caller may call",))
            return _answer(loop, context, Ending("none", NONE_TEXT))
        try:
            ending = await loop.run([Message("system", TOOL_DATA_NOTE), Message("user", text)])
        except OutOfTokens:
            ending = loop.answered("step_limit", limit="max_tokens")
        except LlmError as exc:
            data = loop.answered().data
            ending = Ending("error", f"{exc.code}: {exc.message}", data,
                            error=ErrorInfo(exc.code, exc.message))  # fmt: skip
        return _answer(loop, context, ending)

    def _search_for(self, subject: str | None) -> tuple[Search, list[str]]:
        """The request's search: as the subject when discovery may learn from it (the
        list then receives the search's id)."""
        teacher, found = self._teacher, list[str]()
        if teacher is None or subject is None:
            return self._search, found

        def search(query: str, k: int, filters: Filters) -> Sequence[Match]:
            assert teacher is not None and subject is not None
            matches = teacher.search(query, k, filters, subject)
            ident = getattr(matches, "search_id", None)
            if ident:
                found.append(ident)
            return matches

        return search, found

    @staticmethod
    async def _retrieve(search: Search, text: str, k: int, can_see: CanSee
                        ) -> tuple[Candidate, ...]:  # fmt: skip
        """The request's candidates, searched for once with the user's message alone —
        never with a tool's output — and off the event loop (search embeds the query).
        A pool of its own (discovery.offloop): in-process plugins use the default one,
        and a burst of searches must not queue ahead of them."""
        return await off_loop(retrieve, search, text, k, can_see)

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


def _favoured(offer: Offer, parts: Sequence[Candidate]) -> Favoured | None:
    """For a request of several needs, the first part's operation, with a call of each
    part's asked for beside the model's choice (ranked.py); ``None`` for one need, which
    the loop favours by retrieval's first."""
    if not parts:
        return None
    names = {(c.plugin_id, c.operation.id): name for name, c in offer.by_name.items()}
    planned = tuple(names[(c.plugin_id, c.operation.id)] for c in parts)
    return Favoured(planned[0], parts=planned)


def _answer(loop: Loop, context: CallContext, ending: Ending) -> Answer:
    # The ask flow composes its own answer: the loop never ends it with the model's text.
    status: Status = "answered" if ending.status in ("text", "client") else ending.status  # type: ignore[assignment]
    text, data = ending.text, ending.data
    if status == "none" and not text:
        text = NONE_TEXT
    if len(text) > MAX_ANSWER_CHARS:
        text = text[:MAX_ANSWER_CHARS] + f"\n…[cut: {len(text) - MAX_ANSWER_CHARS} more]"
    cost = {"llm_calls": loop.llm_calls, "tokens": loop.tokens,
            "duration_ms": round(loop.llm_ms, 3), "tool_calls": loop.calls.count}  # fmt: skip
    return Answer(status, text, data, error=ending.error, steps=tuple(loop.steps), cost=cost,
                  request_id=context.request_id, pending=ending.pending,
                  limit=ending.limit)  # fmt: skip
