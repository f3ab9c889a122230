"""Governance for surfaces: the policy, approvals, actions, secrets and the audit log as
the CLI and the REST API use them. Every change made here is itself audited.

Actions follow the Shu Actions API: ``list_actions`` shows a subject only the
operations it may call (each with ``requires_approval`` as the policy says *for that
subject*), and ``perform_action`` answers ``pending_approval`` with a receipt, ``ok``
with the result, or ``error``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from plugyard.errors import GovernanceError
from plugyard.execution.executor import CallRequest, Executor, new_request_id
from plugyard.governance.audit.chain import Verification
from plugyard.governance.core import Governance
from plugyard.governance.policy.book import PolicyBook
from plugyard.governance.secrets.vault import Scope, SecretInfo
from plugyard.registry.model import RegisteredPlugin
from plugyard.runtimes.base import CallContext
from plugyard.store.approvals import ApprovalRow
from plugyard.store.audit import AuditRecord
from plugyard.types import Caller


def approval_dict(row: ApprovalRow) -> dict[str, Any]:
    """An approval as any API shows it: never the receipt (only its hash is stored)."""
    return {
        "action_id": row.id,
        "state": row.state,
        "subject": row.subject,
        "plugin_id": row.plugin_id,
        "operation": row.operation,
        "preview": row.preview,
        "policy_version": row.policy_version,
        "created_at": row.created_at,
        "expires_at": row.expires_at,
        "decided_by": row.decided_by,
        "decided_at": row.decided_at,
        "note": row.note,
        "used_at": row.used_at,
    }


@dataclass
class Administration:
    governance: Governance
    book: PolicyBook
    executor: Executor
    plugins: Callable[[], Iterable[RegisteredPlugin]]

    # ------------------------------------------------------------------ policy

    def load_policy(self, text: str | bytes, *, by: str | None, source: str | None = None) -> str:
        try:
            version = self.book.load_text(text, source=source, by=by)
        except GovernanceError as exc:
            self._audit("policy", "refused", by, error_code=exc.code)
            raise
        self._audit("policy", "loaded", by, policy_version=version)
        return version

    def check(
        self, subject: Caller, plugin_id: str, operation: str, verb: str = "call"
    ) -> dict[str, Any]:
        decision = self.book.ask(subject, plugin_id, operation, verb)
        return {
            "outcome": decision.outcome,
            "reason": decision.reason,
            "policy_version": decision.policy_version,
        }

    # ------------------------------------------------------------------ approvals

    def approvals(self, state: str | None = "pending", limit: int = 100) -> list[dict[str, Any]]:
        return [approval_dict(r) for r in self.governance.approvals.list(state, limit)]

    def decide(
        self, approval_id: str, approver: Caller, approve: bool, note: str | None = None
    ) -> dict[str, Any]:
        settings = self.book.approval_settings()
        try:
            row = self.governance.approvals.decide(
                approval_id,
                approver,
                approve,
                may_approve=self.book.may_approve,
                self_approval=settings.self_approval,
                note=note,
            )
        except GovernanceError as exc:
            self._audit(
                "approval",
                "refused",
                approver.subject,
                error_code=exc.code,
                detail={"action_id": approval_id},
            )
            raise
        self._audit(
            "approval",
            row.state,
            approver.subject,
            plugin_id=row.plugin_id,
            operation=row.operation,
            approver=approver.subject,
            detail={"action_id": row.id, "requested_by": row.subject},
        )
        return approval_dict(row)

    # ------------------------------------------------------------------ actions

    def list_actions(self, subject: Caller) -> list[dict[str, Any]]:
        """Operations of kind ``action`` the subject may call, with what the policy
        says about approval for this subject."""
        out: list[dict[str, Any]] = []
        for plugin in self.plugins():
            for op in plugin.descriptor.operations:
                if op.kind != "action":
                    continue
                decision = self.book.ask(subject, plugin.id, op.id, "call")
                if decision.outcome == "deny":
                    continue
                out.append(
                    {
                        "plugin_id": plugin.id,
                        "name": op.id,
                        "description": op.description,
                        "params_schema": op.parameters,
                        "required_scopes": list(op.required_scopes),
                        "effect": op.effect,
                        "requires_approval": decision.outcome == "allow_with_approval",
                    }
                )
        return out

    async def perform_action(
        self,
        plugin_id: str,
        name: str,
        args: Mapping[str, Any],
        context: CallContext,
        *,
        receipt: str | None = None,
    ) -> dict[str, Any]:
        held = next((p for p in self.plugins() if p.id == plugin_id), None)
        if held is not None and held.descriptor.operation(name) is None:
            # A name the plugin did not list: refused before anything is claimed or run.
            error = {
                "code": "action_not_found",
                "message": f"plugin {plugin_id!r} lists no action {name!r}",
                "details": {},
            }
            return {"status": "error", "action_id": None, "error": error}
        request = CallRequest(plugin_id, name, dict(args), context, approval_receipt=receipt)
        result = await self.executor.call(request)
        if result.status == "pending_approval":
            data = dict(result.data or {})
            return {"status": "pending_approval", **data}
        if result.ok:
            return {"status": "ok", "action_id": result.request_id, "result": result.data}
        error = result.error.to_dict() if result.error else {"code": "internal_error"}
        return {"status": "error", "action_id": result.request_id, "error": error}

    # ------------------------------------------------------------------ secrets

    def set_secret(
        self, name: str, value: str, *, scope: Scope, owner: str | None, by: str | None
    ) -> SecretInfo:
        info = self.governance.vault.set(name, value, scope=scope, owner=owner)
        self._audit("secret", "set", by, detail={"name": name, "scope": scope, "owner": owner})
        return info

    def delete_secret(self, name: str, *, scope: Scope, owner: str | None, by: str | None) -> bool:
        gone = self.governance.vault.delete(name, scope=scope, owner=owner)
        self._audit(
            "secret",
            "deleted" if gone else "absent",
            by,
            detail={"name": name, "scope": scope, "owner": owner},
        )
        return gone

    def secrets(self, *, scope: Scope | None = None, owner: str | None = None) -> list[SecretInfo]:
        return self.governance.vault.list(scope=scope, owner=owner)

    # ------------------------------------------------------------------ audit

    def verify(self) -> Verification:
        return self.governance.audit.verify()

    def tail(self, count: int = 20) -> list[AuditRecord]:
        return self.governance.audit.tail(count)

    def _audit(self, kind: str, status: str, subject: str | None, **values: Any) -> None:
        self.governance.audit.append(
            kind, status=status, subject=subject, request_id=new_request_id(), **values
        )


def context_for(subject: str | None, roles: Iterable[str] = (), **extra: Any) -> CallContext:
    return CallContext(request_id=new_request_id(), subject=subject, roles=tuple(roles), **extra)
