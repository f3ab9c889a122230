"""OpenAI strict function definitions (``strict: true``).

:func:`strict_parameters` rewrites a parameters schema into the subset strict mode accepts
(:mod:`.strict_rules` lists it) so that every call the model can make under the rewrite is
one the original schema describes, once :func:`.strict_arguments.from_strict_arguments`
has dropped the nulls that stand for left-out optional parameters:

- every object is closed and requires all its properties; one that was optional takes
  ``null`` as well;
- what strict mode lacks but a model can read as text (``default``, ``examples``,
  ``minLength``, ``maxLength``, a ``format`` outside the supported list, ``uniqueItems``,
  ``minProperties``, ``maxProperties``) moves into the description; the executor still
  enforces it against the plugin's own schema;
- a list of types becomes an ``anyOf``; an untyped ``enum`` or ``const`` takes its values'
  type; a ``oneOf`` whose branches cannot overlap becomes an ``anyOf``; an ``allOf`` is
  merged; a ``$ref`` with keywords beside it is inlined; annotations (``x-…``,
  ``$comment``, ``deprecated`` …) go.

What cannot be rewritten without changing what a call may carry raises :class:`NotStrict`
with the pointer and the rule: a value of any type, a map (an object with free keys,
``patternProperties``), an array without ``items``, tuples, conditionals, a ``oneOf``
whose branches may overlap, a schema over the size limits. :func:`strict_tool` then
exports that tool as it was, with ``strict: false``: OpenAI takes strict and non-strict
functions in one request.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

import jsonschema_rs

from plugyard.errors import ExportError, Problem
from plugyard.manifest.exporters.strict_rules import (
    ARRAY_KEYWORDS,
    FORMATS,
    KEYWORDS,
    NUMBER_KEYWORDS,
    TYPES,
    fits,
    json_type,
    strict_violations,
)
from plugyard.manifest.pointer import pointer_join, resolve, split

#: Keywords with no strict form: dropping them would let through calls the schema refuses,
#: and no description can carry them reliably.
REFUSED = frozenset(
    {
        "not", "if", "then", "else", "dependentSchemas", "dependentRequired", "dependencies",
        "prefixItems", "additionalItems", "contains", "minContains", "maxContains",
        "patternProperties", "propertyNames", "unevaluatedItems", "unevaluatedProperties",
        "$dynamicRef", "$recursiveRef",
    }
)  # fmt: skip
#: Keywords moved into the description, in this order.
NOTED = (
    "default", "examples", "minLength", "maxLength", "format", "uniqueItems",
    "minProperties", "maxProperties",
)  # fmt: skip
ANNOTATIONS = ("title", "description")
_APPLICATORS = frozenset({"allOf", "oneOf", "definitions"})
_OBJECT_KEYWORDS = ("properties", "required", "additionalProperties")
_NULL: dict[str, Any] = {"type": "null"}


class NotStrict(ExportError):
    """A schema with no strict form: where (a JSON pointer into it) and why."""

    def __init__(self, pointer: str, rule: str) -> None:
        super().__init__(f"{pointer or '/'}: {rule}")
        self.pointer = pointer
        self.rule = rule


def strict_parameters(schema: Any) -> dict[str, Any]:
    """``schema`` rewritten for strict mode; raises :class:`NotStrict` when it has no
    strict form. Applied to its own output it changes nothing."""
    if not isinstance(schema, dict):
        raise NotStrict("", "the parameters must be an object schema")
    if not _valid_schema(schema):
        raise NotStrict("", "the parameters are not a valid JSON Schema")
    rewrite = _Rewrite(schema)
    body = {k: v for k, v in schema.items() if k not in ("$defs", "definitions")}
    out = rewrite.schema(body, "", root=True)
    definitions = rewrite.definitions()
    if definitions:
        out["$defs"] = definitions
    violations = strict_violations(out)
    if violations:
        raise NotStrict(*violations[0])
    return out


def strict_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI tool definition with strict parameters and ``strict: true``, or the same
    definition with ``strict: false`` when its parameters have no strict form."""
    function = tool["function"]
    try:
        parameters = strict_parameters(function["parameters"])
    except NotStrict:
        return {**tool, "function": {**function, "strict": False}}
    return {**tool, "function": {**function, "parameters": parameters, "strict": True}}


