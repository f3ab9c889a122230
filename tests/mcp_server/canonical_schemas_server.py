"""``plugyard mcp`` as it was before its tools' schemas were made portable: each tool
shows its operation's schemas exactly as the descriptor holds them. The Inspector's
``--strict`` run against it shows what the MCP exporter's rewrite removes.

Run as a script with the caller's subject as its argument; the yard comes from the
environment (``PLUGYARD_*``).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from plugyard.manifest.exporters.functions import llm_parameters
from plugyard.mcp_server import McpFront, serve_stdio
from plugyard.types import Caller
from plugyard.yard import Settings, Yard


class CanonicalSchemas(McpFront):
    def list_tools(self, caller: Caller) -> list[dict[str, Any]]:
        tools = super().list_tools(caller)
        for tool in tools:
            if "_meta" not in tool:  # the host's own tool (ask): no operation behind it
                continue
            plugin = self.yard.registry.require(tool["_meta"]["io.plugyard/plugin"])
            op = plugin.descriptor.operation(tool["_meta"]["io.plugyard/operation"])
            assert op is not None
            tool["inputSchema"] = llm_parameters(op.parameters)
            # MCP admits only object output schemas; any other stays as exported (wrapped).
            if op.output_schema is not None and op.output_schema.get("type") == "object":
                tool["outputSchema"] = op.output_schema
        return tools


if __name__ == "__main__":
    with Yard.from_settings(Settings.from_env()) as yard:
        asyncio.run(serve_stdio(CanonicalSchemas(yard), Caller(sys.argv[1])))
