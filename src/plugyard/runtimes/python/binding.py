"""Which code answers each operation of a descriptor, found once per load.

The loaded object may be a :class:`PluginDefinition` (or a module holding one), a class
(instantiated once, with ``config=`` when its constructor takes it), an instance, a
module, or one function. For each operation, in this order:

1. a decorated function of the definition;
2. a family method (MRP): the operation id in snake_case, or MRP's camelCase name;
3. a callable named after the operation, normalised like HomeClaw (``Fetch-Weather`` →
   ``fetch_weather``); named ``execute``, a method (or a function whose first parameter
   is ``params``) is called Shu-style, anything else with keyword arguments;
4. an operation of kind ``action`` and a ``perform_action`` method: Shu's Actions API
   (:mod:`.actions`);
5. an ``execute`` method: Shu's single entry answers every operation.

A module whose own functions answer none of the operations hands over to the class
defined in it that answers the most (a HomeClaw plugin class). The optional KB hooks of
DS027 (``on_source_text``, ``on_session_event``) answer ``skipped`` and a planner's
``record_outcome`` nothing when the code has no method for them.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from plugyard.manifest.families import contract
from plugyard.manifest.model import Operation, PluginDescriptor
from plugyard.runtimes.python.actions import PERFORM, action_handler
from plugyard.runtimes.python.decorator import PluginDefinition, definition_of, spec_of
from plugyard.runtimes.python.handler import Handler, SignatureError, analyse, first_parameter
from plugyard.runtimes.python.names import EXECUTE, SHU_FIRST_PARAMETERS, family_method_names
from plugyard.runtimes.python.names import normalise as normalised


class BindError(Exception):
    """The code does not answer the descriptor; the message is the reason."""


@dataclass(frozen=True, slots=True)
class Binding:
    handlers: Mapping[str, Handler]
    #: what the handlers were taken from: a definition, an instance or a module
    owner: Any
    definition: PluginDefinition | None = None


def bind(root: Any, descriptor: PluginDescriptor) -> Binding:
    definition = _definition(root, descriptor.id)
    if definition is not None:
        return _bind_definition(definition, descriptor)
    if inspect.isclass(root):
        root = instantiate(root, descriptor.config)
    elif isinstance(root, types.ModuleType):
        root = _owner(root, descriptor)
    elif _is_function(root):
        return _bind_function(root, descriptor)
    handlers: dict[str, Handler] = {}
    missing: list[str] = []
    for op in descriptor.operations:
        handler = _handler(root, op, descriptor.family) or _hook_default(descriptor.family, op)
        if handler is None:
            missing.append(op.id)
        else:
            handlers[op.id] = handler
    if missing:
        raise BindError(f"no code for operation(s) {', '.join(missing)} in {_label(root)}")
    return Binding(handlers, root)


def instantiate(cls: type[Any], config: Mapping[str, Any]) -> Any:
    """One instance of a plugin class; ``config=`` is passed when the constructor takes it."""
    try:
        parameters = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return cls()
    if "config" in parameters:
        return cls(config=dict(config))
    needed = [
        name
        for name, p in parameters.items()
        if p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    if needed:
        raise BindError(f"cannot instantiate {cls.__qualname__}: it needs {', '.join(needed)}")
    return cls()


# --------------------------------------------------------------------------- definitions


def _definition(root: Any, plugin_id: str) -> PluginDefinition | None:
    found = definition_of(root)
    if found is not None or not isinstance(root, types.ModuleType):
        return found
    candidates = {id(d): d for v in vars(root).values() if (d := definition_of(v)) is not None}
    matching = [d for d in candidates.values() if d.id == plugin_id]
    if matching:
        return matching[0]
    return next(iter(candidates.values())) if len(candidates) == 1 else None


def _bind_definition(definition: PluginDefinition, descriptor: PluginDescriptor) -> Binding:
    specs = definition.specs
    handlers: dict[str, Handler] = {}
    missing: list[str] = []
    for op in descriptor.operations:
        spec = specs.get(op.id)
        if spec is None:
            default = _hook_default(descriptor.family, op)
            if default is None:
                missing.append(op.id)
            else:
                handlers[op.id] = default
            continue
        style = "family" if spec.family else "keywords"
        handlers[op.id] = _analysed(
            spec.func, style, inline_hint=spec.inline, converters=spec.converters,
            serialize=spec.serialize,
        )  # fmt: skip
    if missing:
        raise BindError(f"plugin {definition.id!r} declares no operation(s) {', '.join(missing)}")
    return Binding(handlers, definition, definition)


# ------------------------------------------------------------------------------ objects


def _handler(owner: Any, op: Operation, family: str) -> Handler | None:
    for name in family_method_names(family, op.id):
        method = getattr(owner, name, None)
        if callable(method):
            return _analysed(method, "family")
    found = _callables(owner).get(normalised(op.id))
    if found is not None:
        func = getattr(owner, found)
        return _analysed(func, "execute" if _shu(found, func, owner) else "keywords")
    perform = callable(getattr(owner, PERFORM, None))
    if op.kind == "action" and perform and not isinstance(owner, types.ModuleType):
        return action_handler(owner, op.id)  # Shu's Actions API
    execute = getattr(owner, EXECUTE, None)
    if callable(execute) and not isinstance(owner, types.ModuleType):
        return _analysed(execute, "execute")
    return None


def _bind_function(func: Callable[..., Any], descriptor: PluginDescriptor) -> Binding:
    if len(descriptor.operations) != 1:
        raise BindError(
            f"{_label(func)} is one function; the plugin has {len(descriptor.operations)} "
            "operations: name a module or a class instead"
        )
    op = descriptor.operations[0]
    spec = spec_of(func)
    if spec is not None:
        handler = _analysed(
            func, "family" if spec.family else "keywords", inline_hint=spec.inline,
            converters=spec.converters, serialize=spec.serialize,
        )  # fmt: skip
    elif family_method_names(descriptor.family, op.id):
        handler = _analysed(func, "family")
    else:
        handler = _analysed(func, "execute" if _shu(func.__name__, func, None) else "keywords")
    return Binding({op.id: handler}, func)


def _owner(module: types.ModuleType, descriptor: PluginDescriptor) -> Any:
    """The module itself, or the plugin class defined in it that answers the most."""
    ops = descriptor.operations
    if any(_handler(module, op, descriptor.family) for op in ops):
        return module
    best: tuple[int, type[Any] | None] = (0, None)
    for value in vars(module).values():
        if inspect.isclass(value) and value.__module__ == module.__name__:
            score = sum(_answers(value, op, descriptor.family) for op in ops)
            if score > best[0]:
                best = (score, value)
    return instantiate(best[1], descriptor.config) if best[1] is not None else module


def _answers(cls: type[Any], op: Operation, family: str) -> bool:
    names = {*family_method_names(family, op.id), EXECUTE}
    if any(callable(getattr(cls, n, None)) for n in names):
        return True
    return normalised(op.id) in _callables(cls)


def _callables(owner: Any) -> dict[str, str]:
    """Normalised name → public callable attribute name."""
    if isinstance(owner, types.ModuleType):
        names = [n for n, v in vars(owner).items() if callable(v) and not inspect.isclass(v)]
    else:
        names = [n for n in dir(owner) if callable(getattr(owner, n, None))]
    return {normalised(n): n for n in names if not n.startswith("_")}


def _shu(name: str, func: Callable[..., Any], owner: Any) -> bool:
    if name != EXECUTE:
        return False
    if owner is not None and not isinstance(owner, types.ModuleType):
        return True
    return first_parameter(func) in SHU_FIRST_PARAMETERS


def _hook_default(family: str, op: Operation) -> Handler | None:
    found = contract(family)
    if found is None:
        return None
    for item in found.operations:
        if item.id == op.id and "skipped" in item.statuses:
            return Handler(_skipped, "family", "inline")
        if item.id == op.id and item.id == "record_outcome":
            return Handler(_nothing, "family", "inline")
    return None


def _skipped() -> dict[str, Any]:
    return {"status": "skipped", "error": None}


def _nothing() -> None:
    return None


def _analysed(func: Callable[..., Any], style: Any, **options: Any) -> Handler:
    try:
        return analyse(func, style, **options)
    except SignatureError as exc:
        raise BindError(str(exc)) from None


def _is_function(value: Any) -> bool:
    return inspect.isfunction(value) or inspect.ismethod(value) or inspect.isbuiltin(value)


def _label(owner: Any) -> str:
    if isinstance(owner, types.ModuleType):
        return f"module {owner.__name__}"
    if _is_function(owner):
        return f"function {getattr(owner, '__qualname__', owner)!r}"
    return f"{type(owner).__qualname__} instance"
