"""The policy step of the call path: the decision (allow / deny / allow_with_approval)."""

from __future__ import annotations

from plugyard.execution.steps import NOTHING, Call, refuse
from plugyard.governance.policy.base import ALLOW_ALL, AllowAll, Decision, Policy
from plugyard.registry.model import RegisteredPlugin
from plugyard.runtimes.base import CallContext, Outcome

#: Where the decision is kept on the call (the approval and audit steps read it).
DECISION = "policy"


def decision_of(call: Call) -> Decision | None:
    decision: Decision | None = call.state.get(DECISION)
    return decision


class PolicyStep:
    """Asks the policy about the call; ``deny`` refuses it (``permission_denied``)."""

    name = "policy"
    after = NOTHING

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self._allow_all = isinstance(policy, AllowAll)

    def before(self, call: Call) -> Outcome | None:
        plugin, operation = call.plugin, call.operation
        assert plugin is not None and operation is not None
        if self._allow_all:
            decision = ALLOW_ALL  # the question is trivial; skip building a Caller
        else:
            context = call.context
            subject = context.caller
            decision = self.policy.decide(subject, plugin.id, operation.id, call.arguments)
        call.state[DECISION] = decision
        if decision.outcome == "deny":
            return refuse("permission_denied", decision.reason)
        return None

    def sees(self, context: CallContext, plugin: RegisteredPlugin) -> bool:
        """Whether the caller may call some operation of ``plugin`` (and so learn of it)."""
        subject = context.caller
        return any(
            self.policy.decide(subject, plugin.id, op.id, {}).outcome != "deny"
            for op in plugin.descriptor.operations
        )
