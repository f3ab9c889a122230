"""How operation ids find code: HomeClaw's normalisation and the MRP family method names."""

from __future__ import annotations

from functools import cache

from plugyard.manifest.families import contract

#: Keyword parameters the runtime fills itself instead of taking them from ``params``.
INJECTED = frozenset({"context", "host", "config"})
#: The Shu entry method: called as ``execute(params, context, host)``.
EXECUTE = "execute"
#: First-parameter names that mark a plain ``execute`` function as Shu-style.
SHU_FIRST_PARAMETERS = frozenset({"params", "parameters"})


def normalise(name: str) -> str:
    """HomeClaw's lookup rule: lower case, ``-`` and spaces read as ``_``."""
    return name.strip().lower().replace("-", "_").replace(" ", "_")


@cache
def family_method_names(family: str, operation_id: str) -> tuple[str, ...]:
    """The names a family method may have in code: snake_case first, then MRP's camelCase."""
    found = contract(family)
    if found is None:
        return ()
    for op in found.operations:
        if op.id == operation_id:
            return (op.id, op.method) if op.method != op.id else (op.id,)
    return ()


@cache
def family_operation_id(family: str, name: str) -> str | None:
    """The operation id a code name (``retrieve``, ``onSourceText``) stands for."""
    found = contract(family)
    if found is None:
        return None
    for op in found.operations:
        if name in (op.id, op.method):
            return op.id
    return None
