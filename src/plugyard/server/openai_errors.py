"""OpenAI's error shape on the ``/v1`` routes, whichever layer refused the request.

OpenAI's SDKs read ``{"error": {"message", "type", "param", "code"}}``; every other route
answers the Shu envelope. Rather than teach each layer that refuses (the body cap, the
method rule, authentication, validation, the routes) a second shape, this layer in front
of them all rewrites an error answer on a ``/v1`` path: same status, same headers
(``WWW-Authenticate`` included), ``code`` the plugyard code, ``param`` where the first
fault is (``messages.0.content``), ``type`` from the status.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

PREFIX = "/v1/"
_TYPES = {401: "authentication_error", 403: "permission_error", 429: "rate_limit_error"}


def is_openai_path(path: str) -> bool:
    return path.startswith(PREFIX) or path == PREFIX[:-1]


def error_type(status: int) -> str:
    if status >= 500:
        return "server_error"
    return _TYPES.get(status, "invalid_request_error")


def openai_error(status: int, envelope: bytes) -> bytes:
    """The Shu envelope ``envelope`` in OpenAI's shape (a body that is not one is kept as
    the message)."""
    try:
        error = json.loads(envelope)["error"]
        code, message = error["message"]["error"], error["message"]["message"]
        faults = error.get("details", {}).get("errors") or [{}]
        param = _param(str(faults[0].get("pointer", "")))
    except (ValueError, KeyError, TypeError, AttributeError):
        code, message, param = None, envelope.decode("utf-8", "replace"), None
    body = {"message": message, "type": error_type(status), "param": param, "code": code}
    return json.dumps({"error": body}).encode()


def _param(pointer: str) -> str | None:
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
    if parts[:1] == ["body"]:
        parts = parts[1:]
    return ".".join(parts) or None


class OpenAIErrors:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_openai_path(scope["path"]):
            await self.app(scope, receive, send)
            return
        start: dict[str, Any] | None = None
        chunks: list[bytes] = []

        async def shaped(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start" and message["status"] >= 400:
                start = dict(message)  # held until the whole envelope is in
                return
            if start is None or message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            body = openai_error(start["status"], b"".join(chunks))
            headers = [(k, v) for k, v in start.get("headers", ())
                       if k.lower() not in (b"content-length", b"content-type")]  # fmt: skip
            headers += [(b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode())]  # fmt: skip
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, shaped)
