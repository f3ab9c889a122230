"""Which ``x-binding`` hints a plugin may carry: the rule, as one pure function.

A binding asks the host to fill a parameter (Shu contract, "Schema UI Hints"). The host
fills only what the manifest declared and the plugin's trust allows, so a binding is
judged against the same declarations as the host object:

- ``secret:<name>`` — the ``secrets`` host capability, and ``<name>`` among the plugin's
  ``secrets`` or the operation's ``op_auth.secrets``;
- ``identity:<key>`` — the ``identity`` host capability (it resolves from
  ``host.identity``);
- ``env:<NAME>`` — trusted plugins only, and never a ``PLUGYARD_*`` variable (those hold
  plugyard's own keys). Trusted code could read its environment anyway; untrusted code,
  whose sandbox gets a cleared environment, must not get it through a parameter.

Any other binding is refused too: a hint the host does not understand is a mistake, and
a mistake here would be silent. Registration refuses a plugin with a fault
(``binding_undeclared``, with the JSON pointer of the hint); the call path asks again on
every call, because trust can change after registration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from plugyard.errors import Problem
from plugyard.manifest.model import Operation, PluginDescriptor
from plugyard.manifest.pointer import pointer_join

KINDS = ("secret", "identity", "env")
CODE = "binding_undeclared"


@dataclass(frozen=True, slots=True)
class Binding:
    """One ``x-binding`` of an operation: the property it fills and where it comes from."""

    prop: str
    kind: str
    key: str

    @property
    def text(self) -> str:
        return f"{self.kind}:{self.key}"


def bindings(operation: Operation) -> tuple[Binding, ...]:
    """The bindings of ``operation``'s top-level parameters (the only ones filled in)."""
    properties = operation.parameters.get("properties")
    if not isinstance(properties, Mapping):
        return ()
    found: list[Binding] = []
    for name, spec in properties.items():
        if isinstance(spec, Mapping) and "x-binding" in spec:
            hint = spec["x-binding"]
            kind, _, key = hint.partition(":") if isinstance(hint, str) else ("", "", "")
            found.append(Binding(str(name), kind, key))
    return tuple(found)


def refusal(
    descriptor: PluginDescriptor, operation: Operation, binding: Binding, trust: str
) -> str | None:
    """Why ``binding`` may not be filled for this plugin (``None`` when it may)."""
    declared = set(descriptor.host_capabilities)
    if binding.kind == "secret":
        if "secrets" not in declared:
            return f"{binding.text!r} needs the 'secrets' host capability in the manifest"
        auth = descriptor.op_auth.get(operation.id)
        names = set(descriptor.secrets) | set(auth.secrets if auth is not None else ())
        if binding.key not in names:
            return f"the secret {binding.key!r} is not among the plugin's declared secrets"
        return None
    if binding.kind == "identity":
        if "identity" not in declared:
            return f"{binding.text!r} needs the 'identity' host capability in the manifest"
        return None if binding.key else "an identity binding names no identity"
    if binding.kind == "env":
        if trust != "trusted":
            return "environment bindings are for trusted plugins only"
        if not binding.key or binding.key.upper().startswith("PLUGYARD_"):
            return f"the variable {binding.key!r} may not be bound"
        return None
    return f"unknown binding {binding.text!r} (known: {', '.join(KINDS)})"


def faults(descriptor: PluginDescriptor, trust: str) -> list[Problem]:
    """Every binding of ``descriptor`` that its declarations and ``trust`` do not allow,
    each with the pointer of its hint in the canonical descriptor."""
    found: list[Problem] = []
    for index, operation in enumerate(descriptor.operations):
        for binding in bindings(operation):
            reason = refusal(descriptor, operation, binding, trust)
            if reason is not None:
                pointer = pointer_join(
                    "/operations", index, "parameters", "properties", binding.prop, "x-binding"
                )
                found.append(Problem(CODE, pointer, f"{descriptor.id}.{operation.id}: {reason}"))
    return found
