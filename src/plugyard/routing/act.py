"""What happens between the model's choice and the executor, for both flows (the routing
flow and the OpenAI-compatible chat): ground the arguments, hold back a side effect
that tool output may have chosen, never repeat an identical call, call.

- **Ground** (llm/grounding.py): an optional argument the request does not support is
  dropped; a required one is reported, so the flow can ask the model once more with the
  reason and then end ``needs_input``.
- **Hold back**: a write or destructive operation chosen after a tool output in the
  same request is not called. It ends the request ``pending_confirmation`` with an
  approval receipt from the yard's approval desk (governance/approvals.py), bound to the
  exact request, whatever the policy says of the operation: the output of a tool is
  data, and data never chooses a side effect. :meth:`Calls.confirm` runs it once the
  caller confirms.
- **Once per need**: a call identical to one already made in this request (same
  operation, same arguments) is not made again; the flow ends with the result it has.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from plugyard.errors import GovernanceError
from plugyard.execution.executor import CallRequest, Executor
from plugyard.execution.result import Result
from plugyard.governance.approvals import receipt_hash
from plugyard.governance.core import Governance
from plugyard.governance.digest import request_digest
from plugyard.llm.grounding import (
    Evidence,
    Ungrounded,
    check,
    described_text,
    named_default,
    named_members,
    normalise,
)
from plugyard.llm.stated import letters_of
from plugyard.routing.choice import Candidate
from plugyard.routing.retrieve import takes_values
from plugyard.runtimes.base import CallContext

#: Operations with these effects wait for the caller's confirmation when tool output
#: came before them in the request.
SIDE_EFFECTS = frozenset({"write", "destructive"})
CONFIRM_REASON = "chosen after a tool output in this request; it runs only when you confirm"


@dataclass(frozen=True, slots=True)
class Grounded:
    """The arguments to call with, what was dropped, and what is missing."""

    arguments: Mapping[str, Any]
    dropped: tuple[Ungrounded, ...] = ()
    missing: tuple[Ungrounded, ...] = ()
    #: Optional arguments the model left out, set to the one enum member the request
    #: names (llm/grounding.named_members).
    filled: tuple[str, ...] = ()

    def notes(self) -> tuple[str, ...]:
        return tuple(f"dropped {u.pointer}: {u.reason}" for u in self.dropped) + tuple(
            f"set {name} to {self.arguments[name]!r}, which the request names"
            for name in self.filled
        )

    def reason(self) -> str:
        return "; ".join(f"{u.pointer}: {u.reason}" for u in self.missing)

    def question(self) -> str:
        """What the caller is asked for."""
        names = ", ".join(dict.fromkeys(u.name for u in self.missing))
        return f"Please give {names}: {self.reason()}."


def is_side_effect(candidate: Candidate) -> bool:
    return candidate.operation.effect in SIDE_EFFECTS


def _within(smaller: Mapping[str, Any], larger: Mapping[str, Any]) -> bool:
    """Every argument of ``smaller`` is in ``larger`` with the same value."""
    return all(name in larger and larger[name] == value for name, value in smaller.items())


def _reworded(one: Mapping[str, Any], other: Mapping[str, Any], said: Evidence) -> bool:
    """The same arguments, ``other``'s texts differing from ``one``'s only in what is
    neither letter nor digit, and not as the request writes them: asked for "Add 345,
    678 and 912", a small model wrote the sum, then `345 - 678 - 912` and `345 * 678 *
    912` in the same answer ("6*7 and 6+7" asks for both)."""
    return one.keys() == other.keys() and all(
        value == other[name]
        or (isinstance(value, str) and isinstance(other[name], str)
            and letters_of(value) == letters_of(other[name]) and not said.has_text(other[name]))
        for name, value in one.items()
    )  # fmt: skip


@dataclass(slots=True)
class Calls:
    """The calls of one request, and the evidence its arguments must come from."""

    executor: Executor
    context: CallContext
    texts: tuple[str, ...]
    governance: Governance | None = None
    outputs: list[Any] = field(default_factory=list)
    made: dict[str, Result] = field(default_factory=dict)
    count: int = 0
    #: The calls made for the model's current answer (``next_answer`` starts anew).
    _this_answer: list[tuple[Candidate, dict[str, Any], Result]] = field(default_factory=list)

    def evidence(self) -> Evidence:
        return Evidence.of(self.texts, self.outputs)

    def ground(self, candidate: Candidate, arguments: Mapping[str, Any]) -> Grounded:
        operation = candidate.operation
        described = described_text(operation.description or candidate.description,
                                   operation.examples, operation.parameters)  # fmt: skip
        return self.grounded(arguments, operation.parameters, self.evidence(), described,
                             yard=True)  # fmt: skip

    def grounded(self, arguments: Mapping[str, Any], parameters: Mapping[str, Any],
                 evidence: Evidence, described: str = "", *,
                 yard: bool = False) -> Grounded:  # fmt: skip
        """``arguments`` checked against ``evidence`` under the tool's ``parameters``
        schema: a yard operation's (``yard``), or a client tool's. A yard operation's
        default that would answer for another place than the one the request names is
        replaced by it (grounding.named_default); a client's call goes back as the
        model wrote it, the client's defaults its own."""
        arguments = normalise(arguments, parameters, self.texts)  # the tool's form
        arguments, filled = named_members(arguments, parameters, self.texts)
        if yard:
            arguments, defaulted = named_default(arguments, parameters, self.texts)
            filled += defaulted
        found = check(arguments, parameters, evidence, described)
        missing = tuple(u for u in found if u.required)
        dropped = tuple(u for u in found if not u.required)
        gone = {u.name for u in dropped}
        kept = {k: v for k, v in arguments.items() if k not in gone}
        return Grounded(kept, dropped, missing, tuple(n for n in filled if n in kept))

    def after_output(self) -> bool:
        return bool(self.outputs)

    def repeat(self, candidate: Candidate, arguments: Mapping[str, Any]) -> Result | None:
        """The result of a call already made in this request for the same need: an
        identical call, or one in the same model answer to the same operation
        that only adds optional arguments to it or leaves some out, when the operation
        requires arguments ("7 squared plus 3 squared" asked as two calls, the second
        with a ``precision``), or whose texts differ from it only in operators and
        punctuation. Across answers only an identical call repeats: a later answer may
        page on with an optional argument."""
        found = self.made.get(self._digest(candidate, arguments))
        if found is not None or not takes_values(candidate.operation):
            return found
        if not self._this_answer:
            return None
        said = self.evidence()  # once: each earlier call is weighed against it
        for earlier, given, result in self._this_answer:
            same = (earlier.plugin_id, earlier.operation.id) == (
                candidate.plugin_id, candidate.operation.id)  # fmt: skip
            if same and (
                _within(given, arguments)
                or _within(arguments, given)
                or _reworded(given, arguments, said)
            ):
                return result
        return None

    def hold(self, candidate: Candidate, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """A side effect held back for the caller to confirm: an approval receipt bound to
        this exact request when the yard is governed, else the request itself."""
        preview = {"plugin": candidate.plugin_id, "operation": candidate.operation.id,
                   "subject": self.context.subject, "params": dict(arguments),
                   "reason": CONFIRM_REASON}  # fmt: skip
        governance = self.governance
        if governance is None:
            return {"action_id": None, "receipt": None, "preview": preview}
        pending = governance.approvals.request(
            digest=self._digest(candidate, arguments), subject=self.context.subject,
            plugin_id=candidate.plugin_id, operation=candidate.operation.id, preview=preview,
            policy_version=None, ttl_s=governance.approval_ttl_s(),
        )  # fmt: skip
        return pending.to_dict()

    async def call(self, candidate: Candidate, arguments: Mapping[str, Any],
                   key: str | None = None, receipt: str | None = None) -> Result:  # fmt: skip
        context = CallContext(self.context.request_id, self.context.subject, self.context.roles,
                              idempotency_key=key)  # fmt: skip
        self.count += 1
        request = CallRequest(candidate.plugin_id, candidate.operation.id, dict(arguments),
                              context, approval_receipt=receipt)  # fmt: skip
        result = await self.executor.call(request)
        if result.ran_ok:
            self.made[self._digest(candidate, arguments)] = result
            self.outputs.append(result.data)
            self._this_answer.append((candidate, dict(arguments), result))
        return result

    def next_answer(self) -> None:
        """Calls from here on come from the model's next answer."""
        self._this_answer = []

    def _digest(self, candidate: Candidate, arguments: Mapping[str, Any]) -> str:
        return request_digest(candidate.plugin_id, candidate.operation.id, dict(arguments),
                              self.context.subject)  # fmt: skip


async def confirm(executor: Executor, governance: Governance, receipt: str,
                  context: CallContext) -> Result:  # fmt: skip
    """Run a side effect the caller confirms, by the receipt ``pending_confirmation``
    gave it: only its own, only the exact request held back, at most once. The call
    then goes through the executor as any other, so an operation the policy wants an
    approver for still waits for one (``pending_approval``)."""
    desk = governance.approvals
    row = desk.repository.by_receipt(receipt_hash(receipt)) if isinstance(receipt, str) else None
    preview = row.preview if row is not None else None
    if row is None or not isinstance(preview, Mapping) or preview.get("reason") != CONFIRM_REASON:
        raise GovernanceError("not a confirmation receipt", code="invalid_receipt")
    if row.subject != context.subject:
        raise GovernanceError("the receipt was issued for another request", code="invalid_receipt")
    params = preview.get("params")
    if not isinstance(params, Mapping):
        raise GovernanceError("not a confirmation receipt", code="invalid_receipt")
    digest = request_digest(row.plugin_id, row.operation, dict(params), context.subject)
    if row.state == "pending":  # confirming is the caller's own decision, not an approver's
        desk.repository.decide(row.id, "approved", context.subject or "application",
                               time.time(), "confirmed by the caller")  # fmt: skip
    desk.redeem(receipt, digest)
    request = CallRequest(row.plugin_id, row.operation, dict(params), context)
    return await executor.call(request)
