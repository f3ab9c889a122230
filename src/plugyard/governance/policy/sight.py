"""What one subject may call under one policy document, for listings.

A listing asks whether a subject may see each plugin of the registry — ten thousand
questions on the console's first page after a policy load, each ~0.3 ms through Casbin.
:meth:`plugyard.governance.policy.rbac.Rbac.sight` picks, once per document and subject, the grants
that can reach the subject (with the enforcer's own role links); a :class:`Sight` then
matches targets against those alone. :meth:`Sight.sees` is exactly ``Rbac.decide(...,
verb="call").outcome != "deny"``: a property test holds the two together.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache

from plugyard.governance.policy.document import Grant
from plugyard.manifest.model import PluginDescriptor


@cache
def wildcard(pattern: str) -> re.Pattern[str]:
    """A grant pattern as a regex: ``*`` is any run of characters, nothing else special."""
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.DOTALL)


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


@dataclass(frozen=True, slots=True)
class Match:
    """A grant's target, compiled; a ``None`` test matches anything. Two matches are
    equal when their grants' targets are (the tests follow from the patterns)."""

    plugin_pattern: str
    operation_pattern: str
    operation_effect: str
    plugin: Test | None = field(compare=False)
    operation: Test | None = field(compare=False)

    @classmethod
    def of(cls, grant: Grant) -> Match:
        return cls(grant.plugin, grant.operation, grant.operation_effect,
                   matcher(grant.plugin), matcher(grant.operation))  # fmt: skip

    def hits(self, plugin_id: str, operation: str, effect: str) -> bool:
        return (
            (self.plugin is None or self.plugin(plugin_id))
            and (self.operation is None or self.operation(operation))
            and self.operation_effect in ("*", effect)
        )


@dataclass(frozen=True, slots=True)
class Sight:
    """``version`` is the document's; ``known`` whether the document knows the subject;
    ``held`` its permissions; ``denies`` and ``allows`` the ``call`` grants reaching it
    (``allow_with_approval`` among the allows: it lets the caller see the operation).

    Two sights are equal when they answer alike — same grants, permissions and standing
    — whatever the version: a new document that leaves a subject's grants as they were
    leaves its answers as they were, and a listing may keep them."""

    version: str = field(compare=False)
    known: bool
    held: frozenset[str]
    denies: tuple[Match, ...]
    allows: tuple[Match, ...]
    #: Grants that name plugins only (any operation, any effect): every operation of
    #: a plugin gets the same answer, so :meth:`shows` asks once per plugin.
    plain: bool = field(init=False, compare=False)

    def __post_init__(self) -> None:
        plain = all(
            m.operation is None and m.operation_effect == "*" for m in self.denies + self.allows
        )
        object.__setattr__(self, "plain", plain)

    def sees(
        self, plugin_id: str, operation: str, required: Iterable[str] = (), effect: str = "read"
    ) -> bool:
        """Whether the subject may call ``operation`` (of ``effect``, needing the
        permissions ``required``) of ``plugin_id``, with or without approval."""
        if not self.known:
            return False
        for match in self.denies:
            if match.hits(plugin_id, operation, effect):
                return False
        held = self.held
        for permission in required:
            if permission not in held:
                return False
        for match in self.allows:
            if match.hits(plugin_id, operation, effect):
                return True
        return f"plugin:{plugin_id}" in held

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
BLIND = Sight(version="invalid", known=False, held=frozenset(), denies=(), allows=())
