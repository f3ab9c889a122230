"""The rules OpenAI's strict mode (Structured Outputs) sets for a function's parameters.

This module only checks; :mod:`.openai_strict` rewrites. Keeping the two apart lets the
check judge the rewrite instead of restating it. The rules, from OpenAI's published list
of supported schemas:

- the root is an object schema (``type: "object"``), never an ``anyOf``;
- every schema has a ``type`` (one type, or one type and ``"null"``), an ``anyOf`` or a
  local ``$ref`` (alone: no keyword beside it);
- every object lists its properties, has ``additionalProperties: false`` and names every
  property in ``required``; every array has ``items``;
- only these keywords: ``type``, ``properties``, ``required``, ``additionalProperties``,
  ``items``, ``enum``, ``const``, ``anyOf``, ``$ref``, ``$defs``, ``description``,
  ``title``; ``pattern`` and ``format`` (from :data:`FORMATS`) for strings; ``minimum``,
  ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``, ``multipleOf`` for numbers;
  ``minItems``, ``maxItems`` for arrays;
- limits: :data:`MAX_DEPTH` levels, :data:`MAX_PROPERTIES` properties in all,
  :data:`MAX_TEXT` characters of property names, definition names, enum and const values,
  :data:`MAX_ENUM_VALUES` enum values in all, and :data:`MAX_LARGE_ENUM_TEXT` characters
  for one string enum of more than :data:`LARGE_ENUM` values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from plugyard.manifest.pointer import pointer_join, resolve

#: A violation: where (a JSON pointer into the schema) and which rule it breaks.
Violation = tuple[str, str]

TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
STRING_KEYWORDS = ("pattern", "format")
NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
ARRAY_KEYWORDS = ("minItems", "maxItems")
KEYWORDS = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "items", "enum", "const",
        "anyOf", "$ref", "$defs", "description", "title",
        *STRING_KEYWORDS, *NUMBER_KEYWORDS, *ARRAY_KEYWORDS,
    }
)  # fmt: skip
MAX_DEPTH = 10
MAX_PROPERTIES = 5000
MAX_TEXT = 120_000
MAX_ENUM_VALUES = 1000
LARGE_ENUM = 250
MAX_LARGE_ENUM_TEXT = 15_000


def json_type(value: Any) -> str:
    """The JSON type of a value read from JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def fits(value: Any, types: frozenset[str]) -> bool:
    kind = json_type(value)
    return kind in types or (kind == "integer" and "number" in types)


def strict_violations(schema: Any) -> list[Violation]:
    """Every way ``schema`` breaks the strict-mode rules, as (pointer, rule) pairs."""
    if not isinstance(schema, dict):
        return [("", "the parameters must be an object schema")]
    check = _Check(schema)
    if schema.get("type") != "object":
        check.found.append(("", "the root must have type 'object'"))
    if "anyOf" in schema:
        check.found.append(("/anyOf", "the root may not be an anyOf"))
    check.node(schema, "", 1)
    defs = schema.get("$defs")
    if isinstance(defs, dict):
        for name, sub in defs.items():
            check.text += len(name)
            check.node(sub, pointer_join("/$defs", name), 1)
    check.limits()
    return check.found


