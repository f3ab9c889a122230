"""The arguments of a strict tool call, given back in the form the operation expects.

A strict definition (:mod:`.openai_strict`) requires every property and lets an optional
one be ``null``: the model says "left out" with a null. :func:`from_strict_arguments`
drops each null whose property is optional in the operation's own schema and does not
take null itself, at every depth, so that the plugin's defaults apply; everything else
passes unchanged (a value the schema refuses is the executor's to report).

It belongs between the model's tool call and ``Executor.call``, for tools exported with
``strict: true``; for other tools it is harmless.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugyard.manifest.pointer import resolve

#: How many ``$ref`` one schema may go through before it is taken as a cycle.
_MAX_HOPS = 32
_UNSURE = frozenset({"not", "if", "then", "else", "$dynamicRef", "$recursiveRef"})


def from_strict_arguments(
    schema: Mapping[str, Any], arguments: Mapping[str, Any]
) -> dict[str, Any]:
    """``arguments`` without the nulls that stand for optional parameters left out.

    ``schema`` is the operation's own parameters schema (``x-binding`` properties may be
    in it: they are never among the model's arguments)."""
    restore = _Restore(dict(schema))
    out = restore.value(restore.root, dict(arguments))
    assert isinstance(out, dict)
    return out


class _Restore:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root

    def resolved(self, node: Any) -> dict[str, Any] | None:
        for _ in range(_MAX_HOPS):
            if not isinstance(node, dict):
                return None
            ref = node.get("$ref")
            if not isinstance(ref, str):
                return node
            if not ref.startswith("#"):
                return None
            try:
                node = resolve(self.root, ref[1:])
            except (KeyError, ValueError):
                return None
        return None

    def value(self, node: Any, value: Any) -> Any:
        found = self.resolved(node)
        if found is None:
            return value
        if isinstance(value, dict):
            return self.object(found, value)
        if isinstance(value, list):
            items = self.items(found)
            return value if items is None else [self.value(items, v) for v in value]
        return value

    def object(self, node: dict[str, Any], value: dict[str, Any]) -> dict[str, Any]:
        properties, required = self.shape(node, set(value))
        out: dict[str, Any] = {}
        for key, item in value.items():
            sub = properties.get(key)
            if item is None and sub is not None and key not in required and not self.nulls(sub):
                continue
            out[key] = item if sub is None else self.value(sub, item)
        return out

    def shape(self, node: dict[str, Any], keys: set[str]) -> tuple[dict[str, Any], set[str]]:
        """The properties and required names that hold for an object with ``keys``: the
        node's own, its ``allOf`` parts' and those of the ``anyOf`` / ``oneOf`` branch
        the keys fit (a strict branch requires all its properties, so they fit it
        exactly)."""
        properties: dict[str, Any] = {}
        required: set[str] = set()
        parts = [node]
        seen: set[int] = set()
        while parts:
            part = parts.pop(0)
            if id(part) in seen:
                continue
            seen.add(id(part))
            if isinstance(part.get("properties"), dict):
                for name, sub in part["properties"].items():
                    properties.setdefault(name, sub)
            if isinstance(part.get("required"), list):
                required.update(r for r in part["required"] if isinstance(r, str))
            parts.extend(p for p in map(self.resolved, _list(part.get("allOf"))) if p is not None)
            branch = self.branch(part, keys)
            if branch is not None:
                parts.append(branch)
        return properties, required

    def branch(self, node: dict[str, Any], keys: set[str]) -> dict[str, Any] | None:
        options = [
            found
            for key in ("anyOf", "oneOf")
            for found in map(self.resolved, _list(node.get(key)))
            if found is not None and isinstance(found.get("properties"), dict)
        ]
        for exact in (True, False):
            for option in options:
                names = set(option["properties"])
                needed = {r for r in _list(option.get("required")) if isinstance(r, str)}
                if (names == keys) if exact else (needed <= keys <= names):
                    return option
        return None

    def items(self, node: dict[str, Any]) -> Any:
        if isinstance(node.get("items"), dict):
            return node["items"]
        for key in ("anyOf", "oneOf", "allOf"):
            for option in map(self.resolved, _list(node.get(key))):
                if option is not None and isinstance(option.get("items"), dict):
                    return option["items"]
        return None

    def nulls(self, node: Any, hops: int = 0) -> bool:
        """Whether ``node`` takes null; when unsure, no (dropping an optional null is
        always safe, keeping one the schema refuses is not)."""
        found = self.resolved(node)
        if found is None or _UNSURE & found.keys() or hops > _MAX_HOPS:
            return False
        if any(key in found for key in ("anyOf", "oneOf")):
            branches = [*_list(found.get("anyOf")), *_list(found.get("oneOf"))]
            if not any(self.nulls(b, hops + 1) for b in branches):
                return False
        if not all(self.nulls(p, hops + 1) for p in _list(found.get("allOf"))):
            return False
        declared = found.get("type")
        if isinstance(declared, str) and declared != "null":
            return False
        if isinstance(declared, list) and "null" not in declared:
            return False
        enum = found.get("enum")
        if isinstance(enum, list) and None not in enum:
            return False
        return "const" not in found or found["const"] is None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
