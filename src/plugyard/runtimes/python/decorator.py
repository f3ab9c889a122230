"""Declare a plugin in Python: typed functions give exactly the descriptor a manifest would.

::

    weather = plugin(id="weather", name="Weather Plugin", description="Current weather.")

    @weather.operation(name="Get current weather")
    def fetch_weather(city: str, district: str | None = None) -> dict[str, Any]:
        '''Returns current weather for a city.

        Args:
            city: City name, e.g. Beijing.
            district: District within the city.
        '''

    weather.descriptor  # == the descriptor of the equivalent HomeClaw plugin.yaml

The signature and docstring become the operation's schemas and descriptions (see
:mod:`.schema`); an async generator is a streaming operation. :func:`tool` declares a
plugin of one function. A plugin of an MRP family (``family="kb"`` …) gets its family's
operations; its decorated functions are the family methods, called ``(input, ctx)``.

Defaults follow what a manifest beside in-process code gives: ``runtime: python`` (with
``entrypoint`` when one is named) and ``source: built-in``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict, TypeVar, Unpack, overload

from pydantic import JsonValue

from plugyard.manifest.families import contract, family_operations
from plugyard.manifest.model import (
    Effect,
    Family,
    Operation,
    OperationKind,
    Placement,
    PluginDescriptor,
    Role,
)
from plugyard.runtimes.python.handler import INLINE_ATTRIBUTE
from plugyard.runtimes.python.names import family_operation_id
from plugyard.runtimes.python.schema import Converter, parameters_schema, read_doc
from plugyard.runtimes.python.schema import output_schema as derived_output

F = TypeVar("F", bound=Callable[..., Any])
#: Where a function keeps its spec, and a single-function plugin its definition.
OPERATION_ATTRIBUTE = "__plugyard_operation__"
PLUGIN_ATTRIBUTE = "__plugyard_plugin__"


class _Auto:
    def __repr__(self) -> str:
        return "AUTO"


#: "Derive it from the code" (the default of ``output_schema``).
AUTO: Any = _Auto()


class OperationOptions(TypedDict, total=False):
    """What ``@definition.operation(...)`` takes; every key is optional."""

    id: str | None
    name: str | None
    description: str | None
    effect: Effect
    requires_approval: bool
    idempotent: bool
    inline: bool
    kind: OperationKind
    parameters: dict[str, JsonValue] | None
    output_schema: dict[str, JsonValue] | None
    output_description: str | None
    post_process: bool
    post_process_prompt: str | None
    required_scopes: Sequence[str]
    examples: Sequence[str]  # requests it answers, for discovery (docs/manifest.md)


@dataclass(frozen=True, slots=True)
class OperationSpec:
    """One decorated function: the operation it declares and how to call it."""

    func: Callable[..., Any]
    operation: Operation
    inline: bool = False
    family: bool = False
    converters: Mapping[str, Converter] = field(default_factory=dict)
    serialize: Converter | None = None


class PluginDefinition:
    """A plugin declared in code: its descriptor and the functions of its operations."""

    def __init__(
        self,
        id: str,
        *,
        name: str | None = None,
        version: str | None = None,
        description: str = "",
        description_long: str | None = None,
        family: Family = "tool",
        placement: Placement | str | Sequence[str] | None = None,
        role: Role | None = None,
        only_inside_group: bool = False,
        tags: Sequence[str] = (),
        entrypoint: str | None = None,
        source: str | None = "built-in",
        **fields: Any,
    ) -> None:
        data: dict[str, Any] = {
            "id": id,
            "name": name or id,
            "version": version,
            "description": description,
            "description_long": description_long,
            "family": family,
            "tags": tuple(tags),
            "runtime": {"kind": "python", "entrypoint": entrypoint},
            "source": source,
            **{key: tuple(v) if isinstance(v, list) else v for key, v in fields.items()},
        }
        if placement is not None or role is not None or only_inside_group:
            data["placement"] = _placement(placement, role, only_inside_group)
        self._data = {key: value for key, value in data.items() if value is not None}
        self._specs: dict[str, OperationSpec] = {}
        self._descriptor: PluginDescriptor | None = None
        self._descriptor = self._build()  # a bad field fails here, not at the first call

    @property
    def id(self) -> str:
        return str(self._data["id"])

    @property
    def family(self) -> Family:
        family: Family = self._data["family"]
        return family

    @property
    def descriptor(self) -> PluginDescriptor:
        if self._descriptor is None:
            self._descriptor = self._build()
        return self._descriptor

    @property
    def specs(self) -> Mapping[str, OperationSpec]:
        """Operation id → the decorated function that implements it."""
        return dict(self._specs)

    @overload
    def operation(self, func: F, /) -> F: ...
    @overload
    def operation(self, /, **options: Unpack[OperationOptions]) -> Callable[[F], F]: ...

    def operation(self, func: Any = None, /, **options: Unpack[OperationOptions]) -> Any:
        """Declare ``func`` as an operation (usable with or without arguments).

        Defaults: ``effect="read"``, ``kind="call"``, the flags false, the rest derived
        from the function. ``inline=True`` runs a sync function on the event loop: only
        for code that is known to be short. ``parameters`` and ``output_schema`` override
        what the signature says; ``output_schema=None`` declares none.
        """
        unknown = sorted(options.keys() - OperationOptions.__annotations__.keys())
        if unknown:
            raise TypeError(f"operation() got unexpected options {unknown}")

        def register(target: F) -> F:
            spec = self._spec(target, options)
            if spec.operation.id in self._specs:
                raise ValueError(f"plugin {self.id!r} already has operation {spec.operation.id!r}")
            self._specs[spec.operation.id] = spec
            try:
                self._descriptor = self._build()
            except BaseException:
                del self._specs[spec.operation.id]
                raise
            setattr(target, OPERATION_ATTRIBUTE, spec)
            if spec.inline:
                setattr(target, INLINE_ATTRIBUTE, True)
            return target

        return register(func) if func is not None else register

    def __repr__(self) -> str:
        return f"PluginDefinition({self.id!r}, operations={list(self._specs)})"

    # ------------------------------------------------------------------------ building

    def _build(self) -> PluginDescriptor:
        data = dict(self._data)
        if contract(self.family) is not None:
            data["operations"] = family_operations(self.family)
        else:
            data["operations"] = tuple(spec.operation for spec in self._specs.values())
        return PluginDescriptor.model_validate(data, strict=False)

    def _spec(self, func: Callable[..., Any], options: OperationOptions) -> OperationSpec:
        if not callable(func):
            raise TypeError(f"{func!r} is not a function")
        inline = options.get("inline", False)
        if contract(self.family) is not None:
            return self._family_spec(func, options.get("id"), inline)
        doc = read_doc(func)
        converters: dict[str, Converter] = {}
        parameters = options.get("parameters")
        if parameters is None:
            parameters, converters = parameters_schema(func, doc)
        serialize = None
        output_schema = options.get("output_schema", AUTO)
        if output_schema is AUTO:
            output_schema, serialize = derived_output(func)
        description = options.get("description")
        fields = {
            "id": options.get("id") or func.__name__,
            "name": options.get("name"),
            "description": description if description is not None else doc.description,
            "kind": options.get("kind", "call"),
            "parameters": parameters,
            "output_schema": output_schema,
            "output_description": options.get("output_description") or doc.returns,
            "effect": options.get("effect", "read"),
            "requires_approval": options.get("requires_approval", False),
            "idempotent": options.get("idempotent", False),
            "streaming": inspect.isasyncgenfunction(func),
            "required_scopes": tuple(options.get("required_scopes", ())),
            "post_process": options.get("post_process", False),
            "post_process_prompt": options.get("post_process_prompt"),
            "examples": tuple(options.get("examples", ())),
        }
        operation = Operation.model_validate(
            {k: v for k, v in fields.items() if v is not None}, strict=False
        )
        return OperationSpec(func, operation, inline, False, converters, serialize)

    def _family_spec(self, func: Callable[..., Any], id: str | None, inline: bool) -> OperationSpec:
        name = id or func.__name__
        op_id = family_operation_id(self.family, name)
        operation = next((op for op in family_operations(self.family) if op.id == op_id), None)
        if operation is None:
            known = ", ".join(op.id for op in family_operations(self.family))
            raise ValueError(f"{name!r} is no {self.family} family method (one of {known})")
        return OperationSpec(func, operation, inline, True)


def plugin(id: str, **fields: Any) -> PluginDefinition:
    """Declare a plugin; add its operations with ``@definition.operation``."""
    return PluginDefinition(id, **fields)


#: The operation's own options; ``id``, ``name`` and ``description`` are the plugin's.
_OPERATION_OPTIONS = frozenset(OperationOptions.__annotations__) - {"id", "name", "description"}


@overload
def tool(func: F, /) -> F: ...
@overload
def tool(
    *, id: str | None = None, operation: str | None = None, **options: Any
) -> Callable[[F], F]: ...


def tool(func: Any = None, /, **options: Any) -> Any:
    """Declare a plugin of one function: its id and its operation's id default to the
    function's name, its description to the docstring's. Options are those of
    :class:`PluginDefinition` and of :meth:`PluginDefinition.operation` (``operation=``
    names the operation when it differs from the function). The function is returned
    unchanged; :func:`definition_of` finds the plugin again."""

    def wrap(target: F) -> F:
        op_options = {k: v for k, v in options.items() if k in _OPERATION_OPTIONS}
        plugin_options = {
            k: v for k, v in options.items() if k not in _OPERATION_OPTIONS and k != "operation"
        }
        plugin_options.setdefault("description", read_doc(target).description)
        plugin_id = plugin_options.pop("id", None) or target.__name__
        definition = PluginDefinition(plugin_id, **plugin_options)
        definition.operation(id=options.get("operation"), **op_options)(target)
        setattr(target, PLUGIN_ATTRIBUTE, definition)
        return target

    return wrap(func) if func is not None else wrap


def definition_of(obj: Any) -> PluginDefinition | None:
    """The plugin declared by ``obj`` (a definition, or a function decorated with :func:`tool`)."""
    if isinstance(obj, PluginDefinition):
        return obj
    try:
        found = getattr(obj, PLUGIN_ATTRIBUTE, None)
    except Exception:  # a module-level object with an odd __getattr__ is no definition
        return None
    return found if isinstance(found, PluginDefinition) else None


def spec_of(func: Any) -> OperationSpec | None:
    found = getattr(func, OPERATION_ATTRIBUTE, None)
    return found if isinstance(found, OperationSpec) else None


def _placement(
    placement: Placement | str | Sequence[str] | None, role: Role | None, inside: bool
) -> Placement:
    if isinstance(placement, Placement):
        return placement
    capabilities = (placement,) if isinstance(placement, str) else tuple(placement or ())
    return Placement(
        capabilities=capabilities, role=role or "CAPABILITY_STAGE", only_inside_group=inside
    )
