"""The execute route, served ahead of FastAPI's router.

``POST /api/v1/plugins/{id}/execute`` is the route a busy service answers most. Through
the router, FastAPI's route matching and dependency resolution cost as much as the whole
governed call (bench/RESULTS.md, "HTTP API"), so this plain ASGI layer answers it with
the route's own handler (``routes.execute.answer``) and the same error envelopes. The
FastAPI declaration stays: it documents the route in OpenAPI and answers if this layer
is not installed. Everything else passes through untouched.
"""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from plugyard.errors import PlugyardError
from plugyard.server.errors import refusal_response, unexpected_response
from plugyard.server.routes.execute import answer

# Starlette's ``{plugin_id}`` matches one path segment; so does this.
_EXECUTE = re.compile(r"/api/v1/plugins/([^/]+)/execute")


class ExecuteFastPath:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            found = _EXECUTE.fullmatch(scope["path"])
            if found is not None:
                request = Request(scope, receive)
                try:
                    response = await answer(found.group(1), request)
                except PlugyardError as exc:
                    response = refusal_response(exc)
                except Exception as exc:  # the envelope, as the router's handler gives it
                    response = unexpected_response(request.method, scope["path"], exc)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
