"""Role-based access control on pycasbin: a policy document compiled into an enforcer.

Why pycasbin: it is the maintained, widely used Python implementation of the Casbin
model language, and it gives plugyard role inheritance (``g``) and a matcher language
for free; plugyard adds only what Casbin's effects cannot say — the third outcome,
``allow_with_approval`` — by asking once per outcome kind, in the order that makes the
strictest one win:

1. an unknown subject → deny;
2. a matching ``deny`` grant → deny (deny wins over every allow);
3. a permission the plugin requires (Shu ``requires_permission()``) that the caller
   lacks → deny;
4. a matching ``allow_with_approval`` grant → allow_with_approval;
5. a matching ``allow`` grant, or the Shu permission ``plugin:<id>`` → allow (raised to
   allow_with_approval when the operation itself ``requires_approval``);
6. nothing matched → deny (default deny).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable

import casbin  # type: ignore[import-untyped]
from casbin.model import Model  # type: ignore[import-untyped]

from plugyard.governance.policy.base import Decision, Subject
from plugyard.governance.policy.document import Grant, PolicyDocument
from plugyard.governance.policy.sight import Match, Sight, wildcard

_MODEL = """
[request_definition]
r = sub, plugin, op, verb, kind, eff

[policy_definition]
p = sub, plugin, op, verb, kind, eff, idx

[role_definition]
g = _, _

[policy_effect]
e = some(where (p.eft == allow))

