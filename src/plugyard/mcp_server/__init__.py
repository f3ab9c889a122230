"""plugyard as an MCP server (docs/mcp.md): the core both surfaces use — ``plugyard
mcp`` over stdio (cli) and ``/mcp`` over streamable HTTP (server) — so neither surface
imports the other."""

from plugyard.mcp_server.front import McpFront
from plugyard.mcp_server.protocol import build_server, serve_stdio

__all__ = ["McpFront", "build_server", "serve_stdio"]
