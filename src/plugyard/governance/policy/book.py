"""The policy in force: loaded from a file or through the API, kept in the store, and
asked by the executor on every call.

States: *starter* (no policy was ever loaded: the deny-by-default starter document of
:mod:`plugyard.governance.policy.starter` is in force — admins may do everything, readers may call
read-only operations, nobody else anything), *active* (a loaded document compiled by
:class:`~plugyard.governance.policy.rbac.Rbac`), *invalid* (the configured file or the stored
document cannot be read: **everything is denied** until a valid document is loaded). A
document loaded here applies to the very next call in this process; other replicas see
it within ``refresh_s`` (they poll one integer).

Decisions are cached per policy version, subject and target: an uncached decision costs
a few µs, a cached answer ~1 µs. Listings, which ask whether a subject may see every
plugin of the registry, ask the subject's :class:`~plugyard.governance.policy.sight.Sight`
(its grants, chosen once per policy version) directly.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from plugyard.errors import GovernanceError
from plugyard.governance.policy.base import Decision
from plugyard.governance.policy.document import (
    Approvals,
    PolicyDocument,
    parse_document,
    parse_text,
)
from plugyard.governance.policy.rbac import Rbac
from plugyard.governance.policy.sight import BLIND, Sight
from plugyard.governance.policy.starter import starter_document
from plugyard.store.policies import PolicyRepository
from plugyard.types import Caller

#: ``facts(plugin_id, operation)`` → (permissions the plugin requires, whether the
#: operation requires approval, the operation's effect), or ``None`` for an unknown one.
Facts = Callable[[str, str], tuple[tuple[str, ...], bool, str] | None]
State = Literal["starter", "active", "invalid"]
#: What an unknown plugin or operation counts as: the strictest effect.
_UNKNOWN: tuple[tuple[str, ...], bool, str] = ((), False, "destructive")
_CACHE_LIMIT = 50_000


def _no_facts(plugin_id: str, operation: str) -> tuple[tuple[str, ...], bool, str] | None:
    del plugin_id, operation
    return None


def facts_from(find: Callable[[str], Any]) -> Facts:
    """:data:`Facts` read from a plugin lookup (the registry's ``find``): the Shu
    ``requires_permission()`` keys and the operation's ``requires_approval``."""

    def facts(plugin_id: str, operation: str) -> tuple[tuple[str, ...], bool, str] | None:
        plugin = find(plugin_id)
        if plugin is None:
            return None
        descriptor = plugin.descriptor
        op = descriptor.operation(operation)
        if op is None:
            return (tuple(descriptor.permissions), False, "destructive")
        return tuple(descriptor.permissions), op.requires_approval, op.effect

    return facts


class PolicyBook:
    """The :class:`~plugyard.governance.policy.base.Policy` of a governed yard."""

    def __init__(
        self,
        repository: PolicyRepository,
        *,
        facts: Facts = _no_facts,
        file: Path | None = None,
        refresh_s: float = 1.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._repository = repository
        self._facts = facts
        self._refresh_s = refresh_s
        self._clock = clock
        self._lock = threading.Lock()
        self._cache: dict[tuple[Any, ...], Decision] = {}
        self._starter = Rbac(starter_document())
        self._rbac: Rbac | None = self._starter
        self._state: State = "starter"
        self._problem: str | None = None
        self._seq = 0
        self._checked = time.monotonic()
        self._reload()
        if file is not None:
            self._apply_file(file)

    # ------------------------------------------------------------------ the question

    @property
    def state(self) -> State:
        return self._state

    @property
    def version(self) -> str:
        if self._rbac is not None:
            return self._rbac.version if self._state == "active" else "starter"
        return self._state

    @property
    def problem(self) -> str | None:
        """Why the policy is invalid (``None`` unless it is)."""
        return self._problem

    @property
    def document(self) -> PolicyDocument | None:
        return self._rbac.document if self._rbac is not None else None

    def decide(
        self, subject: Caller, plugin_id: str, operation: str, params: Mapping[str, Any]
    ) -> Decision:
        del params  # decisions depend on who and what, never on the arguments
        return self.ask(subject, plugin_id, operation, "call")

    def ask(self, subject: Caller, plugin_id: str, operation: str, verb: str) -> Decision:
        self._maybe_refresh()
        facts = self._facts(plugin_id, operation) or _UNKNOWN
        key = (self.version, subject, plugin_id, operation, verb, facts)
        found = self._cache.get(key)
        if found is not None:
            return found
        decision = self._decide(subject, plugin_id, operation, verb, facts)
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        self._cache[key] = decision
        return decision

    def may_approve(self, approver: Caller, plugin_id: str, operation: str) -> Decision:
        """Whether ``approver`` may decide approvals of this operation."""
        return self.ask(approver, plugin_id, operation, "approve")

    def visible(self, subject: Caller, plugin_id: str, operation: str) -> bool:
        """Whether a listing may show this operation to ``subject`` (it may call it)."""
        permissions, _, effect = self._facts(plugin_id, operation) or _UNKNOWN
        return self.sight(subject).sees(plugin_id, operation, permissions, effect)

    def sight(self, subject: Caller) -> Sight:
        """What ``subject`` may call under the policy in force now, for asking about
        many plugins at once (a listing); a later load is seen by the next ``sight``."""
        self._maybe_refresh()
        rbac = self._rbac  # None exactly while the policy is invalid
        return rbac.sight(subject) if rbac is not None else BLIND

    def egress(self, plugin_id: str, declared: tuple[str, ...] = ()) -> tuple[str, ...]:
        """Hosts ``host.http`` of this plugin may reach: the policy's ``egress`` entry;
        under the starter policy, what the manifest's ``config.egress`` asks for;
        invalid: none."""
        if self._state == "starter":
            return declared
        document = self.document
        return document.egress.get(plugin_id, ()) if document is not None else ()

    def approval_settings(self) -> Approvals:
        document = self.document
        return document.approvals if document is not None else Approvals()

    # ------------------------------------------------------------------ changes

    def load_text(
        self, text: str | bytes, *, source: str | None = None, by: str | None = None
    ) -> str:
        """Validate, store and activate a document; answers its version. A malformed
        document raises ``policy_invalid`` and changes nothing."""
        return self.load(parse_text(text), source=source, by=by)

    def load_data(self, data: Any, *, source: str | None = None, by: str | None = None) -> str:
        return self.load(parse_document(data), source=source, by=by)

    def load(
        self, document: PolicyDocument, *, source: str | None = None, by: str | None = None
    ) -> str:
        rbac = Rbac(document)
        row = self._repository.add(
            rbac.version, document.model_dump(mode="json"), source, by, self._clock()
        )
        with self._lock:
            self._activate(rbac, row.seq)
        return rbac.version

    def refresh(self) -> None:
        """Read the newest stored document now (other replicas' loads)."""
        with self._lock:
            self._reload()

    # ------------------------------------------------------------------ internals

    def _decide(
        self,
        subject: Caller,
        plugin_id: str,
        operation: str,
        verb: str,
        facts: tuple[tuple[str, ...], bool, str],
    ) -> Decision:
        permissions, requires_approval, effect = facts
        if self._state == "invalid" or self._rbac is None:
            return Decision("deny", f"the policy is invalid: {self._problem}", "invalid")
        decision = self._rbac.decide(
            subject,
            plugin_id,
            operation,
            verb=verb,
            required_permissions=permissions,
            requires_approval=requires_approval,
            operation_effect=effect,
        )
        if self._state == "starter":
            reason = f"{decision.reason} (the starter policy: no policy was loaded)"
            return Decision(decision.outcome, reason, "starter")
        return decision

    def _maybe_refresh(self) -> None:
        now = time.monotonic()
        if now - self._checked < self._refresh_s:
            return
        with self._lock:
            self._checked = now
            try:
                latest = self._repository.latest_seq()
            except Exception:  # an unreadable store keeps the policy it has
                return
            if latest != self._seq:
                self._reload()

    def _reload(self) -> None:
        try:
            row = self._repository.latest()
        except Exception as exc:
            self._invalidate(f"the stored policy cannot be read: {exc}")
            return
        if row is None:
            return
        try:
            rbac = Rbac(parse_document(row.document))
        except GovernanceError as exc:
            self._invalidate(f"stored policy #{row.seq}: {exc.message}", row.seq)
            return
        self._activate(rbac, row.seq)

    def _apply_file(self, file: Path) -> None:
        try:
            text = file.read_bytes()
            document = parse_text(text)
        except OSError as exc:
            self._invalidate(f"cannot read {file}: {exc.strerror}")
            return
        except GovernanceError as exc:
            self._invalidate(f"{file}: {exc.message}")
            return
        if self._rbac is None or self._rbac.version != document.digest():
            self.load(document, source=str(file))

    def _activate(self, rbac: Rbac, seq: int) -> None:
        self._rbac, self._state, self._problem, self._seq = rbac, "active", None, seq
        self._cache.clear()

    def _invalidate(self, problem: str, seq: int | None = None) -> None:
        self._rbac, self._state, self._problem = None, "invalid", problem
        if seq is not None:
            self._seq = seq
        self._cache.clear()