[matchers]
m = r.kind == p.kind && (p.sub == "*" || g(r.sub, p.sub)) && wild(r.plugin, p.plugin) \
&& wild(r.op, p.op) && (p.verb == "*" || r.verb == p.verb) \
&& (p.eff == "*" || r.eff == p.eff)
"""
_KINDS = ("deny", "allow_with_approval", "allow")

# pycasbin logs every decision (``Request: … ---> False``, a denial as a warning) once
# anything re-enables its loggers — a logging.config.dictConfig that keeps existing
# loggers does, uvicorn's among them. Quiet unless a level was set for "casbin" on purpose.
_CASBIN_LOG = logging.getLogger("casbin")
if _CASBIN_LOG.level == logging.NOTSET:
    _CASBIN_LOG.setLevel(logging.ERROR)
#: Sights kept per document (one per subject asking); past it they are made afresh.
_SIGHTS_KEPT = 1024


def wildcard_match(value: str, pattern: str) -> bool:
    """``*`` matches any run of characters (slashes included); nothing else is special."""
    return pattern == "*" or wildcard(pattern).fullmatch(value) is not None


class Rbac:
    """One compiled policy document. Immutable: a new document is a new ``Rbac``."""

    def __init__(self, document: PolicyDocument) -> None:
        self.document = document
        self.version = document.digest()
        self._lock = threading.Lock()
        model = Model()
        model.load_model_from_text(_MODEL)
        self._enforcer = casbin.Enforcer(model)
        self._enforcer.add_function("wild", wildcard_match)
        rules = [
            [g.to, g.plugin, g.operation, g.verb, g.effect, g.operation_effect, str(i)]
            for i, g in enumerate(document.grants, start=1)
        ]
        if rules:
            self._enforcer.add_policies(rules)
        links = [
            [f"subject:{s}", f"role:{r}"] for s, e in document.subjects.items() for r in e.roles
        ]
        links += [[f"role:{r}", f"role:{p}"] for r, e in document.roles.items() for p in e.inherits]
        if links:
            self._enforcer.add_grouping_policies(links)
        self._sights: dict[Subject, Sight] = {}

    def known(self, subject: Subject) -> bool:
        """A subject the document lists, or one a surface vouched for with roles."""
        return (subject.id or "anonymous") in self.document.subjects or bool(subject.roles)

    def roles_of(self, subject: Subject) -> frozenset[str]:
        """Every role the subject holds, inherited ones included."""
        found: set[str] = set()
        for principal in self._principals(subject):
            if principal.startswith("role:"):
                found.add(principal[5:])
            for role in self._enforcer.get_implicit_roles_for_user(principal):
                found.add(role.removeprefix("role:"))
        return frozenset(found)

    def permissions_of(self, subject: Subject) -> frozenset[str]:
        held = set(subject.permissions)
        entry = self.document.subjects.get(subject.id or "anonymous")
        if entry is not None:
            held.update(entry.permissions)
        for role in self.roles_of(subject):
            role_entry = self.document.roles.get(role)
            if role_entry is not None:
                held.update(role_entry.permissions)
        return frozenset(held)

    def decide(
        self,
        subject: Subject,
        plugin_id: str,
        operation: str,
        *,
        verb: str = "call",
        required_permissions: Iterable[str] = (),
        requires_approval: bool = False,
        operation_effect: str = "read",
    ) -> Decision:
        if not self.known(subject):
            return self._deny(f"unknown subject {subject.id!r}")
        principals = self._principals(subject)
        target = (plugin_id, operation, verb, operation_effect)
        deny = self._match(principals, *target, "deny")
        if deny is not None:
            return self._deny(f"denied by grant #{deny}")
        if verb == "call":
            held = self.permissions_of(subject)
            missing = sorted(p for p in required_permissions if p not in held)
            if missing:
                return self._deny(f"missing permission {missing[0]!r}")
        approval = self._match(principals, *target, "allow_with_approval")
        if approval is not None:
            return Decision(
                "allow_with_approval", f"approval required by grant #{approval}", self.version
            )
        allow = self._match(principals, *target, "allow")
        if allow is not None:
            reason = f"allowed by grant #{allow}"
        elif verb == "call" and f"plugin:{plugin_id}" in self.permissions_of(subject):
            reason = f"allowed by the permission 'plugin:{plugin_id}'"
        else:
            return self._deny("no grant matches (default deny)")
        if requires_approval and verb == "call":
            return Decision(
                "allow_with_approval", f"{reason}; the operation requires approval", self.version
            )
        return Decision("allow", reason, self.version)

    def sight(self, subject: Subject) -> Sight:
        """What ``subject`` may call, for asking about many plugins at once."""
        found = self._sights.get(subject)
        if found is not None:
            return found
        principals = self._principals(subject)
        roles = self._enforcer.get_role_manager()
        with self._lock:  # the role manager grows its role table while it answers
            reaching = [
                g
                for g in self.document.grants
                if g.verb in ("*", "call")
                and (g.to == "*" or any(roles.has_link(p, g.to) for p in principals))
            ]
        made = Sight(
            version=self.version,
            known=self.known(subject),
            held=self.permissions_of(subject),
            denies=tuple(Match.of(g) for g in reaching if g.effect == "deny"),
            allows=tuple(Match.of(g) for g in reaching if g.effect != "deny"),
        )
        if len(self._sights) >= _SIGHTS_KEPT:
            self._sights.clear()
        self._sights[subject] = made
        return made

    def _principals(self, subject: Subject) -> list[str]:
        return [f"subject:{subject.id or 'anonymous'}", *(f"role:{r}" for r in subject.roles)]

    def _match(
        self,
        principals: list[str],
        plugin_id: str,
        operation: str,
        verb: str,
        effect: str,
        kind: str,
    ) -> str | None:
        for principal in principals:
            # One question at a time: the enforcer compiles its matcher with ast.parse,
            # which is not safe across threads on CPython 3.11 (SystemError seen when
            # several threads asked at once). Answers are cached above, so this lock is
            # taken only on a cache miss.
            with self._lock:
                allowed, rule = self._enforcer.enforce_ex(
                    principal, plugin_id, operation, verb, kind, effect
                )
            if allowed:
                return str(rule[-1]) if rule else "?"
        return None

    def _deny(self, reason: str) -> Decision:
        return Decision("deny", reason, self.version)


def grants_for(document: PolicyDocument, plugin_id: str) -> list[Grant]:
    """The grants whose plugin pattern matches ``plugin_id`` (for ``policy check``)."""
    return [g for g in document.grants if wildcard_match(plugin_id, g.plugin)]