def strict_tools(tools: Sequence[dict[str, Any]], fmt: str) -> list[dict[str, Any]]:
    """``tools`` of ``fmt`` in strict form. Only OpenAI has one: the other formats are
    returned as they are, so a host can pass one flag whatever format it serves."""
    if fmt != "openai":
        return list(tools)
    return [strict_tool(tool) for tool in tools]


def strict_problems(tools: Sequence[dict[str, Any]]) -> list[Problem]:
    """Why each OpenAI tool exported with ``strict: false`` has no strict form: the
    pointer into its parameters, and a message naming the tool. ``document`` is the
    tool's index in ``tools``."""
    problems: list[Problem] = []
    for index, tool in enumerate(tools):
        function = tool.get("function", {})
        if function.get("strict") is not False:
            continue
        try:
            strict_parameters(function.get("parameters"))
        except NotStrict as exc:
            where = exc.pointer or "/"
            message = f"{function.get('name')} at {where}: {exc.rule}; exported with strict: false"
            problems.append(Problem("export_unsupported", exc.pointer, message, index))
    return problems


def accepts_null(schema: dict[str, Any]) -> bool:
    """Whether a schema certainly admits ``null`` (``$ref`` targets are not followed)."""
    if "anyOf" in schema:
        return any(isinstance(b, dict) and accepts_null(b) for b in schema["anyOf"])
    declared = schema.get("type")
    typed = declared == "null" or (isinstance(declared, list) and "null" in declared)
    return (
        typed
        and ("enum" not in schema or None in schema["enum"])
        and ("const" not in schema or schema["const"] is None)
    )


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` admitting ``null`` too, in a form strict mode accepts."""
    if accepts_null(schema):
        return schema
    if "anyOf" in schema:
        return {**schema, "anyOf": [*schema["anyOf"], _NULL]}
    if "$ref" in schema or "const" in schema:
        notes = {k: schema[k] for k in ANNOTATIONS if k in schema}
        inner = {k: v for k, v in schema.items() if k not in ANNOTATIONS}
        return {"anyOf": [inner, _NULL], **notes}
    out = dict(schema)
    if isinstance(schema["type"], str):
        out["type"] = [schema["type"], "null"]
    if "enum" in out:
        out["enum"] = [*out["enum"], None]
    return out


def _valid_schema(schema: dict[str, Any]) -> bool:
    try:
        return bool(jsonschema_rs.meta.is_valid(schema))
    except jsonschema_rs.ReferencingError:  # a $schema no one knows
        return False


def _kept(key: str) -> bool:
    """Whether ``key`` says something about valid values (else it is an annotation)."""
    return key in KEYWORDS or key in REFUSED or key in NOTED or key in _APPLICATORS


def _noted(key: str, value: Any) -> bool:
    return key in NOTED and not (key == "format" and value in FORMATS)


def _types_meet(a: Any, b: Any) -> Any:
    left = {a} if isinstance(a, str) else set(a)
    right = {b} if isinstance(b, str) else set(b)
    both = left & right
    if ("integer" in left and "number" in right) or ("number" in left and "integer" in right):
        both.add("integer")
    return next(iter(both)) if len(both) == 1 else sorted(both)


class _Rewrite:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        # $ref being inlined along the current path: meeting one again is a cycle.
        self.inlining: list[str] = []

    def schema(self, node: Any, at: str, *, root: bool = False) -> dict[str, Any]:
        if not isinstance(node, dict):
            raise NotStrict(at, "a boolean schema has no strict form")
        refused = sorted(REFUSED & node.keys())
        if refused:
            raise NotStrict(pointer_join(at, refused[0]), f"{refused[0]} has no strict form")
        if "$ref" in node:
            return self.ref(node, at, root)
        if "allOf" in node:
            return self.all_of(node, at, root)
        if root and ("anyOf" in node or "oneOf" in node):
            key = "anyOf" if "anyOf" in node else "oneOf"
            article = "an" if key == "anyOf" else "a"
            raise NotStrict(pointer_join(at, key), f"the root may not be {article} {key}")
        if "oneOf" in node:
            return self.schema(self.one_of(node, at), at)
        if "anyOf" in node:
            return self.any_of(node, at)
        return self.typed(node, at, root)

    # references and combinations -------------------------------------------------------

    def target(self, ref: Any, at: str) -> tuple[str, Any]:
        """The strict spelling of a ``$ref`` and the schema it names."""
        where = pointer_join(at, "$ref")
        if ref == "#":
            return "#", self.root
        if isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/")):
            tokens = split(ref[1:])
            if len(tokens) == 2:
                try:
                    found = resolve(self.root, ref[1:])
                except KeyError:
                    raise NotStrict(where, f"{ref!r} points nowhere") from None
                return "#" + pointer_join("/$defs", tokens[1]), found
        raise NotStrict(where, "a $ref must name the root or one of its $defs")

    def ref(self, node: dict[str, Any], at: str, root: bool) -> dict[str, Any]:
        ref = node["$ref"]
        spelled, found = self.target(ref, at)
        beside = {k: v for k, v in node.items() if k != "$ref" and (_kept(k) or k in ANNOTATIONS)}
        if not beside and not root:
            return {"$ref": spelled}
        # Strict mode takes a $ref alone: one with keywords beside it is written out.
        return self.inlined([ref], [beside, found], at, root)

    def all_of(self, node: dict[str, Any], at: str, root: bool) -> dict[str, Any]:
        branches = node["allOf"]
        if not isinstance(branches, list) or not branches:
            raise NotStrict(pointer_join(at, "allOf"), "allOf must be a non-empty list")
        parts: list[Any] = [{k: v for k, v in node.items() if k != "allOf"}]
        refs: list[str] = []
        for index, branch in enumerate(branches):
            if isinstance(branch, dict) and "$ref" in branch:
                _, found = self.target(branch["$ref"], pointer_join(at, "allOf", index))
                refs.append(branch["$ref"])
                parts.extend([{k: v for k, v in branch.items() if k != "$ref"}, found])
            else:
                parts.append(branch)
        return self.inlined(refs, parts, at, root)

    def inlined(self, refs: list[str], parts: list[Any], at: str, root: bool) -> dict[str, Any]:
        if any(ref in self.inlining for ref in refs):
            raise NotStrict(at, "a recursive schema that must be written out has no strict form")
        merged = self.combine(parts, at)
        self.inlining.extend(refs)
        try:
            return self.schema(merged, at, root=root)
        finally:
            del self.inlining[len(self.inlining) - len(refs) :]

    def combine(self, parts: list[Any], at: str) -> dict[str, Any]:
        """One schema that means all of ``parts``; the first part's annotations win."""
        out: dict[str, Any] = {}
        if not all(isinstance(p, dict) for p in parts):
            raise NotStrict(at, "a boolean schema has no strict form")
        with_properties = sum("properties" in p for p in parts)
        if with_properties > 1 and any("additionalProperties" in p for p in parts):
            raise NotStrict(at, "allOf of objects with additionalProperties has no strict form")
        for part in parts:
            for key, value in part.items():
                if (key == "properties" and not isinstance(value, dict)) or (
                    key == "required" and not isinstance(value, list)
                ):
                    raise NotStrict(pointer_join(at, key), f"{key} of the wrong type")
                if key not in out:
                    out[key] = copy.deepcopy(value)
                elif key in ANNOTATIONS or key in ("default", "examples"):
                    continue
                elif key == "properties":
                    for name, sub in value.items():
                        if out[key].setdefault(name, copy.deepcopy(sub)) != sub:
                            raise NotStrict(at, f"allOf gives {name!r} two schemas")
                elif key == "required":
                    out[key] = list(dict.fromkeys([*out[key], *value]))
                elif key == "allOf":
                    out[key] = [*out[key], *value]
                elif key == "type":
                    out[key] = _types_meet(out[key], value)
                    if not out[key]:
                        raise NotStrict(at, "allOf branches share no type")
                elif out[key] != value:
                    raise NotStrict(at, f"allOf branches disagree on {key}")
        return out

    def one_of(self, node: dict[str, Any], at: str) -> dict[str, Any]:
        branches = node["oneOf"]
        where = pointer_join(at, "oneOf")
        if "anyOf" in node:
            raise NotStrict(where, "oneOf beside anyOf has no strict form")
        if not isinstance(branches, list) or not branches:
            raise NotStrict(where, "oneOf must be a non-empty list")
        seen = [self.peek(b, pointer_join(where, i)) for i, b in enumerate(branches)]
        if not (_disjoint_types(seen) or _discriminated(seen)):
            raise NotStrict(where, "a oneOf whose branches may overlap has no strict form")
        rest = {k: v for k, v in node.items() if k != "oneOf"}
        return {**rest, "anyOf": branches}

    def peek(self, node: Any, at: str) -> dict[str, Any]:
        if not isinstance(node, dict):
            raise NotStrict(at, "a boolean schema has no strict form")
        if "$ref" in node:
            found = self.target(node["$ref"], at)[1]
            return found if isinstance(found, dict) else {}
        return node

    def any_of(self, node: dict[str, Any], at: str) -> dict[str, Any]:
        branches = node["anyOf"]
        if not isinstance(branches, list) or not branches:
            raise NotStrict(pointer_join(at, "anyOf"), "anyOf must be a non-empty list")
        shared = {
            k: v
            for k, v in node.items()
            if k != "anyOf" and _kept(k) and k not in ANNOTATIONS and not _noted(k, v)
        }
        out: list[dict[str, Any]] = []
        for index, branch in enumerate(branches):
            here = pointer_join(at, "anyOf", index)
            # Keywords beside anyOf hold for every branch: each branch carries them.
            part = self.combine([branch, shared], here) if shared else branch
            out.append(self.schema(part, here))
        return _annotated({"anyOf": out}, node)

    # typed schemas ---------------------------------------------------------------------

    def typed(self, node: dict[str, Any], at: str, root: bool) -> dict[str, Any]:
        kinds, takes_null = _types(node, at)
        if root and (kinds != ["object"] or takes_null):
            raise NotStrict(at, "the parameters must be an object")
        if len(kinds) > 1:
            return self.split(node, kinds, takes_null, at)
        kind = kinds[0] if kinds else "null"
        out: dict[str, Any] = {"type": [kind, "null"] if takes_null and kind != "null" else kind}
        for key in ("enum", "const"):
            if key in node:
                out[key] = copy.deepcopy(node[key])
        if kind == "string":
            if "pattern" in node:
                out["pattern"] = node["pattern"]
            if node.get("format") in FORMATS:
                out["format"] = node["format"]
        elif kind in ("number", "integer"):
            out.update(
                (k, node[k])
                for k in NUMBER_KEYWORDS
                if k in node and json_type(node[k]) in ("integer", "number")
            )
        elif kind == "array":
            if "items" not in node:
                raise NotStrict(at, "an array of any values (no items) has no strict form")
            if isinstance(node["items"], list):
                raise NotStrict(pointer_join(at, "items"), "a tuple has no strict form")
            out["items"] = self.schema(node["items"], pointer_join(at, "items"))
            out.update((k, node[k]) for k in ARRAY_KEYWORDS if k in node)
        elif kind == "object":
            self.object(node, at, root, out)
        return _annotated(out, node)

    def split(
        self, node: dict[str, Any], kinds: list[str], takes_null: bool, at: str
    ) -> dict[str, Any]:
        """A schema of several types as an anyOf of one branch per type."""
        branches: list[dict[str, Any]] = []
        for kind in kinds:
            branch: dict[str, Any] = {
                k: v
                for k, v in node.items()
                if _kept(k) and not _noted(k, v) and k not in ANNOTATIONS and k != "type"
            }
            branch["type"] = kind
            if "enum" in node:
                branch["enum"] = [v for v in node["enum"] if fits(v, frozenset({kind}))]
                if not branch["enum"]:
                    continue
            if "const" in node and not fits(node["const"], frozenset({kind})):
                continue
            branches.append(self.typed(branch, at, False))
        if (
            takes_null
            and ("enum" not in node or None in node["enum"])
            and ("const" not in node or node["const"] is None)
        ):
            branches.append(dict(_NULL))
        return _annotated({"anyOf": branches}, node)

    def object(self, node: dict[str, Any], at: str, root: bool, out: dict[str, Any]) -> None:
        properties = node.get("properties")
        free = node.get("additionalProperties")
        if free is not None and free is not False:
            raise NotStrict(
                pointer_join(at, "additionalProperties"),
                "an object with free keys (a map) has no strict form",
            )
        if properties is None:
            # The root without properties declares no parameters; elsewhere it is a map.
            if free is not False and not root:
                raise NotStrict(at, "an object with free keys (a map) has no strict form")
            properties = {}
        if not isinstance(properties, dict):
            raise NotStrict(pointer_join(at, "properties"), "properties must be an object")
        required = node.get("required", [])
        missing = [name for name in required if name not in properties]
        if missing:
            raise NotStrict(
                pointer_join(at, "required"), f"{missing[0]!r} is required but has no schema"
            )
        written: dict[str, Any] = {}
        for name, sub in properties.items():
            child = self.schema(sub, pointer_join(at, "properties", name))
            written[name] = child if name in required else nullable(child)
        out["properties"] = written
        out["required"] = list(written)
        out["additionalProperties"] = False

    def definitions(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in ("$defs", "definitions"):
            found = self.root.get(key)
            if not isinstance(found, dict):
                continue
            for name, sub in found.items():
                at = pointer_join(f"/{key}", name)
                if name in out:
                    raise NotStrict(at, "defined in both $defs and definitions")
                out[name] = self.schema(sub, at)
        return out


def _types(node: dict[str, Any], at: str) -> tuple[list[str], bool]:
    """The types a schema admits besides null, and whether it admits null."""
    declared = node.get("type")
    if isinstance(declared, str):
        found = [declared]
    elif isinstance(declared, list) and declared and all(isinstance(t, str) for t in declared):
        found = list(dict.fromkeys(declared))
    elif declared is not None:
        raise NotStrict(pointer_join(at, "type"), "type must name JSON types")
    elif isinstance(node.get("enum"), list) and node["enum"]:
        found = list(dict.fromkeys(json_type(v) for v in node["enum"]))
        if {"array", "object"} & set(found):
            raise NotStrict(pointer_join(at, "enum"), "an enum of arrays or objects")
    elif "const" in node:
        found = [json_type(node["const"])]
    elif any(k in node for k in _OBJECT_KEYWORDS):
        found = ["object"]
    elif any(k in node for k in ("items", *ARRAY_KEYWORDS)):
        found = ["array"]
    elif any(k in node for k in ("pattern", "format", "minLength", "maxLength")):
        found = ["string"]
    elif any(k in node for k in NUMBER_KEYWORDS):
        found = ["number"]
    else:
        raise NotStrict(at, "a value of any JSON type has no strict form")
    unknown = [t for t in found if t not in TYPES]
    if unknown:
        raise NotStrict(pointer_join(at, "type"), f"{unknown[0]!r} is no JSON type")
    kinds = [t for t in found if t != "null"]
    if "number" in kinds and "integer" in kinds:
        kinds.remove("integer")  # every integer is a number
    return kinds, "null" in found


def _annotated(out: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    for key in ANNOTATIONS:
        if isinstance(node.get(key), str):
            out[key] = node[key]
    notes = [
        f"{key}: {json.dumps(node[key], ensure_ascii=False)}"
        for key in NOTED
        if key in node and _noted(key, node[key])
    ]
    if notes:
        text = "; ".join(notes)
        described = out.get("description")
        out["description"] = f"{described} ({text})" if described else text
    return out


def _declared_types(node: dict[str, Any]) -> set[str] | None:
    declared = node.get("type")
    if isinstance(declared, str):
        found = {declared}
    elif isinstance(declared, list):
        found = set(declared)
    elif isinstance(node.get("enum"), list):
        found = {json_type(v) for v in node["enum"]}
    elif "const" in node:
        found = {json_type(node["const"])}
    else:
        return None
    if "number" in found:
        found.add("integer")  # so that integer and number are seen to overlap
    return found


def _disjoint_types(branches: list[dict[str, Any]]) -> bool:
    seen: set[str] = set()
    for branch in branches:
        types = _declared_types(branch)
        if types is None or types & seen:
            return False
        seen |= types
    return True


def _discriminated(branches: list[dict[str, Any]]) -> bool:
    """Objects told apart by one required property with distinct const or enum values."""
    if not all(isinstance(b.get("properties"), dict) for b in branches):
        return False
    names = set.intersection(*(set(b.get("required", [])) for b in branches))
    for name in sorted(names):
        values: list[set[str]] = []
        for branch in branches:
            sub = branch["properties"].get(name)
            if not isinstance(sub, dict):
                break
            options = [sub["const"]] if "const" in sub else sub.get("enum")
            if not isinstance(options, list):
                break
            values.append({json.dumps(v, sort_keys=True) for v in options})
        else:
            if sum(map(len, values)) == len(set().union(*values)):
                return True
    return False
