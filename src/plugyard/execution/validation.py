"""JSON Schema validation of parameters and outputs, compiled once per schema.

Validators are compiled with jsonschema-rs (Draft 7 and 2020-12 by ``$schema``, 2020-12
when none is named; ``format`` checked) and cached by the caller's key, so the hot path
is one dictionary lookup and one native validation. Plugin-supplied schemas never reach
the network: remote ``$ref`` resolution is refused.
"""

from __future__ import annotations

import copy
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema_rs

#: How many faults one refusal lists; the rest are counted.
MAX_REPORTED = 10


def _no_remote(uri: str) -> Any:
    raise ValueError(f"remote $ref {uri!r} is not resolved")


@dataclass(frozen=True, slots=True)
class Fault:
    """One way an instance breaks its schema."""

    pointer: str
    message: str
    schema_path: str

    def to_dict(self) -> dict[str, str]:
        return {"pointer": self.pointer, "message": self.message, "schema_path": self.schema_path}


def _pointer(path: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


class SchemaError(ValueError):
    """The schema itself is not a valid JSON Schema."""


class Validators:
    """A cache of compiled validators keyed by an id the caller chooses."""

    def __init__(self) -> None:
        self._cache: dict[Hashable, Any] = {}

    def __len__(self) -> int:
        return len(self._cache)

    def compile(self, key: Hashable, schema: dict[str, Any]) -> Any:
        validator = self._cache.get(key)
        if validator is None:
            try:
                validator = jsonschema_rs.validator_for(
                    schema, validate_formats=True, retriever=_no_remote
                )
            except (jsonschema_rs.ValidationError, ValueError, TypeError) as exc:
                raise SchemaError(str(exc).split("\n", 1)[0]) from None
            self._cache[key] = validator
        return validator

    def check(self, key: Hashable, schema: dict[str, Any], instance: Any) -> list[Fault]:
        """The faults of ``instance`` (empty when valid)."""
        validator = self.compile(key, schema)
        if validator.is_valid(instance):
            return []
        faults: list[Fault] = []
        for error in validator.iter_errors(instance):
            faults.append(
                Fault(_pointer(error.instance_path), error.message, _pointer(error.schema_path))
            )
            if len(faults) >= MAX_REPORTED:
                break
        return faults

    def clear(self) -> None:
        self._cache.clear()


def with_defaults(schema: Mapping[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with every top-level property the caller left out that declares a
    ``default`` set to (a copy of) it — what the manifest promises the plugin receives
    instead of nothing. Given values, even ``null``, are never replaced."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return params
    for name, prop in properties.items():
        if name not in params and isinstance(prop, Mapping) and "default" in prop:
            params[name] = copy.deepcopy(prop["default"])
    return params
