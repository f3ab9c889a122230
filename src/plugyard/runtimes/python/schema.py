"""A typed Python function, read as an operation: JSON Schemas and descriptions.

Parameters become an object schema built by pydantic from the signature (defaults,
``Annotated[..., Field(description=...)]``, enums and ``Literal``), with three
simplifications that make it what a hand-written manifest says:

- no ``title`` keywords (pydantic derives them from names; they say nothing);
- ``$defs`` inlined where they are not recursive;
- an optional parameter whose default is ``None`` (``x: str | None = None``) is written as
  its type, not required, without a default: a caller omits it rather than sending
  ``null``, and the function receives its default.

The return annotation becomes the output schema as pydantic serialises it: an object
type (a model, a ``TypedDict``, a dataclass, ``dict``) gives an object schema, any other
type the schema of that value (``int`` → ``{"type": "integer"}``) — the data is the value
as returned, never wrapped. No annotation, ``Any`` and ``object`` give no output schema.

Descriptions come from the docstring (Google, NumPy or reST, via ``docstring_parser``):
its text describes the operation, its parameter entries the parameters that have no
``Field`` description, and its returns entry the output.
"""

from __future__ import annotations

import collections.abc
import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import docstring_parser
from pydantic import BaseModel, Field, TypeAdapter, create_model

from plugyard.runtimes.base import Outcome
from plugyard.runtimes.python.names import INJECTED

_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SINGLE = (
    "items", "additionalProperties", "not", "if", "then", "else", "contains",
    "propertyNames", "unevaluatedProperties", "unevaluatedItems",
)  # fmt: skip
_NATIVE: frozenset[Any] = frozenset({str, int, float, bool, type(None), Any, object})
_CONTAINERS = frozenset({list, dict, collections.abc.Sequence, collections.abc.Mapping})
Converter = Callable[[Any], Any]


@dataclass(frozen=True)
class Doc:
    description: str
    parameters: dict[str, str]
    returns: str | None


def read_doc(func: Callable[..., Any]) -> Doc:
    text = inspect.getdoc(func)
    if not text:
        return Doc("", {}, None)
    parsed = docstring_parser.parse(text)
    parameters = {p.arg_name: p.description for p in parsed.params if p.description}
    returns = parsed.returns.description if parsed.returns else None
    return Doc((parsed.description or "").strip(), parameters, returns or None)


def hints(func: Callable[..., Any]) -> dict[str, Any]:
    """Resolved annotations (``from __future__ import annotations`` included)."""
    return typing.get_type_hints(func, include_extras=True)


def parameters_schema(
    func: Callable[..., Any], doc: Doc
) -> tuple[dict[str, Any], dict[str, Converter]]:
    """The object schema of ``func``'s parameters and the converters it needs."""
    annotations = hints(func)
    fields: dict[str, Any] = {}
    converters: dict[str, Converter] = {}
    names: list[str] = []
    parameters = list(inspect.signature(func).parameters.values())
    for p in parameters:
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        if p.name in INJECTED:
            continue
        if p.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(f"{func.__qualname__}: parameter {p.name!r} is positional-only")
        annotation = annotations.get(p.name, Any)
        default = ... if p.default is inspect.Parameter.empty else p.default
        # Aliased field names: a parameter may be called 'json' or 'model_x' without
        # clashing with pydantic's own attributes.
        fields[f"p{len(names)}"] = (Annotated[annotation, Field(alias=p.name)], default)
        names.append(p.name)
        if not native(annotation):
            converters[p.name] = TypeAdapter(annotation).validate_python
    model: type[BaseModel] = create_model(f"{func.__name__}_parameters", **fields)
    schema = model.model_json_schema(by_alias=True)
    properties = schema.get("properties", {})
    for name, prop in properties.items():
        properties[name] = _optional_none(prop)
        if "description" not in properties[name] and name in doc.parameters:
            properties[name]["description"] = doc.parameters[name]
    schema.setdefault("properties", {})
    return clean(schema), converters


def output_schema(func: Callable[..., Any]) -> tuple[dict[str, Any] | None, Converter | None]:
    """The schema of what ``func`` returns, and how to turn its value into JSON data."""
    if inspect.isasyncgenfunction(func):
        return None, None
    annotation = hints(func).get("return", Any)
    if annotation in (Any, object):
        return None, None
    if annotation is None or annotation is type(None):
        return {"type": "null"}, None
    if inspect.isclass(annotation) and issubclass(annotation, Outcome):
        return None, None  # the runtime's own envelope: its data has no declared schema
    adapter: TypeAdapter[Any] = TypeAdapter(annotation)
    schema = clean(adapter.json_schema(mode="serialization"))
    if native(annotation):
        return schema, None

    def serialise(value: Any) -> Any:
        return adapter.dump_python(value, mode="json", warnings=False)

    return schema, serialise


def native(annotation: Any) -> bool:
    """Whether JSON data already has the annotated type (no conversion needed)."""
    if annotation in _NATIVE or annotation in _CONTAINERS:
        return True
    origin = get_origin(annotation)
    if origin is Annotated:
        return native(get_args(annotation)[0])
    if origin is Literal:
        return all(v is None or isinstance(v, str | int | float) for v in get_args(annotation))
    if origin in (Union, types.UnionType) or origin in _CONTAINERS:
        return all(native(a) for a in get_args(annotation) if a is not Ellipsis)
    return False


def clean(schema: dict[str, Any]) -> dict[str, Any]:
    """Without titles, with non-recursive ``$defs`` inlined."""
    return _inline(_strip(schema))


def _optional_none(prop: dict[str, Any]) -> dict[str, Any]:
    options = prop.get("anyOf")
    if "default" not in prop or prop["default"] is not None or not isinstance(options, list):
        return prop
    rest = [o for o in options if o != {"type": "null"}]
    if len(rest) == len(options) or not rest:
        return prop
    kept = {k: v for k, v in prop.items() if k not in ("anyOf", "default")}
    inner = rest[0] if len(rest) == 1 else {"anyOf": rest}
    return {**inner, **kept}


def _strip(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key in _MAPS and isinstance(value, dict):
            out[key] = {name: _strip(sub) for name, sub in value.items()}
        elif key in _LISTS and isinstance(value, list):
            out[key] = [_strip(sub) for sub in value]
        elif key in _SINGLE:
            out[key] = _strip(value)
        else:
            out[key] = value
    return out


class _Recursive(Exception):
    pass


def _inline(schema: dict[str, Any]) -> dict[str, Any]:
    definitions = schema.get("$defs")
    if not isinstance(definitions, dict):
        return schema
    body = {k: v for k, v in schema.items() if k != "$defs"}

    def resolve(node: Any, seen: frozenset[str]) -> Any:
        if isinstance(node, list):
            return [resolve(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            if name in seen or name not in definitions:
                raise _Recursive
            rest = {k: resolve(v, seen) for k, v in node.items() if k != "$ref"}
            return {**resolve(definitions[name], seen | {name}), **rest}
        return {k: resolve(v, seen) for k, v in node.items()}

    try:
        inlined: dict[str, Any] = resolve(body, frozenset())
    except _Recursive:
        return schema
    return inlined
