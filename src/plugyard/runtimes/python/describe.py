"""Refine a manifest's descriptor from its code, where the code knows more.

The manifest stays the contract: a field it sets is kept. What the code adds:

- a decorated function, or a typed plain function: the operation's description,
  parameters, output schema and output description when the manifest leaves them at
  their defaults, and ``streaming`` when the function is an async generator;
- a Shu plugin class: ``get_schema()`` replaces the parameters a Shu manifest can only
  guess (none, or the ``op`` examples) — with the ``op`` member Shu's executor adds when
  the manifest names operations and the schema lacks it —, ``get_output_schema()``
  gives the output schema,
  ``requires_permission()`` the permissions, ``list_actions()`` one operation of kind
  ``action`` per action (:mod:`.actions`).

Code that fails while it is asked (a schema method that raises, a schema that is not JSON
Schema data) adds nothing; describing never raises.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from plugyard.manifest.model import EMPTY_PARAMETERS, Operation, PluginDescriptor
from plugyard.runtimes.python.actions import declared_actions
from plugyard.runtimes.python.binding import Binding
from plugyard.runtimes.python.decorator import spec_of
from plugyard.runtimes.python.schema import output_schema, parameters_schema, read_doc

_DEFAULTS = {
    name: info.get_default(call_default_factory=True)
    for name, info in Operation.model_fields.items()
}
_FROM_CODE = ("description", "parameters", "output_schema", "output_description", "streaming")


def refine(descriptor: PluginDescriptor, binding: Binding) -> PluginDescriptor | None:
    """The descriptor with what the code adds, or ``None`` when it adds nothing."""
    operations: list[Operation] = []
    permissions = descriptor.permissions
    shu = False
    for op in descriptor.operations:
        handler = binding.handlers.get(op.id)
        if handler is None or handler.style == "family" or op.kind == "action":
            operations.append(op)  # a family's contract is fixed by its type
            continue
        if handler.style == "execute":
            shu = True
            operations.append(_from_shu(op, binding.owner))
            if not permissions:
                permissions = _permissions(binding.owner)
        else:
            operations.append(_from_function(op, handler.func))
    if shu:  # Shu's Actions API: what list_actions() declares, beside execute
        known = {op.id for op in operations}
        operations.extend(a for a in declared_actions(binding.owner) if a.id not in known)
    refined = descriptor.model_copy(
        update={"operations": tuple(operations), "permissions": permissions}
    )
    return None if refined == descriptor else refined


def _from_function(op: Operation, func: Callable[..., Any]) -> Operation:
    spec = spec_of(func)
    if spec is not None:
        code = spec.operation
    else:
        try:
            doc = read_doc(func)
            parameters, _ = parameters_schema(func, doc)
            output, _ = output_schema(func)
        except Exception:  # untyped or unresolvable annotations: the manifest stands
            return op.model_copy(update={"streaming": op.streaming or _streams(func)})
        code = Operation(
            id=op.id, description=doc.description, parameters=parameters,
            output_schema=output, output_description=doc.returns, streaming=_streams(func),
        )  # fmt: skip
    return _merged(op, {name: getattr(code, name) for name in _FROM_CODE})


def _from_shu(op: Operation, owner: Any) -> Operation:
    found: dict[str, Any] = {}
    parameters = _ask(owner, "get_schema")
    if isinstance(parameters, dict) and _guessed(op.parameters):
        guessed = op.parameters.get("properties")
        multi = isinstance(guessed, dict) and "op" in guessed  # the manifest names its ops
        found["parameters"] = _with_op(parameters) if multi else parameters
    output = _ask(owner, "get_output_schema")
    if isinstance(output, dict) and op.output_schema is None:
        found["output_schema"] = output
    if _streams(getattr(owner, "execute", None)):
        found["streaming"] = True
    if not found:
        return op
    try:
        return Operation.model_validate({**op.model_dump(), **found}, strict=False)
    except ValidationError:
        return op


def _with_op(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with the ``op`` member Shu's executor adds to a plugin's schema before
    it validates: a schema written per operation omits it, and one that allows no other
    property would refuse the ``op`` a Shu caller always sends. Not required here: a
    plugyard caller of a single-entry plugin may leave it out."""
    properties = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(properties, dict) or "op" in properties:
        return schema
    return {**schema, "properties": {**properties, "op": {"type": "string"}}}


def _merged(op: Operation, code: dict[str, Any]) -> Operation:
    updates = {
        name: value
        for name, value in code.items()
        if getattr(op, name) == _DEFAULTS[name] and value != _DEFAULTS[name]
    }
    return op.model_copy(update=updates) if updates else op


def _guessed(parameters: dict[str, Any]) -> bool:
    """Parameters a Shu manifest made up: none, or only the ``op`` examples."""
    properties = parameters.get("properties")
    return parameters == EMPTY_PARAMETERS or (
        isinstance(properties, dict) and set(properties) == {"op"} and "required" not in parameters
    )


def _permissions(owner: Any) -> tuple[str, ...]:
    found = _ask(owner, "requires_permission")
    if isinstance(found, str):
        return (found,)
    if isinstance(found, list | tuple) and all(isinstance(p, str) for p in found):
        return tuple(found)
    return ()


def _ask(owner: Any, name: str) -> Any:
    method = getattr(owner, name, None)
    if not callable(method):
        return None
    try:
        answer = method()
    except Exception:
        return None
    if inspect.isawaitable(answer):
        close = getattr(answer, "close", None)
        if close is not None:
            close()  # a coroutine we will not await: no "never awaited" warning
        return None
    return answer


def _streams(func: Any) -> bool:
    return func is not None and inspect.isasyncgenfunction(func)
