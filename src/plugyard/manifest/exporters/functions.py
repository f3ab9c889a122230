"""Operations as the tool definitions LLM APIs take: OpenAI and Anthropic function
calling, and MCP tools.

Names must match ``^[A-Za-z0-9_-]{1,64}$`` and be unique within one request. A name is
derived from the plugin and operation ids alone, so it is the same on every run; when
two operations would share a name, each of them takes a suffix hashed from its own full
id, so adding a plugin never renames an unrelated one.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Collection, Iterable, Sequence
from typing import Any, Literal

from plugyard.errors import ExportError
from plugyard.manifest.exporters import mcp_schema
from plugyard.manifest.exporters.openai_strict import strict_tools
from plugyard.manifest.model import Operation, PluginDescriptor

Format = Literal["openai", "anthropic", "mcp"]
FORMATS: tuple[Format, ...] = ("openai", "anthropic", "mcp")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
#: Operation ids that say nothing beyond "call the plugin": a single such operation is
#: named after its plugin alone.
GENERIC_OPERATIONS = frozenset({"execute", "run", "call", "invoke"})
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_HASH = 8

Pair = tuple[PluginDescriptor, Operation]


def _sanitise(text: str) -> str:
    return _UNSAFE.sub("_", text).strip("_") or "tool"


def _digest(text: str, length: int = _HASH) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def full_id(plugin: PluginDescriptor, operation: Operation) -> str:
    return f"{plugin.id}/{operation.id}"


def base_name(plugin: PluginDescriptor, operation: Operation) -> str:
    """The preferred name, before collisions are resolved."""
    if len(plugin.operations) == 1 and operation.id in GENERIC_OPERATIONS:
        raw = _sanitise(plugin.id)
    else:
        raw = f"{_sanitise(plugin.id)}__{_sanitise(operation.id)}"
    if len(raw) > MAX_NAME:
        raw = _suffixed(raw, full_id(plugin, operation))
    return raw


def _suffixed(name: str, identity: str, length: int = _HASH) -> str:
    return f"{name[: MAX_NAME - length - 1].rstrip('_-')}_{_digest(identity, length)}"


def tool_names(pairs: Iterable[Pair], reserved: Collection[str] = ()) -> dict[str, str]:
    """Map each operation's full id (``plugin/operation``) to a unique tool name.

    ``reserved`` names belong to tools defined elsewhere in the same request (a client's
    own, a host tool such as MCP ``ask``): an operation that would take one is suffixed
    as if it collided."""
    wanted: dict[str, str] = {}
    for plugin, operation in pairs:
        wanted[full_id(plugin, operation)] = base_name(plugin, operation)
    by_name: dict[str, list[str]] = {}
    for identity, name in wanted.items():
        by_name.setdefault(name, []).append(identity)
    result = dict(wanted)
    for name, identities in by_name.items():
        if len(identities) > 1 or name in reserved:
            for identity in identities:
                result[identity] = _suffixed(name, identity)
    # A suffixed name can still meet a plain one by accident: lengthen the hash until not.
    length = _HASH
    while _clash(result, reserved) and length < 32:
        length += 4
        seen: dict[str, int] = dict.fromkeys(reserved, 1)
        for name in result.values():
            seen[name] = seen.get(name, 0) + 1
        for identity, name in list(result.items()):
            if seen[name] > 1:
                result[identity] = _suffixed(wanted[identity], identity, length)
    return result


def _clash(names: dict[str, str], reserved: Collection[str]) -> bool:
    taken = set(names.values())
    return len(taken) < len(names) or not taken.isdisjoint(reserved)


def llm_parameters(schema: dict[str, Any]) -> dict[str, Any]:
    """The parameters schema as an LLM should see it: host-bound fields removed.

    A property with ``x-binding`` is filled by the host (identity, secret, environment),
    so offering it to the model would only invite a wrong value.
    """
    out = copy.deepcopy(schema)
    properties = out.get("properties")
    if isinstance(properties, dict):
        bound = [k for k, v in properties.items() if isinstance(v, dict) and "x-binding" in v]
        for key in bound:
            del properties[key]
        required = out.get("required")
        if isinstance(required, list) and bound:
            out["required"] = [r for r in required if r not in bound]
            if not out["required"]:
                del out["required"]
    out.setdefault("type", "object")
    return out


def describe(plugin: PluginDescriptor, operation: Operation) -> str:
    """One description: the operation's, with the plugin's as context."""
    parts = [operation.description.strip(), plugin.description.strip()]
    text = " ".join(dict.fromkeys(p for p in parts if p)) or plugin.name
    if len(text) > MAX_DESCRIPTION:
        text = text[: MAX_DESCRIPTION - 1].rstrip() + "…"
    return text


def _pairs(plugins: Sequence[PluginDescriptor]) -> list[Pair]:
    return [(plugin, op) for plugin in plugins for op in plugin.operations]


def export_tools(
    plugins: Sequence[PluginDescriptor], fmt: str, *, strict: bool = False
) -> list[dict[str, Any]]:
    """Every operation of ``plugins`` as tool definitions of ``fmt``; with ``strict``,
    OpenAI's strict-mode definitions (:mod:`.openai_strict`; other formats unchanged)."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown tool format {fmt!r}; one of {FORMATS}")
    pairs = _pairs(plugins)
    names = tool_names(pairs)
    out: list[dict[str, Any]] = []
    for plugin, op in pairs:
        name = names[full_id(plugin, op)]
        if fmt == "openai":
            out.append(openai_tool(plugin, op, name))
        elif fmt == "anthropic":
            out.append(anthropic_tool(plugin, op, name))
        else:
            out.append(mcp_tool(plugin, op, name))
    return strict_tools(out, fmt) if strict else out


def openai_tool(plugin: PluginDescriptor, op: Operation, name: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": describe(plugin, op),
            "parameters": llm_parameters(op.parameters),
        },
    }


def anthropic_tool(plugin: PluginDescriptor, op: Operation, name: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": describe(plugin, op),
        "input_schema": llm_parameters(op.parameters),
    }


def mcp_tool(plugin: PluginDescriptor, op: Operation, name: str) -> dict[str, Any]:
    """An MCP ``Tool``: annotations from the effect, groups from the placement, schemas
    that strict clients accept (:mod:`.mcp_schema`)."""
    title = op.name or (plugin.name if len(plugin.operations) == 1 else f"{plugin.name}: {op.id}")
    tool: dict[str, Any] = {
        "name": name,
        "title": title,
        "description": describe(plugin, op),
        "inputSchema": mcp_schema.portable(llm_parameters(op.parameters)),
    }
    output = mcp_schema.output_schema(op.output_schema)
    if output is not None:
        tool["outputSchema"] = output
    tool["annotations"] = {
        "title": title,
        "readOnlyHint": op.effect == "read",
        "destructiveHint": op.effect == "destructive",
        "idempotentHint": op.idempotent or op.effect == "read",
        "openWorldHint": plugin.runtime.kind in {"http", "mcp"},
    }
    placement = plugin.placement
    tool["_meta"] = {
        "io.plugyard/plugin": plugin.id,
        "io.plugyard/operation": op.id,
        "io.plugyard/family": plugin.family,
        "io.plugyard/groups": list(placement.capabilities) or ["Undefined"],
        "io.plugyard/role": placement.role,
        "io.plugyard/requiresApproval": op.requires_approval,
    }
    return tool
