"""The MCP protocol side: a low-level SDK ``Server`` over :class:`McpFront`, served on
stdio (``plugyard mcp``) or mounted as streamable HTTP (``/mcp``, see server/app.py).

``caller_of`` tells who sends each request: fixed for stdio (the process's own
``--subject``/``--api-key``), the API key's subject for HTTP.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp.types as mt
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from plugyard import __version__
from plugyard.mcp_server.front import McpFront
from plugyard.types import Caller

CallerOf = Callable[[Any], Caller]


def build_server(front: McpFront, caller_of: CallerOf) -> Server[Any]:
    async def list_tools(ctx: Any, params: Any) -> mt.ListToolsResult:
        tools = front.list_tools(caller_of(ctx))
        return mt.ListToolsResult(tools=[mt.Tool.model_validate(t) for t in tools])

    async def call_tool(ctx: Any, params: mt.CallToolRequestParams) -> mt.CallToolResult:
        meta = dict(params.meta) if isinstance(params.meta, dict) else {}
        result = await front.call_tool(caller_of(ctx), params.name, params.arguments, meta)
        return mt.CallToolResult.model_validate(result)

    return Server(
        "plugyard",
        version=__version__,
        instructions=_INSTRUCTIONS[front.mode],
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(front: McpFront, caller: Caller) -> None:
    """Serve MCP on this process's stdin and stdout until the client closes them."""
    server = build_server(front, lambda ctx: caller)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


_INSTRUCTIONS = {
    "tools": "Each tool is one plugyard plugin operation. A result with status "
    "pending_approval carries a receipt: once approved, call again with the receipt in "
    "_meta['io.plugyard/approvalReceipt'].",
    "discovery": "Use search to find plugin operations for a request, then call one with "
    "call (plugin, operation, parameters). A pending_approval result carries a receipt: "
    "once approved, call again with approval_receipt.",
}
