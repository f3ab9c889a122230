"""What plugyard shows and does as an MCP server, for one caller.

Mode ``tools``: every operation the caller may call is a tool (names from the MCP
exporter: stable, unique, at most 64 characters). Mode ``discovery``: two tools,
``search`` and ``call``, however many plugins there are. Every ``tools/call`` is one
executor call with a :class:`CallContext` for the caller, so policy, approvals,
idempotency and audit apply exactly as for REST. The approval receipt and idempotency key
travel in the request's ``_meta`` (``io.plugyard/approvalReceipt``,
``io.plugyard/idempotencyKey``) or, for ``call``, as its arguments.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from plugyard.discovery.query import Filters
from plugyard.execution.executor import CallRequest, new_request_id
from plugyard.execution.result import Result
from plugyard.manifest.exporters.functions import full_id, mcp_tool, tool_names
from plugyard.manifest.model import Operation, PluginDescriptor
from plugyard.policy.base import Subject
from plugyard.registry.model import RegisteredPlugin
from plugyard.runtimes.base import CallContext
from plugyard.yard import Yard

Mode = Literal["tools", "discovery"]
MODES: tuple[Mode, ...] = ("tools", "discovery")
RECEIPT_META = "io.plugyard/approvalReceipt"
IDEMPOTENCY_META = "io.plugyard/idempotencyKey"
MAX_K = 50

SEARCH_TOOL: dict[str, Any] = {
    "name": "search",
    "title": "Find plugins",
    "description": "Find the plugin operations that fit a request. Answers plugin ids, "
    "operation names, descriptions and parameter schemas; then use the call tool.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 4000},
            "k": {"type": "integer", "minimum": 1, "maximum": MAX_K, "default": 5},
        },
        "required": ["query"],
    },
    "annotations": {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
}
CALL_TOOL: dict[str, Any] = {
    "name": "call",
    "title": "Call a plugin operation",
    "description": "Call one operation of a plugin found with search.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "plugin": {"type": "string", "minLength": 1},
            "operation": {"type": "string"},
            "parameters": {"type": "object"},
            "approval_receipt": {"type": "string"},
            "idempotency_key": {"type": "string"},
        },
        "required": ["plugin"],
    },
    "annotations": {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": True},
}


@dataclass(frozen=True, slots=True)
class Caller:
    """Who calls through MCP: a subject and its roles."""

    subject: str | None
    roles: tuple[str, ...] = ()


class McpFront:
    """The MCP view of one yard."""

    def __init__(self, yard: Yard, mode: Mode = "tools") -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        self.yard = yard
        self.mode = mode

    # ------------------------------------------------------------------ listing

    def list_tools(self, caller: Caller) -> list[dict[str, Any]]:
        if self.mode == "discovery":
            return [SEARCH_TOOL, CALL_TOOL]
        pairs = self._pairs()
        names = tool_names(pairs)
        out = []
        for plugin, op in pairs:
            outcome = self._decision(caller, plugin.id, op.id)
            if outcome == "deny":
                continue
            tool = mcp_tool(plugin, op, names[full_id(plugin, op)])
            if outcome == "allow_with_approval" or op.requires_approval:
                # The answer may be a pending receipt, which no output schema describes.
                tool.pop("outputSchema", None)
            out.append(tool)
        return out

    def _pairs(self) -> list[tuple[PluginDescriptor, Operation]]:
        # Names come from every available plugin, not the caller's share, so a tool's
        # name never depends on who asks.
        plugins = sorted(self._plugins(), key=lambda p: p.id)
        return [(p.descriptor, op) for p in plugins for op in p.descriptor.operations]

    def _plugins(self) -> list[RegisteredPlugin]:
        return [p for p in self.yard.registry.list() if p.available]

    def _decision(self, caller: Caller, plugin_id: str, operation: str) -> str:
        policy = self.yard.policy
        if policy is None:
            return "allow"
        subject = Subject(caller.subject, caller.roles)
        return policy.ask(subject, plugin_id, operation, "call").outcome

    # ------------------------------------------------------------------ calling

    async def call_tool(
        self,
        caller: Caller,
        name: str,
        arguments: Mapping[str, Any] | None,
        meta: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A ``CallToolResult`` as JSON."""
        args = dict(arguments or {})
        meta = meta or {}
        if self.mode == "discovery":
            if name == "search":
                return await self._search(caller, args)
            if name == "call":
                return await self._call_named(caller, args, meta)
            return _error("operation_not_found", f"no tool {name!r}")
        found = self._resolve(name)
        if found is None:
            return _error("operation_not_found", f"no tool {name!r}")
        plugin_id, operation = found
        return await self._execute(caller, plugin_id, operation, args, meta)

    def _resolve(self, name: str) -> tuple[str, str] | None:
        pairs = self._pairs()
        for identity, tool in tool_names(pairs).items():
            if tool == name:
                plugin_id, _, operation = identity.rpartition("/")
                return plugin_id, operation
        return None

    async def _search(self, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
        query = args.get("query")
        k = args.get("k", 5)
        if not isinstance(query, str) or not query.strip():
            return _error("invalid_query", "query must be non-empty text")
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
            return _error("invalid_query", f"k must be an integer from 1 to {MAX_K}")
        can_see = self.yard.rights(caller.subject, caller.roles)
        filters = Filters(can_see=can_see)
        matches = await asyncio.to_thread(self.yard.search, query, k, filters)
        found = []
        for match in matches:
            plugin = match.plugin
            ops = [
                {"operation": op.id, "description": op.description, "parameters": op.parameters}
                for op in plugin.descriptor.operations
                if can_see(plugin.id, op.id)
            ]
            found.append({"plugin": plugin.id, "name": plugin.descriptor.name,
                          "description": plugin.descriptor.description,
                          "score": match.to_dict().get("score"), "operations": ops})  # fmt: skip
        data = {"query": query, "matches": found}
        return {"content": [_text(data)], "structuredContent": data, "isError": False}

    async def _call_named(
        self, caller: Caller, args: dict[str, Any], meta: Mapping[str, Any]
    ) -> dict[str, Any]:
        plugin_id = args.get("plugin")
        operation = args.get("operation")
        parameters = args.get("parameters", {})
        if not isinstance(plugin_id, str) or not isinstance(parameters, dict):
            return _error("invalid_request", "plugin must be text and parameters an object")
        if operation is not None and not isinstance(operation, str):
            return _error("invalid_request", "operation must be text")
        merged = dict(meta)
        for key, meta_key in (("approval_receipt", RECEIPT_META),
                              ("idempotency_key", IDEMPOTENCY_META)):  # fmt: skip
            if isinstance(args.get(key), str):
                merged[meta_key] = args[key]
        return await self._execute(caller, plugin_id, operation, parameters, merged)

    async def _execute(
        self,
        caller: Caller,
        plugin_id: str,
        operation: str | None,
        params: dict[str, Any],
        meta: Mapping[str, Any],
    ) -> dict[str, Any]:
        receipt = meta.get(RECEIPT_META)
        key = meta.get(IDEMPOTENCY_META)
        context = CallContext(
            request_id=new_request_id(),
            subject=caller.subject,
            roles=caller.roles,
            idempotency_key=key if isinstance(key, str) else None,
        )
        request = CallRequest(
            plugin_id,
            operation,
            params,
            context,
            approval_receipt=receipt if isinstance(receipt, str) else None,
        )
        return result_to_mcp(await self.yard.executor.call(request))


def result_to_mcp(result: Result) -> dict[str, Any]:
    """The result envelope as a ``CallToolResult``: data as structured content (and as
    text); a pending approval as structured content with its receipt; an error as
    ``isError`` with the envelope's error."""
    envelope = result.to_dict()
    if result.status == "pending_approval":
        data = {"status": "pending_approval", **dict(result.data or {})}
        return {"content": [_text(data)], "structuredContent": data, "isError": False}
    if result.ok:
        out: dict[str, Any] = {"content": [_text(result.data)], "isError": False}
        if isinstance(result.data, dict):
            out["structuredContent"] = result.data
        return out
    return {
        "content": [_text(envelope.get("error") or envelope)],
        "structuredContent": {"status": result.status, "error": envelope.get("error")},
        "isError": True,
    }


def _text(value: Any) -> dict[str, Any]:
    return {"type": "text", "text": json.dumps(value, ensure_ascii=False, default=str)}


def _error(code: str, message: str) -> dict[str, Any]:
    error = {"code": code, "message": message, "details": {}}
    return {
        "content": [_text(error)],
        "structuredContent": {"status": "error", "error": error},
        "isError": True,
    }
