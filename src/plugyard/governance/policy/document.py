"""The policy document: who is who, and who may do what.

A document is YAML or JSON, read strictly (an unknown field, a bad effect, a cycle in
role inheritance, a format version this code does not know — all refuse the whole
document with ``policy_invalid``)::

    version: 1
    subjects:
      alice: {roles: [admin]}
      bob: {roles: [analyst], permissions: ["plugin:calculator"]}
    roles:
      analyst: {inherits: [viewer]}
    grants:
      - {to: "role:viewer", plugin: "*", operation: "*", effect: allow}
      - {to: "role:analyst", plugin: "mailer", operation: "send", effect: allow_with_approval}
      - {to: "*", plugin: "sqlite-query", effect: deny}
      - {to: "role:admin", plugin: "*", verb: approve, effect: allow}
      - {to: "role:reader", operation_effect: read, effect: allow}
    approvals: {ttl_s: 3600, self_approval: false}

Patterns (``plugin``, ``operation``) know one wildcard, ``*``, matching any run of
characters. ``to`` names ``subject:<id>``, ``role:<name>`` or ``*`` (every known
subject). ``action`` is a synonym of ``operation`` (a Shu action is an operation).
``operation_effect`` narrows a grant to operations of one declared effect.

The yard's chat model is a governed resource too: the reserved object ``model`` with
the operation and verb ``use`` (``{plugin: model, operation: use, verb: use}``); only
verb ``use`` (or ``*``) reaches it, so no ``call`` grant hands it out by a wildcard.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from plugyard.errors import GovernanceError
from plugyard.manifest.safeload import parse

FORMAT_VERSION = 1
#: The object, operation and verb of the right to use the yard's chat model.
MODEL_OBJECT, MODEL_OPERATION, MODEL_VERB = "model", "use", "use"
#: Deeper inheritance than this is refused: a role manager cuts it off silently.
MAX_ROLE_DEPTH = 8
Effect = Literal["allow", "deny", "allow_with_approval"]
Verb = Literal["call", "approve", "use", "*"]
OperationEffect = Literal["read", "write", "destructive", "*"]


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


def _name(value: str) -> str:
    if not value or len(value) > 200 or any(c.isspace() or ord(c) < 32 for c in value):
        raise ValueError(f"not a name: {value!r}")
    return value


class SubjectEntry(_Strict):
    roles: tuple[str, ...] = ()
    permissions: tuple[str, ...] = ()


class RoleEntry(_Strict):
    inherits: tuple[str, ...] = ()
    permissions: tuple[str, ...] = ()


class Grant(_Strict):
    to: str
    plugin: str = "*"
    operation: str = "*"
    verb: Verb = "call"
    effect: Effect
    #: Only operations of this effect (the manifest's ``effect``: read, write,
    #: destructive); ``*`` for any. Lets a grant say "every read-only operation".
    operation_effect: OperationEffect = "*"

    @model_validator(mode="before")
    @classmethod
    def _action_alias(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "action" in data:
            data = dict(data)
            if "operation" in data:
                raise ValueError("give operation or action, not both")
            data["operation"] = data.pop("action")
        return data

    @field_validator("to")
    @classmethod
    def _principal(cls, value: str) -> str:
        if value == "*":
            return value
        kind, _, name = value.partition(":")
        if kind not in {"subject", "role"} or not name:
            raise ValueError("'to' is 'subject:<id>', 'role:<name>' or '*'")
        _name(name)
        return value

    @field_validator("plugin", "operation")
    @classmethod
    def _pattern(cls, value: str) -> str:
        if not value or len(value) > 200 or any(c.isspace() for c in value):
            raise ValueError(f"not a pattern: {value!r}")
        return value


class Approvals(_Strict):
    ttl_s: float = Field(default=3600.0, gt=0, le=30 * 86400)
    self_approval: bool = False


class PolicyDocument(_Strict):
    version: Literal[1] = 1
    subjects: dict[str, SubjectEntry] = Field(default_factory=dict)
    roles: dict[str, RoleEntry] = Field(default_factory=dict)
    grants: tuple[Grant, ...] = ()
    approvals: Approvals = Field(default_factory=Approvals)
    #: plugin id → host patterns its ``host.http`` may reach (nothing when absent).
    egress: dict[str, tuple[str, ...]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> PolicyDocument:
        for name in (*self.subjects, *self.roles):
            _name(name)
        for subject_entry in self.subjects.values():
            for role in subject_entry.roles:
                _name(role)
        for role_entry in self.roles.values():
            for parent in role_entry.inherits:
                _name(parent)
        _check_hierarchy(self.roles)
        return self

    def digest(self) -> str:
        """The policy version: a hash of the document's canonical JSON."""
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return "p-" + hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _check_hierarchy(roles: Mapping[str, RoleEntry]) -> None:
    """No cycles, and no chain deeper than :data:`MAX_ROLE_DEPTH`."""
    depth: dict[str, int] = {}

    def visit(role: str, path: tuple[str, ...]) -> int:
        if role in path:
            raise ValueError(f"role inheritance has a cycle: {' -> '.join((*path, role))}")
        if role in depth:
            return depth[role]
        entry = roles.get(role)
        parents = entry.inherits if entry is not None else ()
        found = 1 + max((visit(p, (*path, role)) for p in parents), default=0)
        if found > MAX_ROLE_DEPTH:
            raise ValueError(f"role inheritance deeper than {MAX_ROLE_DEPTH} at {role!r}")
        depth[role] = found
        return found

    for role in roles:
        visit(role, ())


def parse_document(data: Any) -> PolicyDocument:
    """A document from plain data; anything malformed is ``policy_invalid``."""
    if not isinstance(data, Mapping):
        raise GovernanceError("a policy document is a mapping", code="policy_invalid")
    try:
        return PolicyDocument.model_validate(_tuples(data))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "/".join(str(p) for p in first["loc"])
        raise GovernanceError(
            f"policy document refused at /{where}: {first['msg']}", code="policy_invalid"
        ) from None


def parse_text(text: str | bytes) -> PolicyDocument:
    """A document from YAML or JSON text, read with the manifest layer's safe loader."""
    try:
        parsed = parse(text)
    except Exception as exc:  # any refusal of the text is a malformed policy
        raise GovernanceError(f"policy text refused: {exc}", code="policy_invalid") from None
    if len(parsed.documents) != 1 or parsed.syntax not in {"json", "yaml"}:
        raise GovernanceError("a policy is one JSON or YAML document", code="policy_invalid")
    return parse_document(_plain(parsed.documents[0]))


def _plain(data: Any) -> Any:
    """Numbers kept as their text by the safe loader become numbers again."""
    if isinstance(data, Mapping):
        return {k: _plain(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_plain(v) for v in data]
    if isinstance(data, float) and type(data) is not float:
        return float(data)
    return data


def _tuples(data: Any) -> Any:
    """Lists become tuples: the models are strict and frozen."""
    if isinstance(data, Mapping):
        return {k: _tuples(v) for k, v in data.items()}
    if isinstance(data, list):
        return tuple(_tuples(v) for v in data)
    return data
