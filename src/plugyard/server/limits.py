"""The request body cap, as plain ASGI middleware (it runs on every request, so it stays
off Starlette's slower ``BaseHTTPMiddleware``)."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from plugyard.errors import PlugyardError
from plugyard.server.errors import error_envelope, status_of


class BodyLimit:
    """Refuse bodies over ``max_bytes``: at once when ``Content-Length`` says so, else
    as the bytes arrive (the route's read raises ``request_too_large``)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length":
                if value.isdigit() and int(value) > self.max_bytes:
                    await _refuse(send, f"the body of {int(value)} bytes exceeds {self.max_bytes}")
                    return
                break
        seen = 0
        cap = self.max_bytes

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > cap:
                    raise PlugyardError(f"the body exceeds {cap} bytes", code="request_too_large")
            return message

        await self.app(scope, counted, send)


async def _refuse(send: Send, message: str) -> None:
    body = error_envelope("request_too_large", message)
    await send(
        {
            "type": "http.response.start",
            "status": status_of("request_too_large"),
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
