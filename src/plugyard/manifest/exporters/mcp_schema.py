"""Tool schemas as strict MCP clients take them.

A descriptor's schemas are plain JSON Schema, and some of what JSON Schema allows does
not port: a ``type`` list (``["string", "null"]``) cannot be mapped onto a single-type
dialect, and a schema with no assertion at all (``{}``, a bare ``true``) says nothing a
client could check. The MCP Inspector's ``--strict`` mode reports both. :func:`portable`
rewrites them into equivalent schemas that every such client reads: a ``type`` list
becomes ``anyOf`` branches of one type each, and "any value" becomes ``anyOf`` over every
JSON type. Both rewrites accept exactly the values the original accepted.

MCP also requires structured output to be an object. :func:`output_schema` gives the
``outputSchema`` to advertise: an object schema as it is, anything else wrapped as the
``result`` member of an object, which is how the MCP server then sends such data.

Nothing here changes the descriptor: every function works on a copy.
"""

from __future__ import annotations

import copy
from typing import Any

#: The member that carries data whose schema is not an object (as MCP SDKs name it).
WRAP_KEY = "result"

#: Every JSON value has exactly one of these types (``integer`` is a kind of ``number``).
JSON_TYPES = ("string", "number", "boolean", "object", "array", "null")

# Keywords that assert something on their own: a schema with one of them is not "any".
_CONSTRAINING = frozenset({
    "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "format", "contentMediaType",
    "contentEncoding", "contentSchema", "maxItems", "minItems", "uniqueItems", "maxContains",
    "minContains", "maxProperties", "minProperties", "required", "dependentRequired",
    "allOf", "anyOf", "oneOf", "not", "items", "prefixItems", "contains", "additionalItems",
    "unevaluatedItems", "properties", "patternProperties", "additionalProperties",
    "unevaluatedProperties", "propertyNames", "dependentSchemas", "dependencies", "$ref",
    "$dynamicRef", "$recursiveRef",
})  # fmt: skip

# Keywords that only ever judge values of these types: a ``type`` list's branch of that
# type takes them, so each branch reads as a whole schema (how nullable objects and
# strings are usually spelled), and the others are not cluttered by them.
_TYPE_KEYWORDS: dict[str, frozenset[str]] = {
    "object": frozenset({
        "properties", "patternProperties", "additionalProperties", "unevaluatedProperties",
        "required", "minProperties", "maxProperties", "propertyNames", "dependentRequired",
        "dependentSchemas", "dependencies",
    }),
    "array": frozenset({
        "items", "prefixItems", "additionalItems", "unevaluatedItems", "contains",
        "minContains", "maxContains", "minItems", "maxItems", "uniqueItems",
    }),
    "string": frozenset({
        "minLength", "maxLength", "pattern", "format", "contentEncoding", "contentMediaType",
        "contentSchema",
    }),
    "number": frozenset({
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    }),
}  # fmt: skip
_TYPE_KEYWORDS["integer"] = _TYPE_KEYWORDS["number"]

# Where subschemas sit: one schema, a list of schemas, a map of name to schema.
_ONE = ("items", "contains", "not", "propertyNames", "if", "then", "else",
        "additionalProperties", "unevaluatedProperties", "additionalItems",
        "unevaluatedItems", "contentSchema")  # fmt: skip
_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAP = ("properties", "patternProperties", "dependentSchemas", "dependencies", "$defs",
        "definitions")  # fmt: skip
# These take ``true``/``false`` as a plain switch that every client reads.
_BOOLEAN_OK = frozenset({"additionalProperties", "unevaluatedProperties", "additionalItems",
                         "unevaluatedItems"})  # fmt: skip


def any_value() -> dict[str, Any]:
    """The schema every JSON value matches, with a type on each branch."""
    return {"anyOf": [{"type": t} for t in JSON_TYPES]}


def portable(schema: Any) -> Any:
    """A copy of ``schema`` with no ``type`` list and no untyped "any" schema."""
    return _rewrite(copy.deepcopy(schema), None)


def _rewrite(node: Any, keyword: str | None) -> Any:
    if isinstance(node, bool):
        if keyword in _BOOLEAN_OK:
            return node
        return any_value() if node else {"not": {}}
    if not isinstance(node, dict):
        return node
    declared = node.get("type")
    if isinstance(declared, list) and declared and all(isinstance(t, str) for t in declared):
        _split_types(node)
    elif keyword != "not" and not _CONSTRAINING.intersection(node):
        # Under ``not`` an empty schema means "nothing", and stays exactly that.
        node.update(any_value())
    for key in _ONE:
        if key in node:
            node[key] = _rewrite(node[key], key)
    for key in _LIST:
        if isinstance(node.get(key), list):
            node[key] = [_rewrite(sub, key) for sub in node[key]]
    if isinstance(node.get("items"), list):  # draft 7's tuple form
        node["items"] = [_rewrite(sub, "items") for sub in node["items"]]
    for key in _MAP:
        members = node.get(key)
        if isinstance(members, dict):
            for name, sub in members.items():
                # draft 7's ``dependencies`` may map to a list of names, not a schema.
                members[name] = sub if isinstance(sub, list) else _rewrite(sub, key)
    return node


def _split_types(node: dict[str, Any]) -> None:
    types: list[str] = list(dict.fromkeys(node.pop("type")))
    branches: list[dict[str, Any]] = []
    for name in types:
        branch: dict[str, Any] = {"type": name}
        for key in _TYPE_KEYWORDS.get(name, frozenset()):
            if key in node:
                branch[key] = node[key]
        branches.append(branch)
    for name in types:
        for key in _TYPE_KEYWORDS.get(name, frozenset()):
            node.pop(key, None)
    if len(branches) == 1:
        node.update(branches[0])
    elif "anyOf" not in node:
        node["anyOf"] = branches
    else:
        node["allOf"] = [*node.get("allOf", []), {"anyOf": branches}]


def is_object_schema(schema: dict[str, Any] | None) -> bool:
    """Whether data of this schema is sent as structured content as it is (else it is
    wrapped as ``{"result": data}``)."""
    return schema is not None and schema.get("type") == "object"


def output_schema(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """The ``outputSchema`` to advertise for an operation's output schema, or ``None``."""
    if schema is None:
        return None
    if is_object_schema(schema):
        out: dict[str, Any] = portable(schema)
        return out
    inner = portable(schema)
    wrapper: dict[str, Any] = {"type": "object"}
    # References inside stay relative to the document's root, so its definitions move up.
    for key in ("$schema", "$id", "$defs", "definitions"):
        if isinstance(inner, dict) and key in inner:
            wrapper[key] = inner.pop(key)
    wrapper["properties"] = {WRAP_KEY: inner}
    wrapper["required"] = [WRAP_KEY]
    return wrapper
