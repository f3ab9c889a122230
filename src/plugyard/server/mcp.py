"""``/mcp`` (every operation the caller may call as a tool) and ``/mcp/discovery``
(``search`` and ``call``): plugyard's MCP server over streamable HTTP (docs/mcp.md).

The caller is the API key's subject (``X-API-Key`` or ``Authorization: Bearer``), checked
on every HTTP request before the MCP layer sees it; a request without a valid key gets
401 with the error envelope every route answers, and its ``WWW-Authenticate``
challenges. A method the transport does not take is 405 with the same envelope, before
the MCP layer sees it. The core lives in
:mod:`plugyard.mcp_server`, shared with the ``plugyard mcp`` stdio command.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from plugyard.errors import PlugyardError
from plugyard.mcp_server import McpFront, build_server
from plugyard.mcp_server.front import Mode
from plugyard.server.auth import authenticate
from plugyard.server.errors import error_response, refusal_response
from plugyard.types import Caller
from plugyard.yard import Yard

PATHS: dict[str, Mode] = {"/mcp": "tools", "/mcp/discovery": "discovery"}


def _caller_of(ctx: Any) -> Caller:
    request = getattr(ctx, "request", None)
    if not isinstance(request, Request):
        raise PlugyardError("no HTTP request to authenticate", code="unauthenticated")
    principal = authenticate(request)
    return Caller(principal.subject, principal.roles)


class _Endpoint:
    """Authenticates, then hands the request to the session manager of this lifespan."""

    def __init__(self, yard: Yard, mode: Mode) -> None:
        self.server = build_server(McpFront(yard, mode), _caller_of)
        self.manager: StreamableHTTPSessionManager | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            authenticate(Request(scope, receive))
        except PlugyardError as exc:
            await refusal_response(exc)(scope, receive, send)
            return
        if self.manager is None:
            refusal = error_response("plugin_unavailable", "the MCP endpoint is not running")
            await refusal(scope, receive, send)
            return
        await self.manager.handle_request(scope, receive, send)


def mcp_routes(yard: Yard) -> tuple[list[Route], list[_Endpoint]]:
    """The routes to add to the app, and the endpoints its lifespan must run."""
    endpoints = [_Endpoint(yard, mode) for mode in PATHS.values()]
    routes = []
    for path, endpoint in zip(PATHS, endpoints, strict=True):
        route = Route(path, endpoint, methods=["GET", "POST", "DELETE"])
        # Starlette lets HEAD in with GET; the transport answers it a 405 of its own
        # (a JSON-RPC body), so it is left out and refused in the envelope in front.
        if route.methods is not None:
            route.methods.discard("HEAD")
        routes.append(route)
    return routes, endpoints


@contextlib.asynccontextmanager
async def running(endpoints: list[_Endpoint], yard: Yard) -> AsyncIterator[None]:
    """Run one session manager per endpoint while the app serves (a manager runs only
    once, and an app's lifespan may run again); close MCP client sessions after."""
    async with contextlib.AsyncExitStack() as stack:
        for endpoint in endpoints:
            endpoint.manager = StreamableHTTPSessionManager(app=endpoint.server)
            await stack.enter_async_context(endpoint.manager.run())
        try:
            yield
        finally:
            for endpoint in endpoints:
                endpoint.manager = None
            closer = getattr(yard.runtimes.get("mcp"), "aclose", None)
            if closer is not None:
                await closer()
