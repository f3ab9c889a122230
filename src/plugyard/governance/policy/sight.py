"""The policy evaluator: what one subject may do under one policy document.

:meth:`plugyard.governance.policy.rbac.Rbac.sight` picks, once per document and subject,
the grants that can reach the subject (through its roles, inherited ones included) in
the order a decision meets them; a :class:`Sight` then judges targets against those
alone. Both questions — a call's :class:`~plugyard.governance.policy.base.Decision` (with
its reason) and a listing's "may this subject see it" — go through the one
:meth:`Sight.verdict`, so they cannot disagree. A property test holds it to a plain
reference implementation of docs/governance.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Literal

from plugyard.governance.policy.document import Grant
from plugyard.manifest.model import PluginDescriptor


@cache
def wildcard(pattern: str) -> re.Pattern[str]:
    """A grant pattern as a regex: ``*`` is any run of characters, nothing else special."""
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.DOTALL)


def wildcard_match(value: str, pattern: str) -> bool:
    """``*`` matches any run of characters (slashes included); nothing else is special."""
    return pattern == "*" or wildcard(pattern).fullmatch(value) is not None


Test = Callable[[str], bool]


def matcher(pattern: str) -> Test | None:
    """A test of values against a grant pattern; ``None`` for ``*`` (anything). The
    shapes grants mostly take — an exact name, ``prefix*``, ``*suffix`` — are string
    methods; others the pattern's regex."""
    if pattern == "*":
        return None
    if "*" not in pattern:
        return pattern.__eq__
    head, _, tail = pattern.partition("*")
    if "*" in tail:
        regex = wildcard(pattern)
        return lambda value: regex.fullmatch(value) is not None
    if not tail:
        return lambda value: value.startswith(head)
    if not head:
        return lambda value: value.endswith(tail)
    least = len(head) + len(tail)  # "a*a" does not match "a"
    return lambda value: len(value) >= least and value.startswith(head) and value.endswith(tail)


#: Why :meth:`Sight.verdict` decided: a grant of each effect (``grant`` is its number), a
#: missing permission (``permission``), the Shu permission ``plugin:<id>``, an unknown
#: subject, or nothing matched.
Found = Literal["deny", "approval", "allow", "permission", "plugin", "unknown", "default"]


@dataclass(frozen=True, slots=True)
class Verdict:
    outcome: Literal["allow", "deny", "allow_with_approval"]
    found: Found
    grant: int = 0
    permission: str = ""


_FOUND: dict[str, Found] = {"deny": "deny", "allow_with_approval": "approval", "allow": "allow"}
_UNKNOWN = Verdict("deny", "unknown")
_DEFAULT = Verdict("deny", "default")
_PLUGIN = Verdict("allow", "plugin")
_PLUGIN_RAISED = Verdict("allow_with_approval", "plugin")


@dataclass(frozen=True, slots=True)
class Match:
    """A grant's target, compiled; a ``None`` test matches anything. Two matches are
    equal when their grants' targets are (the tests follow from the patterns); the
    grant's number (for reasons) does not count."""

    plugin_pattern: str
    operation_pattern: str
    operation_effect: str
    verb: str
    plugin: Test | None = field(compare=False)
    operation: Test | None = field(compare=False)
    #: What a hit answers, made once (a decision allocates nothing): as is, and raised
    #: to approval for an operation that requires it.
    answer: Verdict = field(compare=False)
    raised: Verdict = field(compare=False)

    @classmethod
    def of(cls, grant: Grant, number: int) -> Match:
        answer = Verdict(grant.effect, _FOUND[grant.effect], number)
        raised = (
            Verdict("allow_with_approval", answer.found, number)
            if grant.effect == "allow"
            else answer
        )
        return cls(grant.plugin, grant.operation, grant.operation_effect, grant.verb,
                   matcher(grant.plugin), matcher(grant.operation), answer, raised)  # fmt: skip

    @property
    def number(self) -> int:
        return self.answer.grant

    def hits(self, plugin_id: str, operation: str, verb: str, effect: str) -> bool:
        return (
            (self.plugin is None or self.plugin(plugin_id))
            and (self.operation is None or self.operation(operation))
            and self.verb in ("*", verb)
            and self.operation_effect in ("*", effect)
        )


@dataclass(frozen=True, slots=True)
class Sight:
    """``version`` is the document's; ``known`` whether the document knows the subject;
    ``held`` its permissions; ``denies``, ``approvals`` and ``allows`` the grants
    reaching it, of each effect, in the order a decision meets them (the subject's own
    reach first, then each role a surface vouched for; within each, document order).

    Two sights are equal when they answer alike — same grants, permissions and standing
    — whatever the version: a new document that leaves a subject's grants as they were
    leaves its answers as they were, and a listing may keep them."""

    version: str = field(compare=False)
    known: bool
    held: frozenset[str]
    denies: tuple[Match, ...]
    approvals: tuple[Match, ...]
    allows: tuple[Match, ...]
    #: ``call`` grants that name plugins only (any operation, any effect): every
    #: operation of a plugin gets the same answer, so :meth:`shows` asks once per plugin.
    plain: bool = field(init=False, compare=False)

    def __post_init__(self) -> None:
        plain = all(
            m.operation is None and m.operation_effect == "*"
            for m in self.denies + self.approvals + self.allows
            if m.verb in ("*", "call")
        )
        object.__setattr__(self, "plain", plain)

    def verdict(
        self,
        plugin_id: str,
        operation: str,
        verb: str = "call",
        required: Iterable[str] = (),
        effect: str = "read",
        requires_approval: bool = False,
    ) -> Verdict:
        """The decision, in docs/governance.md's order — the strictest outcome wins:
        unknown subject, deny grant, missing permission, approval grant, allow grant (or
        ``plugin:<id>``, raised to approval when the operation requires it), default
        deny. Permissions count for ``call`` only."""
        if not self.known:
            return _UNKNOWN
        for match in self.denies:
            if match.hits(plugin_id, operation, verb, effect):
                return match.answer
        call = verb == "call"
        if call:
            held = self.held
            missing = [p for p in required if p not in held]
            if missing:  # the first by name, whatever order the manifest lists them in
                return Verdict("deny", "permission", permission=min(missing))
        for match in self.approvals:
            if match.hits(plugin_id, operation, verb, effect):
                return match.answer
        raised = requires_approval and call
        for match in self.allows:
            if match.hits(plugin_id, operation, verb, effect):
                return match.raised if raised else match.answer
        if call and f"plugin:{plugin_id}" in self.held:
            return _PLUGIN_RAISED if raised else _PLUGIN
        return _DEFAULT

    def sees(
        self, plugin_id: str, operation: str, required: Iterable[str] = (), effect: str = "read"
    ) -> bool:
        """Whether the subject may call ``operation`` (of ``effect``, needing the
        permissions ``required``) of ``plugin_id``, with or without approval."""
        return self.verdict(plugin_id, operation, "call", required, effect).outcome != "deny"

    def shows(self, plugin: PluginDescriptor) -> bool:
        """Whether a listing shows ``plugin``: it has an operation the subject may call,
        or no operation at all."""
        operations = plugin.operations
        if not operations:
            return True
        if self.plain:
            first = operations[0]
            return self.sees(plugin.id, first.id, plugin.permissions, first.effect)
        return any(self.sees(plugin.id, o.id, plugin.permissions, o.effect) for o in operations)


#: What an invalid policy lets anyone see: nothing.
BLIND = Sight(version="invalid", known=False, held=frozenset(), denies=(), approvals=(), allows=())
