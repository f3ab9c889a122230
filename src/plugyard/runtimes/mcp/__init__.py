"""The ``mcp`` runtime: MCP servers as plugins, their tools as operations (docs/mcp.md)."""

from plugyard.runtimes.mcp.runtime import McpPluginRuntime

__all__ = ["McpPluginRuntime"]
