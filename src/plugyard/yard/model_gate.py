"""The yard's chat model is a governed resource: one gate every model-using flow passes.

A request that would reach the yard's model — a routed ask, a chat completion, a
reasoning request whose budget allows model calls, a source upload normalised by
model-backed plugins — is admitted here, before anything runs, on three counts:

1. the right: the policy's reserved object ``model`` with verb ``use``
   (governance/policy/document.py); the starter policy gives it to ``admin`` and ``reader``;
2. the rate: requests per minute and subject, from the store's fleet-wide token buckets
   (store/rate_buckets.py), so N per minute holds across replicas;
3. the input caps: each text the caller sends is at most ask's 8,000 characters, and a
   conversation at most :data:`MAX_CONVERSATION_CHARS` in all.

The embedding application (no subject: :attr:`plugyard.types.Caller.application`) passes
on the right and the rate: it owns the model. A flow
given a model of the caller's own (``llm=``) does not reach the yard's and is not gated.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from plugyard.errors import ModelRefused
from plugyard.governance.policy.document import MODEL_OBJECT, MODEL_OPERATION, MODEL_VERB
from plugyard.llm import ChatModel
from plugyard.routing import Answer, Router
from plugyard.routing.chat import ChatFlow, Completion, Conversation
from plugyard.routing.failures import MAX_MESSAGE_CHARS, check_request
from plugyard.routing.flow import DEFAULT_K, DEFAULT_MAX_STEPS
from plugyard.runtimes.base import ErrorInfo
from plugyard.store.rate_buckets import RateBuckets
from plugyard.types import Caller

if TYPE_CHECKING:
    from plugyard.governance.policy.book import PolicyBook

#: A conversation's texts together (system, history, tool outputs the client sends).
MAX_CONVERSATION_CHARS = 4 * MAX_MESSAGE_CHARS
#: The buckets' owner: a plugin id never holds white space, so no plugin's own
#: ``host.rate_limit`` bucket can be this one.
_BUCKETS_OF = "yard model"

#: ``(pointer, text)``: a text bound for the model, and where the request holds it.
Texts = Sequence[tuple[str, str]]


class ModelGate:
    """Admits or refuses (:class:`~plugyard.errors.ModelRefused`) a model request."""

    def __init__(
        self,
        policy: Callable[[], PolicyBook | None],
        buckets: RateBuckets,
        per_minute: int,
    ) -> None:
        self._policy, self._buckets, self.per_minute = policy, buckets, per_minute

    def may_use(self, subject: str | None, roles: Sequence[str]) -> bool:
        """Whether the policy in force lets ``subject`` use the model (ungoverned: yes)."""
        book = self._policy()
        who = Caller.of(subject, roles)
        if book is None or who.application:
            return True
        return book.ask(who, MODEL_OBJECT, MODEL_OPERATION, MODEL_VERB).outcome == "allow"

    def check(self, subject: str | None, roles: Sequence[str]) -> None:
        """The right alone (listing the model spends nothing)."""
        if not self.may_use(subject, roles):
            raise ModelRefused(
                "the policy does not let this caller use the model "
                f"(a grant of {MODEL_OBJECT!r} with verb {MODEL_VERB!r})",
                code="permission_denied",
                details={"object": MODEL_OBJECT, "verb": MODEL_VERB},
            )

    def admit(self, subject: str | None, roles: Sequence[str] | None, texts: Texts = ()) -> None:
        """Admit one request that reaches the model: the caps first (nothing is spent on
        a request refused for its size), then the right, then one token of the rate."""
        _caps(texts)
        who = Caller.of(subject, roles)
        if who.application:
            return
        assert subject is not None  # a subject's request: its right, then its rate
        self.check(subject, who.roles)
        if self.per_minute <= 0:
            return
        rate = self.per_minute / 60.0
        if not self._buckets.take(_BUCKETS_OF, subject, 1.0, float(self.per_minute), rate):
            # Under one token is left, so one comes back within 1/rate seconds.
            retry = max(1, math.ceil(1.0 / rate))
            raise ModelRefused(
                f"over {self.per_minute} model requests a minute; retry in {retry} s",
                code="rate_limited",
                details={"retry_after_s": retry, "limit_per_minute": self.per_minute},
            )


def _caps(texts: Texts) -> None:
    total = 0
    for pointer, text in texts:
        total += len(text)
        if len(text) > MAX_MESSAGE_CHARS:
            raise _too_large(pointer, len(text), MAX_MESSAGE_CHARS)
    if total > MAX_CONVERSATION_CHARS:
        pointer = texts[0][0].rsplit("/", 2)[0] if texts else ""
        raise _too_large(pointer, total, MAX_CONVERSATION_CHARS)


def _too_large(pointer: str, chars: int, limit: int) -> ModelRefused:
    message = f"{pointer or '/'}: {chars} characters for the model; at most {limit}"
    fault = {"pointer": pointer, "message": message}
    return ModelRefused(
        message,
        code="input_too_large",
        details={"errors": [fault], "limit_chars": limit, "chars": chars},
    )


class GatedRouter(Router):
    """The routing flow behind the gate: a refusal is an answer, as every ending of an
    ask is (``status: error`` with the gate's code and details)."""

    def __init__(self, *args: Any, gate: ModelGate, **options: Any) -> None:
        super().__init__(*args, **options)
        self.gate = gate

    async def ask(self, *args: Any, **options: Any) -> Answer:
        message = args[0] if args else options.get("message")
        # A malformed request (ask's own caps included) is refused by the flow as
        # ``invalid_request`` before the model is near: nothing to admit.
        if options.get("llm") is None and _well_formed(message, options):
            text = message if isinstance(message, str) else ""
            try:
                self.gate.admit(options.get("subject"), options.get("roles"),
                                [("/message", text)])  # fmt: skip
            except ModelRefused as exc:
                return Answer(
                    "error",
                    f"{exc.code}: {exc.message}",
                    error=ErrorInfo(exc.code, exc.message, exc.details),
                    request_id=str(options.get("request_id") or ""),
                )
        return await super().ask(*args, **options)


def _well_formed(message: object, options: dict[str, Any]) -> bool:
    k, steps = options.get("k", DEFAULT_K), options.get("max_steps", DEFAULT_MAX_STEPS)
    return check_request(message, k, steps) is None


class GatedChatFlow(ChatFlow):
    """The chat flow behind the gate: a refusal raises, as a model that fails does."""

    def __init__(self, *args: Any, gate: ModelGate, **options: Any) -> None:
        super().__init__(*args, **options)
        self.gate = gate

    def model_for(self, subject: str | None, roles: Sequence[str]) -> ChatModel:
        """The yard's model, for a caller with the right to use it."""
        self.gate.check(subject, roles)
        return self.model()

    async def complete(self, *args: Any, **options: Any) -> Completion:
        conversation = args[0] if args else options.get("conversation")
        texts = []
        if isinstance(conversation, Conversation):
            texts = [(f"/messages/{i}/content", m.content or "")
                     for i, m in enumerate(conversation.messages)]  # fmt: skip
        self.gate.admit(options.get("subject"), options.get("roles"), texts)
        return await super().complete(*args, **options)
