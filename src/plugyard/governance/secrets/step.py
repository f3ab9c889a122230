"""The secrets steps of the call path: every secret the operation needs is present
(``missing_secrets``), and on the way out no secret value leaves in the result."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from plugyard.execution.result import Result
from plugyard.execution.steps import NOTHING, Call, refuse
from plugyard.governance.identities.op_auth import op_auth_for
from plugyard.governance.secrets.vault import Redactor, SecretVault
from plugyard.manifest.model import OpAuth
from plugyard.runtimes.base import ErrorInfo, Outcome

#: The operation's ``op_auth`` for this call (secrets, identities, bindings, host.auth).
OP_AUTH = "secrets.op_auth"


def call_op_auth(call: Call) -> OpAuth | None:
    """The call's ``op_auth`` (it may depend on the arguments' ``op``), found once."""
    state = call.state
    if OP_AUTH in state:
        found: OpAuth | None = state[OP_AUTH]
        return found
    assert call.plugin is not None and call.operation is not None
    auth = state[OP_AUTH] = op_auth_for(call.plugin.descriptor, call.operation, call.arguments)
    return auth


class SecretsStep:
    """Every secret the operation's ``op_auth`` requires is configured for the caller."""

    name = "secrets"
    after = NOTHING

    def __init__(self, vault: SecretVault) -> None:
        self.vault = vault

    def before(self, call: Call) -> Outcome | None:
        auth = call_op_auth(call)
        if auth is None or not auth.secrets:
            return None
        subject = call.context.subject
        missing = sorted(
            name
            for name, need in auth.secrets.items()
            if not self.vault.present(name, subject, need.allowed_scope)
        )
        if missing:
            return refuse("missing_secrets", f"not configured: {', '.join(missing)}",
                          missing=missing)  # fmt: skip
        return None


class ScrubStep:
    """No secret value the call touched leaves in its result (data, error, diagnostics,
    skips, citations, cursor)."""

    name = "scrub"
    before = NOTHING

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor

    def after(self, call: Call, result: Result) -> Result:
        redactor = self.redactor
        if not redactor.armed:
            return result
        return _scrubbed(result, redactor.scrub_data, redactor.scrub)


def _scrubbed(result: Result, data: Callable[[Any], Any], text: Callable[[str], str]) -> Result:
    error = result.error
    if error is not None:
        error = ErrorInfo(error.code, text(error.message), data(dict(error.details)))
    return replace(
        result,
        data=data(result.data),
        error=error,
        diagnostics=tuple(text(d) for d in result.diagnostics),
        skips=tuple(data(dict(s)) for s in result.skips),
        citations=tuple(data(dict(c)) for c in result.citations),
        next_cursor=text(result.next_cursor) if result.next_cursor else result.next_cursor,
    )
