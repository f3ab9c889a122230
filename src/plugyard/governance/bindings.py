"""``x-binding`` hints of the Shu contract: parameters the host fills in.

A property of an operation's parameters schema may carry ``"x-binding"``:

- ``identity:<key>`` — from the caller's identities, as the surface vouched for them
  (:attr:`CallContext.identities`), never from the body's ``user_context``;
- ``secret:<name>`` — from the secrets store, for the caller (user → system);
- ``env:<NAME>`` — from the host's environment.

Each is filled only when the plugin declared it and its trust allows it
(:mod:`plugyard.manifest.bindings`); registration refuses the others, and a call that
meets one anyway (the plugin's trust was lowered since) is refused with
``binding_undeclared`` before the plugin runs — an undeclared binding is never left
quietly empty, which would hide the attempt.

A value the caller gave wins. A secret binding that cannot be resolved answers
``missing_secrets``; other unresolved bindings leave the parameter absent, so the
schema decides whether that is an error.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plugyard.errors import GovernanceError
from plugyard.execution.steps import NOTHING, Call, refuse
from plugyard.governance.secrets.step import call_op_auth
from plugyard.governance.secrets.vault import SecretVault
from plugyard.manifest.bindings import CODE, Binding, bindings, refusal
from plugyard.manifest.model import Operation, PluginDescriptor
from plugyard.runtimes.base import Outcome

_CACHE: dict[tuple[str, str, str], tuple[Binding, ...]] = {}
_CACHE_LIMIT = 10_000


@dataclass(frozen=True, slots=True)
class Bound:
    params: dict[str, Any]
    missing_secrets: tuple[str, ...] = ()
    used_secrets: bool = False


def allowed_bindings(
    content_hash: str, descriptor: PluginDescriptor, operation: Operation, trust: str
) -> tuple[Binding, ...]:
    """The bindings of ``operation``, each checked against the declarations and trust
    (cached per content hash, operation and trust); raises ``binding_undeclared``."""
    key = (content_hash, operation.id, trust)
    found = _CACHE.get(key)
    if found is None:
        found = bindings(operation)
        for binding in found:
            reason = refusal(descriptor, operation, binding, trust)
            if reason is not None:
                raise GovernanceError(f"{descriptor.id}.{operation.id}: {reason}", code=CODE)
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        _CACHE[key] = found
    return found


def bind(
    params: Mapping[str, Any],
    found: tuple[Binding, ...],
    *,
    subject: str | None,
    identities: Mapping[str, Any],
    vault: SecretVault | None,
    scopes: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Bound:
    """``params`` with the (already allowed) bindings filled in; ``scopes`` names the
    allowed scope of each secret the operation's ``op_auth`` declares."""
    out = dict(params)
    missing: list[str] = []
    used = False
    env = os.environ if environ is None else environ
    for binding in found:
        if binding.prop in out:
            continue
        value: Any = None
        if binding.kind == "identity":
            value = identities.get(binding.key)
        elif binding.kind == "secret":
            used = True
            scope = (scopes or {}).get(binding.key, "system_or_user")
            value = vault.resolve(binding.key, subject, scope) if vault is not None else None
            if value is None:
                missing.append(binding.key)
        elif binding.kind == "env":
            value = env.get(binding.key)
        if value is not None:
            out[binding.prop] = value
    return Bound(out, tuple(missing), used)


class BindingsStep:
    """``x-binding`` parameters are declared and trusted (``binding_undeclared``) and
    filled in for the plugin — never for the caller's view or the audit hash."""

    name = "bindings"
    after = NOTHING

    def __init__(self, vault: SecretVault) -> None:
        self.vault = vault

    def before(self, call: Call) -> Outcome | None:
        plugin, operation = call.plugin, call.operation
        assert plugin is not None and operation is not None
        try:
            wanted = allowed_bindings(
                plugin.content_hash, plugin.descriptor, operation, plugin.trust
            )
        except GovernanceError as exc:
            return refuse(exc.code, exc.message)
        if not wanted:
            return None
        auth = call_op_auth(call)
        arguments = call.arguments
        bound = bind(
            arguments,
            wanted,
            subject=call.context.subject,
            identities=call.context.identities,
            vault=self.vault,
            scopes={n: s.allowed_scope for n, s in auth.secrets.items()} if auth else None,
        )
        if bound.missing_secrets:
            return refuse(
                "missing_secrets",
                f"not configured: {', '.join(bound.missing_secrets)}",
                missing=list(bound.missing_secrets),
            )
        call.fills = {k: v for k, v in bound.params.items() if k not in arguments}
        return None
