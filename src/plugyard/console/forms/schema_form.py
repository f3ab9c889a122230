"""An operation's parameter schema as a form: a tree of fields the templates render.

Every Shu hint is read under both spellings (``x-ui`` and ``x_ui``): ``hidden`` fields
and ``x-binding`` fields (the host fills them) are not rendered, ``help`` and
``placeholder`` are shown, ``enum_labels``/``enum_help`` label a select's options, and
``show_when`` (``{field, equals}``, ``{field, in}`` or the map form) travels with the
field so the page can show or hide it — and the server judges it again on submit.
A nullable field gets an "Auto" choice (its label: ``x-ui.placeholder``).

Bounded work whatever the schema: local ``$ref`` is followed except into itself (a
cycle becomes a JSON box), nesting deeper than :data:`MAX_DEPTH` is a JSON box, and a
schema of more than :data:`MAX_FIELDS` fields is edited as one JSON document.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

MAX_FIELDS = 300
MAX_DEPTH = 6
Kind = Literal[
    "text", "integer", "number", "checkbox", "select", "multi", "lines", "json", "object"
]
_SCALARS = ("string", "integer", "number")


def ui_hints(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    """The Shu UI hints of one property, under either spelling."""
    for key in ("x-ui", "x_ui"):
        hints = spec.get(key)
        if isinstance(hints, Mapping):
            return hints
    return {}


@dataclass(frozen=True, slots=True)
class Option:
    value: str  # the JSON text of the enum value (what the form posts back)
    label: str
    help: str | None = None


@dataclass(slots=True)
class Field:
    name: str
    path: str  # the input's name: a JSON pointer into the parameters
    kind: Kind
    label: str
    required: bool = False
    nullable: bool = False
    help: str | None = None
    placeholder: str | None = None
    default: Any = None
    item: str | None = None  # the item type of a "lines" list
    options: tuple[Option, ...] = ()
    show_when: tuple[dict[str, Any], ...] = ()
    children: list[Field] = field(default_factory=list)
    note: str | None = None

    @property
    def default_text(self) -> str:
        """The default as an input shows it."""
        if self.default is None:
            return ""
        if self.kind == "lines" and isinstance(self.default, list):
            return "\n".join(str(v) for v in self.default)
        if self.kind in ("json",):
            return json.dumps(self.default, indent=2)
        if self.kind == "select":
            return json.dumps(self.default)
        return self.default if isinstance(self.default, str) else json.dumps(self.default)


@dataclass(slots=True)
class Form:
    """The fields of one operation's form, and what the host fills in itself."""

    fields: list[Field]
    bound: list[tuple[str, str]] = field(default_factory=list)  # (parameter, binding)
    hidden: list[str] = field(default_factory=list)
    whole_json: bool = False  # too big to render field by field
    note: str | None = None


def pointer(parent: str, name: str) -> str:
    return f"{parent}/{name.replace('~', '~0').replace('/', '~1')}"