@dataclass
class _Check:
    root: dict[str, Any]
    found: list[Violation] = field(default_factory=list)
    properties: int = 0
    text: int = 0
    enum_values: int = 0

    def add(self, at: str, rule: str) -> None:
        self.found.append((at, rule))

    def node(self, node: Any, at: str, depth: int) -> None:
        if not isinstance(node, dict):
            self.add(at, "a schema must be a JSON object")
            return
        if depth > MAX_DEPTH:
            self.add(at, f"nested deeper than {MAX_DEPTH} levels")
        for key in node:
            if key not in KEYWORDS:
                self.add(pointer_join(at, key), f"unsupported keyword {key!r}")
        if "$ref" in node:
            self.ref(node, at)
        elif "anyOf" in node:
            self.any_of(node, at, depth)
        elif "type" not in node:
            self.add(at, "a schema needs a type, an anyOf or a $ref")
        else:
            self.typed(node, at, depth)

    def ref(self, node: dict[str, Any], at: str) -> None:
        ref = node["$ref"]
        if len(node) > 1:
            self.add(at, "no keyword may stand beside $ref")
        if not isinstance(ref, str) or not ref.startswith("#"):
            self.add(pointer_join(at, "$ref"), "a $ref must point inside the schema")
            return
        try:
            resolve(self.root, ref[1:])
        except (KeyError, ValueError):
            self.add(pointer_join(at, "$ref"), f"{ref!r} points nowhere")

    def any_of(self, node: dict[str, Any], at: str, depth: int) -> None:
        branches = node["anyOf"]
        if "type" in node:
            self.add(at, "type beside anyOf")
        if not isinstance(branches, list) or not branches:
            self.add(pointer_join(at, "anyOf"), "anyOf must be a non-empty list")
            return
        for index, branch in enumerate(branches):
            self.node(branch, pointer_join(at, "anyOf", index), depth)

    def typed(self, node: dict[str, Any], at: str, depth: int) -> None:
        types = self.types(node["type"], pointer_join(at, "type"))
        if "enum" in node:
            self.enum(node["enum"], types, pointer_join(at, "enum"))
        if "const" in node:
            self.text += len(str(node["const"]))
            if not fits(node["const"], types):
                self.add(pointer_join(at, "const"), "const is not of the schema's type")
        if "object" in types:
            self.object(node, at, depth)
        else:
            for key in ("properties", "required", "additionalProperties"):
                if key in node:
                    self.add(pointer_join(at, key), f"{key} on a schema that is no object")
        if "array" in types:
            items = node.get("items")
            if items is None:
                self.add(at, "an array needs items")
            else:
                self.node(items, pointer_join(at, "items"), depth + 1)
        elif "items" in node:
            self.add(pointer_join(at, "items"), "items on a schema that is no array")
        if "format" in node and (node["format"] not in FORMATS or "string" not in types):
            self.add(pointer_join(at, "format"), f"format {node['format']!r} is not supported")

    def types(self, declared: Any, at: str) -> frozenset[str]:
        if isinstance(declared, str) and declared in TYPES:
            return frozenset({declared})
        if (
            isinstance(declared, list)
            and len(declared) == 2
            and "null" in declared
            and all(isinstance(t, str) and t in TYPES for t in declared)
            and declared[0] != declared[1]
        ):
            return frozenset(declared)
        self.add(at, "type must be one JSON type, or one type and 'null'")
        return frozenset()

    def enum(self, values: Any, types: frozenset[str], at: str) -> None:
        if not isinstance(values, list) or not values:
            self.add(at, "enum must be a non-empty list")
            return
        self.enum_values += len(values)
        size = sum(len(str(v)) for v in values)
        self.text += size
        strings = sum(isinstance(v, str) for v in values)
        if strings > LARGE_ENUM and size > MAX_LARGE_ENUM_TEXT:
            self.add(at, f"over {MAX_LARGE_ENUM_TEXT} characters in an enum of {strings} strings")
        for index, value in enumerate(values):
            if json_type(value) in {"array", "object"} or not fits(value, types):
                self.add(pointer_join(at, index), "enum value is not of the schema's type")

    def object(self, node: dict[str, Any], at: str, depth: int) -> None:
        properties = node.get("properties")
        if not isinstance(properties, dict):
            self.add(at, "an object must list its properties")
            properties = {}
        if node.get("additionalProperties") is not False:
            self.add(at, "an object needs additionalProperties: false")
        required = node.get("required", [])
        if not isinstance(required, list) or sorted(map(str, required)) != sorted(properties):
            self.add(pointer_join(at, "required"), "every property must be required")
        for name, sub in properties.items():
            self.properties += 1
            self.text += len(name)
            self.node(sub, pointer_join(at, "properties", name), depth + 1)

    def limits(self) -> None:
        if self.properties > MAX_PROPERTIES:
            self.add("", f"over {MAX_PROPERTIES} properties in all")
        if self.text > MAX_TEXT:
            self.add("", f"over {MAX_TEXT} characters of names and enum values")
        if self.enum_values > MAX_ENUM_VALUES:
            self.add("", f"over {MAX_ENUM_VALUES} enum values in all")
