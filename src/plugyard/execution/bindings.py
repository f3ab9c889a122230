"""``x-binding`` hints of the Shu contract: parameters the host fills in.

A property of an operation's parameters schema may carry ``"x-binding"``:

- ``identity:<key>`` — from the caller's identities (``user_context.identities``);
- ``secret:<name>`` — from the secrets store, for the caller (user → system);
- ``env:<NAME>`` — from the host's environment, for trusted plugins only, and never a
  ``PLUGYARD_*`` variable (those hold plyard's own keys).

A value the caller gave wins. A secret binding that cannot be resolved answers
``missing_secrets``; other unresolved bindings leave the parameter absent, so the
schema decides whether that is an error.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plugyard.execution.secrets import SecretVault

_CACHE: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {}


@dataclass(frozen=True, slots=True)
class Bound:
    params: dict[str, Any]
    missing_secrets: tuple[str, ...] = ()
    used_secrets: bool = False


def bindings_of(key: tuple[str, str], schema: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """``(property, binding)`` pairs of a parameters schema, cached under ``key`` (the
    plugin's content hash and the operation)."""
    found = _CACHE.get(key)
    if found is None:
        properties = schema.get("properties")
        pairs: list[tuple[str, str]] = []
        if isinstance(properties, Mapping):
            for name, spec in properties.items():
                if isinstance(spec, Mapping) and isinstance(spec.get("x-binding"), str):
                    pairs.append((name, spec["x-binding"]))
        found = _CACHE[key] = tuple(pairs)
    return found


def bind(
    params: Mapping[str, Any],
    bindings: tuple[tuple[str, str], ...],
    *,
    subject: str | None,
    user_context: Mapping[str, Any],
    vault: SecretVault | None,
    trusted: bool,
    environ: Mapping[str, str] | None = None,
) -> Bound:
    out = dict(params)
    missing: list[str] = []
    used = False
    env = os.environ if environ is None else environ
    identities = user_context.get("identities")
    identities = identities if isinstance(identities, Mapping) else {}
    for name, binding in bindings:
        if name in out:
            continue
        kind, _, key = binding.partition(":")
        value: Any = None
        if kind == "identity":
            value = identities.get(key, user_context.get(key))
        elif kind == "secret":
            used = True
            value = vault.resolve(key, subject) if vault is not None else None
            if value is None:
                missing.append(key)
        elif kind == "env" and trusted and not key.upper().startswith("PLUGYARD_"):
            value = env.get(key)
        if value is not None:
            out[name] = value
    return Bound(out, tuple(missing), used)
