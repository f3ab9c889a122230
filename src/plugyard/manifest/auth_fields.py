"""Shu v1 forbids auth fields in parameter schemas (AUTH-REF-001): a plugin declares its
auth needs in ``op_auth`` / ``required_identities`` and the host resolves tokens; a
parameter such as ``auth_mode``, ``user_email`` or ``impersonate_email`` is the removed v0
way, and lets a caller pick whose account a call uses. Registration refuses a Shu plugin
whose operation parameters declare one, with the JSON pointer of the property."""

from __future__ import annotations

from collections.abc import Mapping

from plugyard.errors import Problem
from plugyard.manifest.model import PluginDescriptor
from plugyard.manifest.pointer import pointer_join

CODE = "auth_field_in_parameters"
AUTH_FIELDS = frozenset({"auth_mode", "user_email", "impersonate_email"})


def faults(descriptor: PluginDescriptor) -> list[Problem]:
    found: list[Problem] = []
    for index, operation in enumerate(descriptor.operations):
        properties = operation.parameters.get("properties")
        if not isinstance(properties, Mapping):
            continue
        for name in sorted(AUTH_FIELDS & set(properties)):
            pointer = pointer_join("/operations", index, "parameters", "properties", name)
            message = (
                f"{descriptor.id}.{operation.id}: {name!r} is an auth field; declare "
                "op_auth or required_identities instead"
            )
            found.append(Problem(CODE, pointer, message))
    return found
