"""``POST /api/v1/plugins/{id}/execute`` (and its SSE variant): the Shu execute request
through the executor — the same call path as every other surface.

The caller's subject and roles come from its API key, never from the body; the body's
``user_context`` is handed to the plugin as it is. ``Accept: text/event-stream`` (or the
``/execute/stream`` path) streams: ``progress`` events as the plugin yields them, then
one ``result`` event with the envelope, and the stream ends.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Annotated, Any

import msgspec
from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import Response, StreamingResponse

from plugyard.errors import PlugyardError
from plugyard.execution.executor import CallRequest, new_request_id
from plugyard.execution.result import Result
from plugyard.runtimes.base import CallContext
from plugyard.server.auth import SECURITY, authenticate, caller
from plugyard.server.bodies import ExecuteBody, ResultEnvelope, read_json, schema_of
from plugyard.server.errors import result_response
from plugyard.server.routes.documented import errors_doc
from plugyard.store.keys import Principal
from plugyard.yard import Yard

router = APIRouter(tags=["execute"])
_encode = msgspec.json.Encoder().encode
_BODY = {
    "requestBody": {
        "required": False,
        "content": {"application/json": {"schema": schema_of(ExecuteBody)}},
    }
}
_SSE_DOC = {
    "description": "`progress` events, then one `result` event carrying the envelope.",
    "content": {
        "text/event-stream": {
            "schema": {
                "type": "object",
                "description": "One event; `data` is JSON: a progress event or the envelope.",
                "required": ["event", "data"],
                "properties": {
                    "event": {"enum": ["progress", "result"]},
                    "data": {"type": "string"},
                },
            }
        }
    },
}
_FAILED = (
    "plugin_not_found",
    "operation_not_found",
    "invalid_parameters",
    "plugin_unavailable",
    "plugin_error",
    "invalid_output",
    "output_validation_error",
    "timeout",
    "permission_denied",
    "budget_exceeded",
    "outbound_blocked",
)
_OPERATION = {
    "name": "operation",
    "in": "query",
    "required": False,
    "description": "Which operation (or `operation` in the body).",
    "schema": {"type": "string"},
}
_REQUEST = ("invalid_request", "unauthenticated", "request_too_large", "unsupported_media_type")


@router.post(
    "/api/v1/plugins/{plugin_id}/execute",
    summary="Call an operation; the result envelope",
    response_model=None,
    responses={
        200: {"model": ResultEnvelope, "content": {"text/event-stream": _SSE_DOC["content"]}},
        **errors_doc(*_REQUEST, *_FAILED, envelope=ResultEnvelope),
    },
    openapi_extra={**_BODY, **SECURITY, "parameters": [_OPERATION]},
)
async def execute(plugin_id: str, request: Request) -> Response:
    # Served by server/fastpath.py ahead of the router; this declaration documents the
    # route and answers when the fast path is not installed.
    return await answer(plugin_id, request)


async def answer(plugin_id: str, request: Request) -> Response:
    """The execute route's whole work. The key and the query are read by hand: FastAPI's
    dependency resolution cost more than the executor itself (bench/RESULTS.md)."""
    principal = authenticate(request)
    operation = request.query_params.get("operation")
    call = await _read_call(plugin_id, request, principal, operation)
    yard: Yard = request.app.state.yard
    if "text/event-stream" in request.headers.get("accept", ""):
        return _streaming(yard, call)
    return result_response(await yard.executor.call(call))


@router.post(
    "/api/v1/plugins/{plugin_id}/execute/stream",
    summary="Call an operation; progress and the result as server-sent events",
    response_model=None,
    responses={200: _SSE_DOC, **errors_doc(*_REQUEST)},
    openapi_extra=_BODY,
)
async def execute_stream(
    plugin_id: str,
    request: Request,
    principal: Annotated[Principal, Depends(caller)],
    operation: Annotated[str | None, Query(description="Which operation (or in the body).")] = None,
) -> Response:
    call = await _read_call(plugin_id, request, principal, operation)
    return _streaming(request.app.state.yard, call)


def _streaming(yard: Yard, call: CallRequest) -> StreamingResponse:
    async def events() -> AsyncIterator[bytes]:
        async for item in yard.executor.stream(call):
            if isinstance(item, Result):
                yield b"event: result\ndata: " + _encode(item.to_dict()) + b"\n\n"
            else:
                yield b"event: progress\ndata: " + _encode(item.to_dict()) + b"\n\n"

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(events(), media_type="text/event-stream", headers=headers)


async def _read_call(
    plugin_id: str, request: Request, principal: Principal, operation: str | None
) -> CallRequest:
    body = await read_json(request, empty={})
    if not isinstance(body, dict):
        raise PlugyardError("the body must be a JSON object", code="invalid_request")
    parameters = _member(body, "parameters", dict, {})
    user_context = _member(body, "user_context", dict, {})
    named = _member(body, "operation", str, None)
    timeout_ms = _member(body, "timeout_ms", int, None)
    if timeout_ms is not None and not 1 <= timeout_ms <= 3_600_000:
        raise PlugyardError("/timeout_ms: between 1 and 3600000", code="invalid_request")
    debug = _member(body, "debug", bool, False)
    receipt = _member(body, "approval_receipt", str, None)
    context = CallContext(
        request_id=new_request_id(),
        subject=principal.subject,
        roles=principal.roles,
        user_context=user_context,
        idempotency_key=request.headers.get("idempotency-key"),
        debug=debug,
    )
    return CallRequest(
        plugin_id, named or operation, parameters, context, timeout_ms, approval_receipt=receipt
    )


def _member(body: Mapping[str, Any], name: str, kind: type, default: Any) -> Any:
    value = body.get(name)
    if value is None:
        return default
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise PlugyardError(f"/{name}: must be {kind.__name__}", code="invalid_request")
    return value
