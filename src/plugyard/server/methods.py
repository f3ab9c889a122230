"""Which methods a path takes: the ``Allow`` header of every 405, and OpenAPI's rule that
a concrete path is matched before a templated one.

Starlette answers a wrong method with the methods of the first route whose template
matches, and lets ``GET /api/v1/plugins/register`` fall through to
``/api/v1/plugins/{plugin_id}``. The OpenAPI document reads that URL as the register
resource, which takes POST only: so here a concrete path takes only its own routes'
methods, and a 405 lists every method of the resource.
"""

from __future__ import annotations

from collections.abc import Iterable

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from plugyard.server.errors import error_response


class Resources:
    """The served routes by path: built once, when the app is."""

    def __init__(self, routes: Iterable[BaseRoute]) -> None:
        self._routes = [r for r in routes if isinstance(r, Route) and r.methods]
        concrete: dict[str, set[str]] = {}
        for route in self._routes:
            if not route.param_convertors:
                concrete.setdefault(route.path, set()).update(route.methods or ())
        self._concrete = {path: frozenset(methods) for path, methods in concrete.items()}

    def concrete(self, path: str) -> frozenset[str] | None:
        """The methods of a concrete path (``None`` when no route has it literally)."""
        return self._concrete.get(path)

    def allowed(self, path: str) -> list[str]:
        """The methods the resource at ``path`` takes."""
        concrete = self._concrete.get(path)
        if concrete is not None:
            return sorted(concrete)
        probe: Scope = {"type": "http", "path": path, "root_path": "", "method": "GET"}
        methods: set[str] = set()
        for route in self._routes:
            if route.param_convertors and route.matches(probe)[0] != Match.NONE:
                methods |= route.methods or set()
        return sorted(methods)


def method_not_allowed(method: str, allow: list[str]) -> Response:
    return error_response(
        "method_not_allowed",
        f"{method} is not a method of this resource; it takes {', '.join(allow)}",
        headers={"Allow": ", ".join(allow)},
    )


class ConcretePaths:
    """Answers 405 for a concrete path whose routes do not take the method, before a
    templated route can take the request. One dict lookup per request."""

    def __init__(self, app: ASGIApp, resources: Resources) -> None:
        self.app = app
        self.resources = resources

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            methods = self.resources.concrete(scope["path"])
            if methods is not None and scope["method"] not in methods:
                refusal = method_not_allowed(scope["method"], sorted(methods))
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)


def install(app: FastAPI, resources: Resources) -> None:
    """Every 405 the router raises lists the resource's methods, not one route's."""

    async def wrong_method(request: Request, exc: Exception) -> Response:
        return method_not_allowed(request.method, resources.allowed(request.scope["path"]))

    app.add_exception_handler(405, wrong_method)
