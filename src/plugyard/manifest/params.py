"""Parameter lists (OLO ``inputs``, HomeClaw ``parameters``) to and from JSON Schema.

A list entry's ``name``, ``type``, ``required``, ``default`` and ``description`` map to
the property schema; any other key of the entry (``enum``, ``items``, ``format`` …) is
already JSON Schema vocabulary and is copied into the property as written.
"""

from __future__ import annotations

from typing import Any

import jsonschema_rs

from plugyard.manifest.pointer import pointer_join
from plugyard.manifest.reading import ReadContext

JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
# Spellings seen in hand-written manifests, read as the JSON Schema type they mean.
TYPE_SYNONYMS = {
    "str": "string", "text": "string", "int": "integer", "float": "number",
    "double": "number", "bool": "boolean", "dict": "object", "map": "object",
    "list": "array", "any": None,
}  # fmt: skip
_ENTRY_KEYS = ("name", "type", "required", "default", "description")


def list_to_schema(
    entries: list[Any], ctx: ReadContext, pointer: str, *, required_default: bool
) -> dict[str, Any]:
    """Build an object schema from a parameter list; faults are reported on ``ctx``."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for index, entry in enumerate(entries):
        here = pointer_join(pointer, index)
        if not isinstance(entry, dict):
            ctx.error("manifest_invalid_value", here, "a parameter must be a mapping")
            continue
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            ctx.error("manifest_missing_field", pointer_join(here, "name"), "parameter name")
            continue
        if name in properties:
            ctx.error("manifest_duplicate_key", pointer_join(here, "name"), f"{name!r} again")
            continue
        prop: dict[str, Any] = {}
        raw_type = entry.get("type")
        if raw_type is not None:
            json_type = _json_type(raw_type, ctx, pointer_join(here, "type"))
            if json_type is not None:
                prop["type"] = json_type
        description = entry.get("description")
        if description is not None:
            prop["description"] = ctx.text(description, pointer_join(here, "description"))
        if "default" in entry:
            prop["default"] = entry["default"]
        for key, value in entry.items():
            if key not in _ENTRY_KEYS:
                prop[key] = value
        if not jsonschema_rs.meta.is_valid(prop):
            ctx.error("manifest_invalid_schema", here, _schema_fault(prop))
            continue
        properties[name] = prop
        flag = entry.get("required", required_default)
        if not isinstance(flag, bool):
            ctx.error("manifest_invalid_value", pointer_join(here, "required"), "not a boolean")
        elif flag:
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _schema_fault(schema: dict[str, Any]) -> str:
    try:
        jsonschema_rs.meta.validate(schema)
    except jsonschema_rs.ValidationError as exc:
        return str(exc).split("\n", 1)[0]
    return "not a valid JSON Schema"


def _json_type(raw: Any, ctx: ReadContext, pointer: str) -> Any:
    if isinstance(raw, list) and all(isinstance(t, str) for t in raw):
        return raw
    if not isinstance(raw, str):
        ctx.error("manifest_invalid_value", pointer, "type must be a string")
        return None
    if raw in JSON_TYPES:
        return raw
    lowered = raw.lower()
    if lowered in JSON_TYPES:
        return lowered
    if lowered in TYPE_SYNONYMS:
        ctx.warn("type_synonym", pointer, f"{raw!r} read as {TYPE_SYNONYMS[lowered]!r}")
        return TYPE_SYNONYMS[lowered]
    ctx.warn("unknown_type", pointer, f"{raw!r} is no JSON Schema type; left untyped")
    return None


def schema_to_list(schema: dict[str, Any], *, required_default: bool) -> list[dict[str, Any]]:
    """The parameter list closest to ``schema``; the caller checks it reads back equal."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return []
    required = schema.get("required", [])
    entries: list[dict[str, Any]] = []
    for name, prop in properties.items():
        entry: dict[str, Any] = {"name": name}
        if isinstance(prop, dict):
            if "type" in prop:
                entry["type"] = prop["type"]
            is_required = isinstance(required, list) and name in required
            if is_required != required_default:
                entry["required"] = is_required
            for key in ("default", "description"):
                if key in prop:
                    entry[key] = prop[key]
            entry.update({k: v for k, v in prop.items() if k not in _ENTRY_KEYS})
        entries.append(entry)
    return entries
