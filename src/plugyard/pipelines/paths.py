"""How a stage reads the context and writes back to it.

A *context path* names a value in the context: ``question``, ``guard.text``,
``docs.0`` (dotted, list indexes as numbers), a JSON pointer ``/a/b~1c`` for keys that
hold dots, or ``$`` for the whole context. A missing value is simply not passed, so the
plugin's own schema decides whether it was needed.

Writes go to top-level keys only. That keeps every branch and iteration isolated with
a shallow copy of the context: nothing a branch writes can reach into another's data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plugyard.manifest.pointer import split

WHOLE = "$"
#: What :func:`read` answers for a path the context does not hold.
MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()

Path = tuple[str, ...]


def compile_path(text: str) -> Path:
    """``text`` as path tokens; raises ``ValueError`` when it is not a path."""
    if text == WHOLE:
        return ()
    if text.startswith("/"):
        return tuple(split(text))
    body = text.removeprefix("$.")
    tokens = tuple(body.split("."))
    if not body or any(not t or t != t.strip() for t in tokens):
        raise ValueError(f"{text!r} is not a context path (e.g. question, guard.text, docs.0, $)")
    return tokens


def read(scope: Any, path: Path) -> Any:
    for token in path:
        if type(scope) is dict or isinstance(scope, Mapping):  # the first test is the fast one
            scope = scope.get(token, MISSING)
        elif isinstance(scope, list) and token.lstrip("-").isdigit():
            index = int(token)
            scope = scope[index] if -len(scope) <= index < len(scope) else MISSING
        else:
            return MISSING
        if scope is MISSING:
            return MISSING
    return scope


@dataclass(frozen=True, slots=True)
class Output:
    """Where a call's data goes. ``key``: all of it under one key. ``picks``: chosen
    fields, ``(key, path)`` each, key ``$`` merging an object. Neither: an object is
    merged key by key (OLO's putAll); anything else goes under the node's id."""

    key: str | None = None
    picks: tuple[tuple[str, Path], ...] = ()
    #: A condition, iterator or fork answers the group, not the context: by default
    #: nothing of theirs is written.
    discard: bool = False

    def apply(self, context: dict[str, Any], data: Any, node_id: str) -> None:
        if self.discard:
            return
        if self.key is not None:
            context[self.key] = data
        elif self.picks:
            for key, path in self.picks:
                value = read(data, path)
                if value is MISSING:
                    continue
                if key == WHOLE and isinstance(value, dict):
                    context.update(value)
                else:
                    context[key] = value
        elif isinstance(data, dict):
            context.update(data)
        elif data is not None:
            context[node_id] = data


MERGE = Output()
DISCARD = Output(discard=True)


def delta(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The keys ``after`` set or replaced since ``before`` (a shallow copy of it).

    Writes always bind new objects (call outputs are decoded afresh), so an identical
    object means an untouched key.
    """
    return {k: v for k, v in after.items() if k not in before or before[k] is not v}
