"""What plugyard shows and does as an MCP server, for one caller.

Mode ``tools``: every operation the caller may call is a tool (names from the MCP
exporter: stable, unique, at most 64 characters). Mode ``discovery``: two tools,
``search`` and ``call``, however many plugins there are. Both modes add ``ask``, the
routing flow, and ``confirm``, for a call it held (:mod:`.ask`). Every other
``tools/call`` is one executor call with a :class:`CallContext` for the caller, so
policy, approvals, idempotency and audit apply exactly as for REST. The approval receipt
and idempotency key travel in the request's ``_meta`` (``io.plugyard/approvalReceipt``,
``io.plugyard/idempotencyKey``) or, for ``call``, as its arguments. What a call answers
is shaped by :mod:`.results`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Literal

from plugyard.discovery.query import Filters
from plugyard.execution.executor import CallRequest, new_request_id
from plugyard.execution.result import Result
from plugyard.manifest.exporters.functions import full_id, mcp_tool, tool_names
from plugyard.manifest.model import Operation, PluginDescriptor
from plugyard.mcp_server.ask import ASK, ASK_TOOL, CONFIRM, CONFIRM_TOOL, ask, confirm
from plugyard.mcp_server.results import (
    RECEIPT_META,
    error_result,
    result_to_mcp,
    structured_result,
    with_pending,
)
from plugyard.registry.model import RegisteredPlugin
from plugyard.runtimes.base import CallContext
from plugyard.types import Caller
from plugyard.yard import Yard

Mode = Literal["tools", "discovery"]
MODES: tuple[Mode, ...] = ("tools", "discovery")
IDEMPOTENCY_META = "io.plugyard/idempotencyKey"
MAX_K = 50
#: Host tools listed beside the operations: no operation's tool takes their names.
_RESERVED = frozenset({ASK, CONFIRM})

SEARCH_TOOL: dict[str, Any] = {
    "name": "search",
    "title": "Find plugins",
    "description": "Find the plugin operations that fit a request. Answers plugin ids, "
    "operation names, descriptions and parameter schemas, and a search_id; then use the "
    "call tool, passing that search_id, so that search learns what answered the request.",
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
            "search_id": {"type": "string", "description": "The search that found it."},
        },
        "required": ["plugin"],
    },
    "annotations": {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": True},
}


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
            return [SEARCH_TOOL, CALL_TOOL, ASK_TOOL, CONFIRM_TOOL]
        pairs = self._pairs()
        names = tool_names(pairs, _RESERVED)
        out = []
        for plugin, op in pairs:
            outcome = self._decision(caller, plugin.id, op.id)
            if outcome == "deny":
                continue
            tool = mcp_tool(plugin, op, names[full_id(plugin, op)])
            may_wait = outcome == "allow_with_approval" or op.requires_approval
            if may_wait and "outputSchema" in tool:
                # The answer may be a pending receipt: the schema says so, so a strict
                # client accepts it as well as the result it has once approved.
                tool["outputSchema"] = with_pending(tool["outputSchema"])
            out.append(tool)
        # ask routes among the very operations listed: with none, it could only say so.
        return [*out, ASK_TOOL, CONFIRM_TOOL] if out else out

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
        subject = Caller(caller.subject, caller.roles)
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
        if name == ASK:
            return await ask(self.yard, caller.subject, caller.roles, args)
        if name == CONFIRM:
            return await confirm(self.yard, caller.subject, caller.roles, args)
        if self.mode == "discovery":
            if name == "search":
                return await self._search(caller, args)
            if name == "call":
                return await self._call_named(caller, args, meta)
            return error_result("operation_not_found", f"no tool {name!r}")
        found = self._resolve(name)
        if found is None:
            return error_result("operation_not_found", f"no tool {name!r}")
        plugin_id, operation = found
        return await self._execute(caller, plugin_id, operation, args, meta)

    def _resolve(self, name: str) -> tuple[str, str] | None:
        pairs = self._pairs()
        for identity, tool in tool_names(pairs, _RESERVED).items():
            if tool == name:
                plugin_id, _, operation = identity.rpartition("/")
                return plugin_id, operation
        return None

    async def _search(self, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
        query = args.get("query")
        k = args.get("k", 5)
        if not isinstance(query, str) or not query.strip():
            return error_result("invalid_query", "query must be non-empty text")
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
            return error_result("invalid_query", f"k must be an integer from 1 to {MAX_K}")
        can_see = self.yard.rights(caller.subject, caller.roles)
        filters = Filters(can_see=can_see)
        matches = await asyncio.to_thread(
            lambda: self.yard.search(query, k, filters, subject=caller.subject)
        )
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
        data = {"query": query, "search_id": matches.search_id, "matches": found}
        return structured_result(data)

    async def _call_named(
        self, caller: Caller, args: dict[str, Any], meta: Mapping[str, Any]
    ) -> dict[str, Any]:
        plugin_id = args.get("plugin")
        operation = args.get("operation")
        parameters = args.get("parameters", {})
        if not isinstance(plugin_id, str) or not isinstance(parameters, dict):
            return error_result("invalid_request", "plugin must be text and parameters an object")
        if operation is not None and not isinstance(operation, str):
            return error_result("invalid_request", "operation must be text")
        merged = dict(meta)
        for key, meta_key in (("approval_receipt", RECEIPT_META),
                              ("idempotency_key", IDEMPOTENCY_META)):  # fmt: skip
            if isinstance(args.get(key), str):
                merged[meta_key] = args[key]
        search_id = args.get("search_id")
        search_id = search_id if isinstance(search_id, str) else None
        return await self._execute(caller, plugin_id, operation, parameters, merged, search_id)

    async def _execute(
        self,
        caller: Caller,
        plugin_id: str,
        operation: str | None,
        params: dict[str, Any],
        meta: Mapping[str, Any],
        search_id: str | None = None,
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
        result = await self.yard.executor.call(request)
        if search_id is not None and caller.subject is not None and result.ran_ok:
            # The search that found it learns what answered (docs/discovery.md).
            chosen = result.operation or operation
            self.yard.learn_from_call(search_id, caller.subject, plugin_id, chosen)
        return result_to_mcp(result, self._output_schema(result), _RECEIPT_HINT[self.mode])

    def _output_schema(self, result: Result) -> dict[str, Any] | None:
        """The output schema of the operation that ran, which decides the result's shape
        (the same one its tool advertises)."""
        if result.plugin_id is None or result.operation is None:
            return None
        plugin = self.yard.registry.find(result.plugin_id)
        op = plugin.descriptor.operation(result.operation) if plugin is not None else None
        return op.output_schema if op is not None else None


_RECEIPT_HINT: dict[Mode, str] = {
    "tools": f"the request's _meta as {RECEIPT_META!r}",
    "discovery": "the call tool's approval_receipt",
}
