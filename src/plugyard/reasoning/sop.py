"""Admitting a seed detector's output: a small reader of SOP Lang Control.

A seed detector answers ``intentCNL`` and ``currentTurnContextCNL`` (DS027) as SOP Lang
Control documents, one statement a line::

    @i1 intent explain "Why is the sky blue?"
    @is1 set $i1 output "short answer"
    @s1 seed $i1 direct explain "Why is the sky blue?"
    @k1 ku atomic "session::turn::unit-000"
    @ks1 set $k1 claim "Rayleigh scattering favours short wavelengths."

Values are bare tokens, ``"quoted text"`` (``\\"`` and ``\\\\`` escaped), ``[lists]`` and
``$references`` to an earlier statement. Blank lines and ``#`` comments are skipped. The
reader admits intents (with their seeds and fields) and knowledge units, and refuses a
document with malformed syntax, a repeated id, a reference to nothing or too many
statements (:class:`SopError`). A document with no statement at all is read as plain
text: one intent, or one unit — so a detector that answers prose still works.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plugyard.reasoning.units import Unit

MAX_STATEMENTS = 5_000
MAX_CHARS = 2_000_000
_ID = re.compile(r"@([A-Za-z_][A-Za-z0-9_.:-]*)$")
_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
_NUMBER = re.compile(r"-?\d+(\.\d+)?$")


class SopError(ValueError):
    """The document is not SOP Lang Control this reader can admit (line says where)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass(frozen=True, slots=True)
class Ref:
    target: str


@dataclass(frozen=True, slots=True)
class Admitted:
    """What a detector's documents admit: intents (plain mappings, MRP spelling) and units."""

    intents: tuple[Mapping[str, Any], ...] = ()
    units: tuple[Unit, ...] = ()


def admit(intent_cnl: str | None, context_cnl: str | None) -> Admitted:
    """Admit both documents of one ``detectSeeds`` answer (``SopError`` if either is bad)."""
    intents = _intents(intent_cnl or "")
    units = _units(context_cnl or "")
    return Admitted(intents, units)


def admit_units(context_cnl: str | None) -> tuple[Unit, ...]:
    """The units of a ``normalizePersistentContext`` answer (``contextCNL``)."""
    return _units(context_cnl or "")


# ------------------------------------------------------------------------------ reading


def _statements(text: str) -> list[tuple[int, str, str, list[Any]]]:
    if len(text) > MAX_CHARS:
        raise SopError(0, f"the document is longer than {MAX_CHARS} characters")
    found: list[tuple[int, str, str, list[Any]]] = []
    seen: set[str] = set()
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", "//")):
            continue
        tokens = _tokens(line, number)
        head = tokens[0] if tokens else None
        match = _ID.match(head) if isinstance(head, str) else None
        if match is None or len(tokens) < 2 or not isinstance(tokens[1], str):
            raise SopError(number, "a statement is '@id command arguments…'")
        ident = match.group(1)
        if ident in seen:
            raise SopError(number, f"the id {ident!r} is used twice")
        seen.add(ident)
        for token in tokens[2:]:
            for ref in token if isinstance(token, list) else [token]:
                if isinstance(ref, Ref) and ref.target not in seen:
                    raise SopError(number, f"${ref.target} refers to no earlier statement")
        found.append((number, ident, tokens[1], tokens[2:]))
        if len(found) > MAX_STATEMENTS:
            raise SopError(number, f"more than {MAX_STATEMENTS} statements")
    return found


def _tokens(line: str, number: int) -> list[Any]:
    tokens: list[Any] = []
    i, n = 0, len(line)
    stack: list[list[Any]] = []
    while i < n:
        char = line[i]
        if char.isspace():
            i += 1
            continue
        if char == '"':
            value, i = _quoted(line, i + 1, number)
            (stack[-1] if stack else tokens).append(value)
        elif char == "[":
            if stack:
                raise SopError(number, "lists do not nest")
            stack.append([])
            i += 1
        elif char == "]":
            if not stack:
                raise SopError(number, "']' without '['")
            tokens.append(stack.pop())
            i += 1
        else:
            end = i
            while end < n and not line[end].isspace() and line[end] not in '[]"':
                end += 1
            (stack[-1] if stack else tokens).append(_scalar(line[i:end]))
            i = end
    if stack:
        raise SopError(number, "'[' without ']'")
    return tokens


