"""Role-based access control: a policy document compiled for the evaluator.

A :class:`Rbac` resolves, once per document, who inherits what (subjects' roles, roles'
parents), and, once per subject asking, which grants can reach it — a
:class:`~plugyard.governance.policy.sight.Sight`, the one evaluator. The decision, in the
order that makes the strictest outcome win:

1. an unknown subject → deny;
2. a matching ``deny`` grant → deny (deny wins over every allow);
3. a permission the plugin requires (Shu ``requires_permission()``) that the caller
   lacks → deny;
4. a matching ``allow_with_approval`` grant → allow_with_approval;
5. a matching ``allow`` grant, or the Shu permission ``plugin:<id>`` → allow (raised to
   allow_with_approval when the operation itself ``requires_approval``);
6. nothing matched → deny (default deny).

Why by hand, not a policy engine: the model is six rules over exact-or-``*`` patterns
and a role tree at most eight deep; written out they cost a few microseconds a decision
where a general matcher language cost a millisecond, and need no lock.
"""

from __future__ import annotations

from collections.abc import Iterable

from plugyard.governance.policy.base import Decision
from plugyard.governance.policy.document import Grant, PolicyDocument
from plugyard.governance.policy.sight import Match, Sight, wildcard_match
from plugyard.types import Caller

#: Sights kept per document (one per subject asking); past it they are made afresh.
_SIGHTS_KEPT = 1024


class Rbac:
    """One compiled policy document. Immutable: a new document is a new ``Rbac``."""

    def __init__(self, document: PolicyDocument) -> None:
        self.document = document
        self.version = document.digest()
        parents: dict[str, list[str]] = {}
        for name, subject_entry in document.subjects.items():
            parents.setdefault(f"subject:{name}", []).extend(
                f"role:{r}" for r in subject_entry.roles
            )
        for name, role_entry in document.roles.items():
            parents.setdefault(f"role:{name}", []).extend(f"role:{p}" for p in role_entry.inherits)
        self._parents = parents
        self._grants = tuple(
            (grant, Match.of(grant, number)) for number, grant in enumerate(document.grants, 1)
        )
        self._sights: dict[Caller, Sight] = {}

    def known(self, subject: Caller) -> bool:
        """A subject the document lists, or one a surface vouched for with roles."""
        return (subject.subject or "anonymous") in self.document.subjects or bool(subject.roles)

    def roles_of(self, subject: Caller) -> frozenset[str]:
        """Every role the subject holds, inherited ones included."""
        found: set[str] = set()
        for principal in self._principals(subject):
            found.update(r[5:] for r in self._reach(principal) if r.startswith("role:"))
        return frozenset(found)

    def permissions_of(self, subject: Caller) -> frozenset[str]:
        held = set(subject.permissions)
        entry = self.document.subjects.get(subject.subject or "anonymous")
        if entry is not None:
            held.update(entry.permissions)
        for role in self.roles_of(subject):
            role_entry = self.document.roles.get(role)
            if role_entry is not None:
                held.update(role_entry.permissions)
        return frozenset(held)

    def decide(
        self,
        subject: Caller,
        plugin_id: str,
        operation: str,
        *,
        verb: str = "call",
        required_permissions: Iterable[str] = (),
        requires_approval: bool = False,
        operation_effect: str = "read",
    ) -> Decision:
        found = self.sight(subject).verdict(
            plugin_id, operation, verb, required_permissions, operation_effect, requires_approval
        )
        match found.found:
            case "unknown":
                reason = f"unknown subject {subject.subject!r}"
            case "deny":
                reason = f"denied by grant #{found.grant}"
            case "permission":
                reason = f"missing permission {found.permission!r}"
            case "approval":
                reason = f"approval required by grant #{found.grant}"
            case "allow":
                reason = f"allowed by grant #{found.grant}"
            case "plugin":
                reason = f"allowed by the permission 'plugin:{plugin_id}'"
            case _:
                reason = "no grant matches (default deny)"
        if found.found in ("allow", "plugin") and found.outcome == "allow_with_approval":
            reason += "; the operation requires approval"
        return Decision(found.outcome, reason, self.version)

    def sight(self, subject: Caller) -> Sight:
        """What ``subject`` may do: the grants reaching it, in the order a decision
        meets them — by the first principal reaching each (the subject itself, then each
        role a surface vouched for), then by number: the reason names that grant."""
        made = self._sights.get(subject)
        if made is not None:
            return made
        principals = self._principals(subject)
        reaches = [self._reach(p) for p in principals]
        ranked: list[tuple[int, int, Match]] = []
        for grant, match in self._grants:
            rank = next(
                (i for i, reach in enumerate(reaches) if grant.to == "*" or grant.to in reach),
                None,
            )
            if rank is not None:
                ranked.append((rank, match.number, match))
        ranked.sort(key=lambda entry: entry[:2])
        reaching = [match for _, _, match in ranked]
        kinds = {m.number: g.effect for g, m in self._grants}
        made = Sight(
            version=self.version,
            known=self.known(subject),
            held=self.permissions_of(subject),
            denies=tuple(m for m in reaching if kinds[m.number] == "deny"),
            approvals=tuple(m for m in reaching if kinds[m.number] == "allow_with_approval"),
            allows=tuple(m for m in reaching if kinds[m.number] == "allow"),
        )
        if len(self._sights) >= _SIGHTS_KEPT:
            self._sights.clear()
        self._sights[subject] = made
        return made

    def _principals(self, subject: Caller) -> list[str]:
        return [f"subject:{subject.subject or 'anonymous'}", *(f"role:{r}" for r in subject.roles)]

    def _reach(self, principal: str) -> frozenset[str]:
        """``principal`` and everything it inherits from (the document refuses cycles)."""
        seen = {principal}
        todo = [principal]
        while todo:
            for parent in self._parents.get(todo.pop(), ()):
                if parent not in seen:
                    seen.add(parent)
                    todo.append(parent)
        return frozenset(seen)


def grants_for(document: PolicyDocument, plugin_id: str) -> list[Grant]:
    """The grants whose plugin pattern matches ``plugin_id`` (for ``policy check``)."""
    return [g for g in document.grants if wildcard_match(plugin_id, g.plugin)]


__all__ = ["Rbac", "grants_for", "wildcard_match"]
