"""The ``http`` runtime: an external plugin's operation is a request to its own server.

The URL is the operation's ``http_path`` (HomeClaw capability ``path``; else the
plugin's ``config.path``; else ``/``) joined to ``base_url``: the path is always taken
relative to it, so ``base_url`` ``http://h:3100/v1`` and path ``/post`` call
``http://h:3100/v1/post``. The method is the operation's ``http_method`` (default
``POST``). Parameters travel as the JSON body, or as the query string for ``GET``,
``HEAD`` and ``DELETE``. The deadline is the plugin's ``timeout_s`` (HomeClaw
``timeout_sec``) inside the executor's own; the response is capped at the plugin's
``config.max_response_bytes`` or the client's default.

A plugin read from a HomeClaw document (``envelope: homeclaw``) is always posted
HomeClaw's ``PluginRequest`` and answers a ``PluginResult`` (:mod:`.homeclaw`).

What comes back: a JSON object shaped as a result envelope (Shu ``ToolResult``) is read
as one; any other JSON is the data; ``text/*`` is ``{"text": ...}``. A status other than
2xx is ``plugin_error`` (with the status and the start of the body); a body that is not
what its content type says is ``invalid_output``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import msgspec

from plugyard.manifest.model import HttpRuntime, Operation
from plugyard.runtimes.base import Answer, CallContext, ErrorInfo, Outcome, Target
from plugyard.runtimes.http.homeclaw import plugin_request, read_plugin_result
from plugyard.runtimes.outbound.client import OutboundClient, Reply, query_pairs
from plugyard.runtimes.outbound.guard import SCHEMES, OutboundError
from plugyard.runtimes.python.coerce import to_outcome

QUERY_METHODS = frozenset({"GET", "HEAD", "DELETE"})
_PREVIEW = 512
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


class HttpPluginRuntime:
    """Runs operations of ``http`` plugins (the ``Runtime`` protocol)."""

    kind = "http"

    def __init__(self, client: OutboundClient | None = None) -> None:
        self.client = client or OutboundClient()

    def check(self, target: Target) -> str | None:
        runtime = target.descriptor.runtime
        if not isinstance(runtime, HttpRuntime):
            return f"not an http plugin (runtime {runtime.kind!r})"
        return url_problem(runtime.base_url)

    async def invoke(
        self,
        target: Target,
        operation: Operation,
        params: dict[str, Any],
        context: CallContext,
        host: Any,
    ) -> Answer:
        del host  # an external plugin reaches the host only through its own API
        runtime = target.descriptor.runtime
        if not isinstance(runtime, HttpRuntime):
            return _failure("plugin_unavailable", "not an http plugin")
        method = (operation.http_method or "POST").upper()
        url = operation_url(runtime, operation)
        headers = {
            "Accept": "application/json",
            "X-Plugyard-Request-Id": context.request_id,
            "X-Plugyard-Plugin": target.descriptor.id,
            "X-Plugyard-Operation": operation.id,
        }
        homeclaw = runtime.envelope == "homeclaw"
        if homeclaw:
            params = plugin_request(target.descriptor.id, operation.id, params, context)
        try:
            if method in QUERY_METHODS and not homeclaw:
                reply = await self.client.request(
                    method,
                    url,
                    params=query_pairs(params),
                    headers=headers,
                    timeout_s=_timeout(runtime),
                    max_bytes=_cap(runtime),
                )
            else:
                reply = await self.client.request(
                    method,
                    url,
                    json_body=_encode(params),
                    headers=headers,
                    timeout_s=_timeout(runtime),
                    max_bytes=_cap(runtime),
                )
        except OutboundError as exc:
            status = "timeout" if exc.code == "timeout" else "error"
            return Outcome(status=status, error=ErrorInfo(exc.code, exc.message, exc.details))
        if homeclaw:
            return read_homeclaw_reply(reply)
        return read_reply(reply)


def operation_url(runtime: HttpRuntime, operation: Operation) -> str:
    path = operation.http_path
    if path is None:
        configured = runtime.config.get("path")
        path = configured if isinstance(configured, str) else "/"
    return runtime.base_url.rstrip("/") + "/" + path.lstrip("/")


def url_problem(url: str | None) -> str | None:
    """Why ``url`` cannot be a plugin's URL (``None`` when it can). Text only."""
    if not url:
        return "no URL"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as exc:
        return f"{url!r} is not a URL: {exc}"
    if parts.scheme.lower() not in SCHEMES or not parts.hostname:
        return f"{url!r} is not an http(s) URL with a host"
    return None


def read_reply(reply: Reply) -> Outcome:
    """What a plugin server's response stands for (see the module docstring)."""
    if not 200 <= reply.status < 300:
        return _failure(
            "plugin_error",
            f"the plugin answered HTTP {reply.status}",
            http_status=reply.status,
            body=reply.body[:_PREVIEW].decode("utf-8", "replace"),
        )
    kind = reply.content_type
    if not reply.body and reply.status == 204:
        return Outcome(data=None)
    if kind == "application/json" or kind.endswith("+json") or not kind:
        try:
            value = _decode(reply.body)
        except msgspec.DecodeError as exc:
            if kind:
                return _failure("invalid_output", f"the plugin's JSON does not parse: {exc}")
        else:
            return to_outcome(value)
    if kind.startswith("text/") or not kind:
        try:
            return Outcome(data={"text": reply.body.decode("utf-8")})
        except UnicodeDecodeError:
            return _failure("invalid_output", "the plugin's text is not UTF-8")
    return _failure("invalid_output", f"the plugin answered {kind!r}, not JSON or text")


def read_homeclaw_reply(reply: Reply) -> Outcome:
    """A HomeClaw plugin's answer: a non-2xx status as :func:`read_reply` reads it, any
    other body a ``PluginResult`` (module :mod:`.homeclaw`)."""
    if not 200 <= reply.status < 300:
        return read_reply(reply)
    try:
        value = _decode(reply.body)
    except msgspec.DecodeError as exc:
        return _failure("invalid_output", f"the plugin's PluginResult does not parse: {exc}")
    return read_plugin_result(value)


def _timeout(runtime: HttpRuntime) -> float:
    return runtime.timeout_s if runtime.timeout_s else 30.0


def _cap(runtime: HttpRuntime) -> int | None:
    value = runtime.config.get("max_response_bytes")
    return value if isinstance(value, int) and value > 0 else None


def _failure(code: str, message: str, **details: Any) -> Outcome:
    return Outcome(status="error", error=ErrorInfo(code, message, details))
