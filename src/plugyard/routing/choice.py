"""The model's answer: its JSON schema over the candidates, and reading it back.

Constrained mode asks for JSON on a schema that is an ``anyOf`` of one branch per
candidate operation (``plugin`` and ``operation`` as constants, ``arguments`` as that
operation's parameter schema) plus a ``none`` branch. Tools mode offers HomeClaw's
``route_to_plugin(plugin_id, capability_id?, parameters?)`` instead. Either way the
answer is read back here and anything naming an operation outside the candidates is
refused: the schema is a hint to the model, this check is the bound.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from plugyard.llm import ChatAnswer, LlmError
from plugyard.manifest.model import Operation, PluginDescriptor

#: A parameter schema larger than this, or one using references, goes into the answer
#: schema as a bare object: a response-format schema must stand alone, and a long one
#: makes the prompt (and the grammar) slow on a small local model.
MAX_ARGUMENT_SCHEMA_CHARS = 4000
ROUTE_TOOL = "route_to_plugin"
ANY_OBJECT: Mapping[str, Any] = {"type": "object"}


@dataclass(frozen=True, slots=True)
class Candidate:
    """An operation the caller may call, as offered to the model."""

    plugin_id: str
    operation: Operation
    score: float
    description: str = ""
    name: str = ""  # the plugin's name for people, when it has one
    #: The plugin's descriptor, for exporting the operation as a tool definition.
    descriptor: PluginDescriptor | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.plugin_id, self.operation.id)


@dataclass(frozen=True, slots=True)
class Choice:
    """What the model chose: a candidate and its arguments, or none (``candidate`` is
    ``None``, ``reply`` its optional text). ``final``: this call's output is the answer."""

    candidate: Candidate | None
    arguments: Mapping[str, Any]
    final: bool = True
    reply: str | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.candidate is None:
            return {"none": True} | ({"reply": self.reply} if self.reply else {})
        return {
            "plugin": self.candidate.plugin_id,
            "operation": self.candidate.operation.id,
            "arguments": dict(self.arguments),
            "final": self.final,
        }


def invalid(message: str, **details: Any) -> LlmError:
    return LlmError(message, code="llm_invalid_answer", **details)


def argument_schema(operation: Operation) -> Mapping[str, Any]:
    """The operation's parameter schema when it can stand inside the answer schema."""
    schema = operation.parameters
    text = json.dumps(schema, sort_keys=True)
    if len(text) > MAX_ARGUMENT_SCHEMA_CHARS or '"$ref"' in text or schema.get("type") != "object":
        return ANY_OBJECT
    return schema


def takes_no_arguments(operation: Operation) -> bool:
    """The operation declares no parameters (no properties, none required, no schema
    for extra ones): it is called with ``{}`` and no model is asked for arguments."""
    schema = operation.parameters
    extra = schema.get("additionalProperties")
    return (
        not schema.get("properties")
        and not schema.get("required")
        and not schema.get("patternProperties")
        and not isinstance(extra, dict)
        and "$ref" not in schema
        and not any(key in schema for key in ("anyOf", "oneOf", "allOf"))
    )


def answer_schema(candidates: Sequence[Candidate], *, loose: bool = False) -> dict[str, Any]:
    """``anyOf`` one branch per candidate, plus ``{"none": true, "reply"?: str}``;
    ``loose``: every ``arguments`` a bare object (for a server that refused the schema)."""
    branches: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {
                "plugin": {"const": c.plugin_id},
                "operation": {"const": c.operation.id},
                "arguments": dict(ANY_OBJECT if loose else argument_schema(c.operation)),
                "final": {"type": "boolean"},
            },
            "required": ["plugin", "operation", "arguments"],
            "additionalProperties": False,
        }
        for c in candidates
    ]
    branches.append(
        {
            "type": "object",
            "properties": {"none": {"const": True}, "reply": {"type": "string"}},
            "required": ["none"],
            "additionalProperties": False,
        }
    )
    return {"anyOf": branches}


def read_choice(value: Any, candidates: Sequence[Candidate]) -> Choice:
    """The constrained answer as a :class:`Choice`; ``llm_invalid_answer`` when it is
    not one of the schema's branches or names an operation outside ``candidates``."""
    if not isinstance(value, Mapping):
        raise invalid("the answer is not a JSON object")
    if value.get("none") is True:
        reply = value.get("reply")
        return Choice(None, {}, reply=reply if isinstance(reply, str) else None)
    found = _find(candidates, value.get("plugin"), value.get("operation"))
    arguments = value.get("arguments", {})
    if not isinstance(arguments, Mapping):
        raise invalid("arguments must be a JSON object")
    return Choice(found, dict(arguments), final=value.get("final", True) is not False)


def route_tool(candidates: Sequence[Candidate]) -> dict[str, Any]:
    """HomeClaw's ``route_to_plugin`` as an OpenAI function, its ids limited to the
    candidates."""
    plugins = sorted({c.plugin_id for c in candidates})
    operations = sorted({c.operation.id for c in candidates})
    return {
        "type": "function",
        "function": {
            "name": ROUTE_TOOL,
            "description": "Call one of the listed operations; answer in text if none fits.",
            "parameters": {
                "type": "object",
                "properties": {
                    "plugin_id": {"type": "string", "enum": plugins},
                    "capability_id": {"type": "string", "enum": operations},
                    "parameters": {"type": "object"},
                    # plugyard's addition: false asks for another step after this call.
                    "final": {"type": "boolean"},
                },
                "required": ["plugin_id"],
            },
        },
    }


def read_tool_call(answer: ChatAnswer, candidates: Sequence[Candidate]) -> Choice:
    """A tools-mode answer as a :class:`Choice`: no tool call is "none" (its text the
    reply); a call of anything but ``route_to_plugin`` or outside the candidates is refused."""
    if not answer.tool_calls:
        return Choice(None, {}, reply=answer.text or None)
    call = answer.tool_calls[0]
    if call.name != ROUTE_TOOL:
        raise invalid(f"the model called {call.name!r}, not {ROUTE_TOOL}")
    args = call.arguments
    plugin, operation = args.get("plugin_id"), args.get("capability_id")
    if operation is None:
        ops = [c for c in candidates if c.plugin_id == plugin]
        if len(ops) != 1:
            raise invalid(f"capability_id is needed: {plugin!r} offers {len(ops)} operations")
        operation = ops[0].operation.id
    parameters = args.get("parameters", {})
    if not isinstance(parameters, Mapping):
        raise invalid("parameters must be a JSON object")
    final = args.get("final", True) is not False
    return Choice(_find(candidates, plugin, operation), dict(parameters), final=final)


def _find(candidates: Sequence[Candidate], plugin: Any, operation: Any) -> Candidate:
    for candidate in candidates:
        if candidate.key == (plugin, operation):
            return candidate
    raise invalid(
        f"{plugin!r} {operation!r} is not one of the offered operations",
        offered=[f"{c.plugin_id}.{c.operation.id}" for c in candidates],
    )
