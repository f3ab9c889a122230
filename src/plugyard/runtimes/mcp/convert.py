"""MCP tools as plugyard operations, and MCP tool results as outcomes.

A tool becomes an operation of the same name: ``inputSchema`` its parameters,
``outputSchema`` its output schema, the annotations its effect (``readOnlyHint`` →
read, ``destructiveHint`` → destructive, else write) and ``idempotentHint``. A tool
whose name is not an operation id, or whose schemas are not valid JSON Schema, is left
out and reported.

A result's ``data`` is its ``structuredContent`` when the server sent one; otherwise
``{"text": <the text blocks joined by newlines>, "content": [<every content block, as
MCP wrote it>]}``. ``isError`` makes the outcome a ``plugin_error`` carrying that text.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jsonschema_rs
from pydantic import ValidationError

from plugyard.manifest.model import Effect, Operation
from plugyard.runtimes.base import ErrorInfo, Outcome

_NAME = re.compile(r"^[^\s\x00-\x1f\x7f]{1,200}$")
#: The parts of a tool definition that are pinned: what a model reads and what it sends.
PINNED_FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")


@dataclass(frozen=True, slots=True)
class ToolSet:
    """The usable tools of one server, their digests, and what was left out."""

    operations: tuple[Operation, ...]
    digests: Mapping[str, str]
    rejected: Mapping[str, str]


def tool_digest(tool: Mapping[str, Any]) -> str:
    """SHA-256 of the pinned fields in canonical JSON."""
    pinned = {k: tool.get(k) for k in PINNED_FIELDS}
    text = json.dumps(pinned, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_tools(tools: Sequence[Mapping[str, Any]]) -> ToolSet:
    operations: list[Operation] = []
    digests: dict[str, str] = {}
    rejected: dict[str, str] = {}
    for tool in tools:
        name = tool.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            rejected[str(name)[:200]] = "the name is not an operation id"
            continue
        if name in digests or name in rejected:
            rejected[name] = "the server lists this name twice"
            digests.pop(name, None)
            operations = [op for op in operations if op.id != name]
            continue
        problem = _schema_problem(tool.get("inputSchema"), required=True) or _schema_problem(
            tool.get("outputSchema"), required=False
        )
        if problem is not None:
            rejected[name] = problem
            continue
        try:
            operations.append(_operation(tool, name))
        except ValidationError as exc:
            rejected[name] = f"not a valid operation: {exc.errors()[0]['msg']}"
            continue
        digests[name] = tool_digest(tool)
    return ToolSet(tuple(operations), digests, rejected)


def _schema_problem(schema: Any, *, required: bool) -> str | None:
    if schema is None:
        return "no inputSchema" if required else None
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return "a schema that is not an object schema"
    try:
        jsonschema_rs.validator_for(schema)
    except Exception as exc:  # the library raises several kinds for a bad schema
        return f"an invalid JSON Schema: {str(exc)[:200]}"
    return None


def _operation(tool: Mapping[str, Any], name: str) -> Operation:
    notes = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}
    assert isinstance(notes, dict)
    effect: Effect = "write"
    if notes.get("readOnlyHint") is True:
        effect = "read"
    elif notes.get("destructiveHint") is True:
        effect = "destructive"
    title = tool.get("title") if isinstance(tool.get("title"), str) else None
    description = tool.get("description")
    return Operation.model_validate(
        {
            "id": name,
            "name": title,
            "description": description if isinstance(description, str) else "",
            "parameters": tool["inputSchema"],
            "output_schema": tool.get("outputSchema"),
            "effect": effect,
            "idempotent": notes.get("idempotentHint") is True,
        },
        strict=False,
    )


def outcome_of(result: Mapping[str, Any]) -> Outcome:
    """What a ``CallToolResult`` (as JSON) stands for (see the module docstring)."""
    blocks = result.get("content")
    content = [b for b in blocks if isinstance(b, dict)] if isinstance(blocks, list) else []
    text = "\n".join(
        b["text"] for b in content if b.get("type") == "text" and isinstance(b.get("text"), str)
    )
    if result.get("isError") is True:
        return Outcome(
            status="error",
            error=ErrorInfo(
                "plugin_error",
                text[:2000] or "the MCP tool reported an error",
                {"content": content},
            ),
        )
    structured = result.get("structuredContent")
    if structured is not None:
        return Outcome(data=structured)
    return Outcome(data={"text": text, "content": content})
