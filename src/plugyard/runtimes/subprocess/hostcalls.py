"""Serving a worker's host calls with the gated host object the executor lent the call.

Only a fixed set of methods per capability is served — never an arbitrary attribute, so a
worker cannot walk from ``host.storage`` to the store behind it. The capability itself is
asked of the host object (``getattr(host, capability)``), which answers
``capability_not_granted`` for one the manifest does not declare.
"""

from __future__ import annotations

import base64
import inspect
from typing import Any

from plugyard.runtimes.base import ErrorInfo

#: capability → the methods a worker may call on it.
METHODS: dict[str, frozenset[str]] = {
    "cache": frozenset({"get", "set", "delete"}),
    "secrets": frozenset({"get", "has"}),
    "storage": frozenset({"get", "put", "set", "delete", "keys"}),
    "cursor": frozenset({"get", "set", "delete"}),
    "rate_limit": frozenset({"try_acquire", "limit"}),
    "identity": frozenset({"lookup", "get_current_user_identity", "get_primary_email"}),
    "audit": frozenset({"record"}),
    "scheduler": frozenset({"enqueue"}),
    "http": frozenset({"fetch"}),
    "logger": frozenset({"debug", "info", "warning", "error", "exception"}),
    "log": frozenset({"debug", "info", "warning", "error", "exception"}),
    "kb": frozenset(
        {"ingest_document", "ingest_email", "ingest_thread", "ingest_text", "ingest"}
        | {"upsert_knowledge_object", "search_chunks", "search_documents", "get_document"}
    ),
    "query": frozenset({"search", "get"}),
    "ocr": frozenset({"extract_text"}),
    "auth": frozenset(
        {"resolve_token_and_target", "provider_user_token", "provider_service_account_token"}
    ),
    # MRP-VM plugins in plugyard's Node host: the model bridge and externalHelpers.
    "llm": frozenset({"chat"}),
    "helpers": frozenset({"collect", "list"}),
}
#: The methods that are coroutines on the host side (a worker may await them).
ASYNC_METHODS: frozenset[tuple[str, str]] = frozenset(
    {("http", "fetch")}
    | {(name, method) for name in ("kb", "query", "ocr", "auth") for method in METHODS[name]}
    | {("llm", "chat"), ("helpers", "collect"), ("helpers", "list")}
)
#: How bytes cross the pipe (JSON has none): ``{"$bytes": "<base64>"}``.
BYTES_KEY = "$bytes"


def bytes_out(value: Any) -> Any:
    """``value`` with its bytes wrapped for the pipe (the worker's side)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return {BYTES_KEY: base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, dict):
        return {k: bytes_out(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [bytes_out(v) for v in value]
    return value


def bytes_in(value: Any) -> Any:
    """``value`` with wrapped bytes unwrapped (the host's side)."""
    if isinstance(value, dict):
        if set(value) == {BYTES_KEY} and isinstance(value[BYTES_KEY], str):
            try:
                return base64.b64decode(value[BYTES_KEY], validate=True)
            except ValueError:
                return value
        return {k: bytes_in(v) for k, v in value.items()}
    if isinstance(value, list):
        return [bytes_in(v) for v in value]
    return value


async def serve(
    host: Any, capability: str, method: str, args: list[Any], kwargs: dict[str, Any]
) -> tuple[Any, ErrorInfo | None]:
    """``(result, None)`` or ``(None, error)`` for one host call."""
    if method not in METHODS.get(capability, frozenset()):
        return None, ErrorInfo(
            "capability_unavailable", f"host.{capability}.{method} is not served to workers"
        )
    if host is None:
        return None, ErrorInfo("capability_unavailable", "this call has no host object")
    try:
        service = getattr(host, capability)
        value = getattr(service, method)(*bytes_in(args), **bytes_in(kwargs))
        if inspect.isawaitable(value):
            value = await value
    except TypeError as exc:
        return None, ErrorInfo("invalid_request", f"host.{capability}.{method}: {exc}")
    except Exception as exc:
        code = getattr(exc, "code", None)
        details = getattr(exc, "details", None)
        return None, ErrorInfo(
            code if isinstance(code, str) else "plugin_error",
            f"{type(exc).__name__}: {exc}",
            details if isinstance(details, dict) else {},
        )
    return value, None