class _Builder:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.count = 0
        self.form = Form([])

    def resolve(self, spec: Any, seen: tuple[str, ...]) -> tuple[Mapping[str, Any], str | None]:
        """``spec`` with a local ``$ref`` followed; the ref's name, or ``"cycle"``."""
        if not isinstance(spec, Mapping):
            return {}, None
        ref = spec.get("$ref")
        if not isinstance(ref, str):
            return spec, None
        if ref in seen or not ref.startswith("#"):
            return spec, "cycle" if ref in seen else "external"
        target: Any = self.root
        for part in ref[1:].split("/")[1:] if ref != "#" else []:
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, Mapping) else None
        return (target if isinstance(target, Mapping) else {}), ref

    def fields(
        self, schema: Mapping[str, Any], parent: str, depth: int, seen: tuple[str, ...]
    ) -> list[Field]:
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            return []
        required = schema.get("required")
        needed = set(required) if isinstance(required, list) else set()
        out: list[Field] = []
        for name, raw in properties.items():
            self.count += 1
            if self.count > MAX_FIELDS:
                self.form.whole_json = True
                return out
            spec, ref = self.resolve(raw, seen)
            hints = ui_hints(spec) or ui_hints(raw if isinstance(raw, Mapping) else {})
            binding = spec.get("x-binding") or (
                raw.get("x-binding") if isinstance(raw, Mapping) else None
            )
            if binding is not None and depth == 0:
                self.form.bound.append((str(name), str(binding)))
                continue
            if hints.get("hidden") is True:
                self.form.hidden.append(str(name))
                continue
            path = pointer(parent, str(name))
            built = self.field(str(name), path, spec, hints, depth, (*seen, ref) if ref else seen)
            if ref in ("cycle", "external"):
                built.kind, built.note = "json", "a recursive schema: enter this value as JSON"
            built.required = name in needed
            built.show_when = _conditions(hints.get("show_when"), parent)
            out.append(built)
        return out

    def field(
        self,
        name: str,
        path: str,
        spec: Mapping[str, Any],
        hints: Mapping[str, Any],
        depth: int,
        seen: tuple[str, ...],
    ) -> Field:
        types, nullable = _types(spec)
        title = spec.get("title")
        label = title if isinstance(title, str) and title.strip() else name
        description = spec.get("description")
        help_text = hints.get("help") if isinstance(hints.get("help"), str) else None
        if help_text is None and isinstance(description, str) and description:
            help_text = description
        placeholder = (
            hints.get("placeholder") if isinstance(hints.get("placeholder"), str) else None
        )
        made = Field(name, path, "json", label, nullable=nullable, help=help_text,
                     placeholder=placeholder, default=spec.get("default"))  # fmt: skip
        enum = spec.get("enum")
        if "const" in spec and not isinstance(enum, list):
            enum = [spec["const"]]
        if isinstance(enum, list) and enum:
            made.kind = "select"
            made.options = _options([v for v in enum if v is not None], hints)
            made.nullable = nullable or None in enum
            return made
        if len(types) != 1:
            return made  # several types (or none said): JSON says which
        kind = types[0]
        if kind == "object":
            if depth + 1 >= MAX_DEPTH:
                made.note = "nested too deep for a form: enter this value as JSON"
                return made
            made.children = self.fields(spec, path, depth + 1, seen)
            if made.children or isinstance(spec.get("properties"), Mapping):
                made.kind = "object"
            return made
        if kind == "array":
            items, _ = self.resolve(spec.get("items"), seen)
            item_enum = items.get("enum")
            if isinstance(item_enum, list) and item_enum:
                made.kind, made.options = "multi", _options(item_enum, ui_hints(items))
                return made
            item_types, _ = _types(items)
            if len(item_types) == 1 and item_types[0] in _SCALARS:
                made.kind, made.item = "lines", item_types[0]
            return made
        if kind == "boolean":
            made.kind = "select" if nullable else "checkbox"
            if nullable:
                made.options = _options([True, False], hints)
            return made
        if kind == "integer":
            made.kind = "integer"
        elif kind == "number":
            made.kind = "number"
        elif kind == "string":
            made.kind = "text"
        return made


def _types(spec: Mapping[str, Any]) -> tuple[list[str], bool]:
    """The non-null JSON types of ``spec`` and whether it allows null."""
    raw = spec.get("type")
    types = [raw] if isinstance(raw, str) else list(raw) if isinstance(raw, list) else []
    for branch_key in ("anyOf", "oneOf"):
        branches = spec.get(branch_key)
        if isinstance(branches, list) and not types:
            for branch in branches:
                if isinstance(branch, Mapping) and isinstance(branch.get("type"), str):
                    types.append(branch["type"])
                else:
                    types.append("?")
    nullable = "null" in types
    return [t for t in types if t != "null"], nullable


def _options(values: list[Any], hints: Mapping[str, Any]) -> tuple[Option, ...]:
    found_labels, found_helps = hints.get("enum_labels"), hints.get("enum_help")
    labels: Mapping[str, Any] = found_labels if isinstance(found_labels, Mapping) else {}
    helps: Mapping[str, Any] = found_helps if isinstance(found_helps, Mapping) else {}
    out = []
    for value in values[:500]:
        key = value if isinstance(value, str) else json.dumps(value)
        label = labels.get(key)
        tip = helps.get(key)
        out.append(Option(json.dumps(value), label if isinstance(label, str) else str(key),
                          tip if isinstance(tip, str) else None))  # fmt: skip
    return tuple(out)


def _conditions(hint: Any, parent: str) -> tuple[dict[str, Any], ...]:
    """``show_when`` as ``({path, in: [values]}, …)``, all of which must hold."""
    if not isinstance(hint, Mapping):
        return ()
    if isinstance(hint.get("field"), str):
        if "equals" in hint:
            return ({"path": pointer(parent, hint["field"]), "in": [hint["equals"]]},)
        if isinstance(hint.get("in"), list):
            return ({"path": pointer(parent, hint["field"]), "in": list(hint["in"])},)
        return ()
    return tuple({"path": pointer(parent, str(k)), "in": [v]} for k, v in hint.items())


def build_form(schema: Mapping[str, Any]) -> Form:
    """The form of a parameter schema (bounded work, see the module's doc)."""
    builder = _Builder(schema)
    builder.form.fields = builder.fields(schema, "", 0, ())
    if builder.form.whole_json:
        builder.form.fields = []
        builder.form.note = (
            f"this operation has more than {MAX_FIELDS} parameters: enter them as JSON"
        )
    return builder.form