def _quoted(line: str, i: int, number: int) -> tuple[str, int]:
    out: list[str] = []
    while i < len(line):
        char = line[i]
        if char == "\\" and i + 1 < len(line):
            out.append(line[i + 1])
            i += 2
        elif char == '"':
            return "".join(out), i + 1
        else:
            out.append(char)
            i += 1
    raise SopError(number, "a quoted value is not closed")


def _scalar(token: str) -> Any:
    if token.startswith("$") and len(token) > 1:
        return Ref(token[1:])
    if _NUMBER.match(token):
        return float(token) if "." in token else int(token)
    return {"true": True, "false": False, "null": None}.get(token, token)


# ------------------------------------------------------------------------------ meaning


def _objects(text: str) -> tuple[dict[str, dict[str, Any]], list[str]] | None:
    """Statement id → object (``kind`` plus its fields), in order; ``None`` for prose."""
    if not any(line.lstrip().startswith("@") for line in text.splitlines()):
        return None
    objects: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    for number, ident, command, args in _statements(text):
        if command == "set":
            if len(args) < 3 or not isinstance(args[0], Ref) or not isinstance(args[1], str):
                raise SopError(number, "'set' takes $target field value")
            if not _FIELD.match(args[1]):
                raise SopError(number, f"{args[1]!r} is not a field name")
            target = objects.get(args[0].target)
            if target is None:
                raise SopError(number, f"${args[0].target} is not an object that takes fields")
            target[args[1]] = _plain(args[2])
            continue
        objects[ident] = {"kind": command, "id": ident, "args": [_plain(a) for a in args]}
        order.append(ident)
    return objects, order


def _intents(text: str) -> tuple[Mapping[str, Any], ...]:
    read = _objects(text)
    if read is None:
        prose = text.strip()
        return ({"id": "i1", "act": "explain", "text": prose},) if prose else ()
    objects, order = read
    intents: dict[str, dict[str, Any]] = {}
    for ident in order:
        item = objects[ident]
        args = item.pop("args")
        if item["kind"] == "intent":
            if len(args) < 2:
                raise SopError(0, f"intent {ident} needs an act and its text")
            intents[ident] = {**item, "act": str(args[0]), "text": str(args[1]), "seeds": []}
            del intents[ident]["kind"]
        elif item["kind"] == "seed" and args and isinstance(args[0], str) and args[0] in intents:
            seed = {k: v for k, v in item.items() if k != "kind"}
            seed.update(zip(("mode", "act", "text"), args[1:4], strict=False))
            intents[args[0]]["seeds"].append(seed)
    return tuple(intents.values())


def _units(text: str) -> tuple[Unit, ...]:
    read = _objects(text)
    if read is None:
        prose = text.strip()
        return (Unit(prose[:8_000]),) if prose else ()
    objects, order = read
    units: list[Unit] = []
    for ident in order:
        item = objects[ident]
        args = item.pop("args")
        if item.pop("kind") != "ku":
            continue
        item["id"] = str(args[1]) if len(args) > 1 else ident
        if args:
            item["kuType"] = str(args[0])
        unit = Unit.of(item)
        if unit is not None:
            units.append(unit)
    return tuple(units)


def _plain(value: Any) -> Any:
    if isinstance(value, Ref):
        return value.target
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


# ------------------------------------------------------------------------------ writing


def quote(text: str) -> str:
    """``text`` as an SOP quoted value."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def render(value: Any) -> str:
    """A field value as SOP writes it: lists in brackets, text quoted, numbers bare."""
    if isinstance(value, list | tuple):
        return "[" + " ".join(render(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return quote(str(value))
