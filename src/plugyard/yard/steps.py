"""The call path's order, as data: which steps a yard's executor runs, outermost first.

A step's ``before`` runs in this order and its ``after`` in the reverse one, so the
path reads: resolve → policy → approval → idempotency → receipt → secrets →
identities → bindings → budget → validate → redeem → host → *the runtime* → scrub →
complete → audit. ``audit``, ``complete`` and ``scrub`` only act on the way out;
listing them first is what lets them see every call, whichever step refused it.

A yard without governance runs the short list (:data:`BARE`): nothing to decide,
approve, claim or audit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from plugyard.execution.steps import (
    Budget,
    PluginLookup,
    Resolve,
    Step,
    UserStep,
    Validate,
    guarded,
    placed,
    traced_steps,
)
from plugyard.execution.validation import Validators

if TYPE_CHECKING:
    from plugyard.governance.audit.event import AuditSink
    from plugyard.governance.core import Governance
    from plugyard.governance.policy.base import Policy

#: The steps of a governed yard, outermost first.
GOVERNED = (
    "audit", "complete", "scrub",
    "resolve", "policy", "approval", "idempotency", "receipt", "secrets", "identities",
    "bindings", "budget", "validate", "redeem", "host",
)  # fmt: skip
#: The steps of a yard without governance.
BARE = ("resolve", "budget", "validate")
#: Steps nothing may be placed outside of: every call is audited, scrubbed and completed,
#: and a user's step sees a resolved plugin and operation.
FIXED = frozenset({"audit", "complete", "scrub", "resolve"})


@dataclass(frozen=True, slots=True)
class Placement:
    """A user's step and where it goes: just before (outside) or just after (inside) the
    step named; with neither, innermost (after ``validate``'s neighbours: just before
    the parameters are checked)."""

    step: UserStep
    before: str | None = None
    after: str | None = None


def call_path(
    plugins: PluginLookup,
    *,
    policy: Policy | None = None,
    governance: Governance | None = None,
    audit: AuditSink | None = None,
    added: Sequence[Placement] = (),
) -> list[Step]:
    """The steps of an executor over ``plugins``: with ``governance``, all of
    :data:`GOVERNED` (``policy`` defaults to allowing everything); without, the policy
    and the audit sink given, if any, around :data:`BARE`; then the user's steps."""
    steps: list[Step] = []
    resolve = Resolve(plugins)
    if governance is not None:
        from plugyard.governance.approvals import ApprovalStep, ReceiptStep, RedeemStep
        from plugyard.governance.audit.step import AuditStep
        from plugyard.governance.bindings import BindingsStep
        from plugyard.governance.host.step import HostStep
        from plugyard.governance.idempotency import CompleteStep, IdempotencyStep
        from plugyard.governance.identities.step import IdentitiesStep
        from plugyard.governance.policy.base import AllowAll
        from plugyard.governance.policy.step import PolicyStep
        from plugyard.governance.secrets.step import ScrubStep, SecretsStep

        rules = PolicyStep(policy or AllowAll())
        resolve.sees = rules.sees
        vault, ledger = governance.vault, governance.idempotency
        assert governance.identities is not None
        steps = [
            AuditStep(audit if audit is not None else governance.audit),
            CompleteStep(ledger),
            ScrubStep(vault.redactor),
            resolve,
            rules,
            ApprovalStep(governance, vault.redactor.scrub_data, governance.approval_ttl_s),
            IdempotencyStep(ledger),
            ReceiptStep(governance),
            SecretsStep(vault),
            IdentitiesStep(governance.identities),
            BindingsStep(vault),
            Budget(),
            Validate(Validators()),
            RedeemStep(governance),
            HostStep(governance),
        ]
    else:
        if audit is not None:
            from plugyard.governance.audit.step import AuditStep

            steps.append(AuditStep(audit))
        steps.append(resolve)
        if policy is not None:
            from plugyard.governance.policy.step import PolicyStep

            rules = PolicyStep(policy)
            resolve.sees = rules.sees
            steps.append(rules)
        steps += [Budget(), Validate(Validators())]
    for placement in added:
        steps = with_step(steps, placement)
    return traced_steps(steps)


def with_step(steps: Sequence[Step], placement: Placement) -> list[Step]:
    """``steps`` with a user's step placed (default: just before ``validate``, so it may
    rewrite the arguments that are then checked)."""
    step = guarded(placement.step)
    before, after = placement.before, placement.after
    if before is None and after is None:
        before = "validate"
    names = [s.name for s in steps]
    # A governed step this yard does not run (a bare yard has no ``idempotency``): the
    # place it would have, between the steps it does run.
    if before is not None and before not in names and before in GOVERNED:
        later = [n for n in GOVERNED[GOVERNED.index(before) + 1 :] if n in names]
        if not later:
            return placed(steps, step, fixed=FIXED)
        before = later[0]
    if after is not None and after not in names and after in GOVERNED:
        earlier = [n for n in GOVERNED[: GOVERNED.index(after)] if n in names]
        after = earlier[-1] if earlier else None
    if (after is not None and after in FIXED) or (before is None and after is None):
        # Inside the fixed steps, whichever of them is named: after ``audit`` is after
        # everything a user's step may not precede.
        after = [n for n in names if n in FIXED][-1]
    return placed(steps, step, before=before, after=after, fixed=FIXED)
