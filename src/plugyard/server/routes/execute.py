"""``POST /api/v1/plugins/{id}/execute`` (and its SSE variant): the Shu execute request
through the executor — the same call path as every other surface.

The caller's subject and roles come from its API key, never from the body; the body's
``user_context`` is handed to the plugin as it is. ``Accept: text/event-stream`` (or the
``/execute/stream`` path) streams: ``progress`` events as the plugin yields them, then
one ``result`` event with the envelope, and the stream ends.

A call that fails answers the error envelope every route answers, its result envelope in
``details`` (``errors.result_response``); a stream has answered 200 by then, so there
the failure is its ``result`` event, and only what is refused before it starts is an
error envelope.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Annotated

import msgspec
from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import Response, StreamingResponse

from plugyard.execution.executor import CallRequest, new_request_id
from plugyard.execution.result import Result
from plugyard.runtimes.base import CallContext
from plugyard.server import members
from plugyard.server.auth import SECURITY, authenticate, caller
from plugyard.server.bodies import ResultEnvelope
from plugyard.server.errors import result_response
from plugyard.server.faults import InvalidRequest, fault
from plugyard.server.inputs import MAX_TIMEOUT_MS, ExecuteBody, header, read_json, schema_of
from plugyard.server.routes.documented import (
    IDEMPOTENCY_KEY,
    IDEMPOTENCY_KEY_MAX,
    IDEMPOTENCY_KEY_TEXT,
    errors_doc,
)
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
#: What a call can end in (the executor, the policy, approvals, the runtimes).
CALL_FAILURES = (
    "plugin_not_found",
    "operation_not_found",
    "invalid_parameters",
    "plugin_unavailable",
    "plugin_error",
    "invalid_output",
    "output_validation_error",
    "wrapper_protocol_error",
    "worker_lost",
    "binding_undeclared",
    "timeout",
    "permission_denied",
    "capability_not_granted",
    "capability_unavailable",
    "budget_exceeded",
    "rate_limited",
    "outbound_blocked",
    "egress_denied",
    "missing_secrets",
    "invalid_receipt",
    "receipt_expired",
    "receipt_used",
    "approval_pending",
    "approval_rejected",
    "idempotency_conflict",
    "idempotency_unknown",
    "tool_changed",
    "sandbox_unavailable",
    "store_error",
)
_OPERATION = {
    "name": "operation",
    "in": "query",
    "required": False,
    "description": "Which operation (or `operation` in the body).",
    "schema": {"type": "string"},
}
_REQUEST = ("invalid_request", "unauthenticated", "unsupported_media_type")
_KEY_TEXT = re.compile(IDEMPOTENCY_KEY_TEXT)
#: The body's members as ``ExecuteBody`` documents them, checked by hand.
_MEMBERS: dict[str, members.Check] = {
    "parameters": members.OBJECT,
    "user_context": members.OBJECT,
    "operation": members.STRING,
    "timeout_ms": members.integer(1, MAX_TIMEOUT_MS),
    "debug": members.BOOLEAN,
    "approval_receipt": members.STRING,
    "search_id": members.STRING,
}


@router.post(
    "/api/v1/plugins/{plugin_id}/execute",
    summary="Call an operation; the result envelope",
    response_model=None,
    responses={
        200: {"model": ResultEnvelope, "content": {"text/event-stream": _SSE_DOC["content"]}},
        **errors_doc(*_REQUEST, *CALL_FAILURES),
    },
    openapi_extra={**_BODY, **SECURITY, "parameters": [_OPERATION, IDEMPOTENCY_KEY]},
)
async def execute(plugin_id: str, request: Request) -> Response:
    # Served by server/fastpath.py ahead of the router; this declaration documents the
    # route and answers when the fast path is not installed.
    return await answer(plugin_id, request)


async def answer(plugin_id: str, request: Request) -> Response:
    """The execute route's whole work. The key and the query are read by hand: FastAPI's
    dependency resolution cost more than the executor itself (bench/RESULTS.md)."""
    principal = authenticate(request)
    # Parsing an empty query string costs more than the rest of this line.
    operation = request.query_params.get("operation") if request.scope["query_string"] else None
    call, search_id = await _read_call(plugin_id, request, principal, operation)
    yard: Yard = request.app.state.yard
    if "text/event-stream" in (header(request, b"accept") or ""):
        return _streaming(yard, call, search_id)
    result = await yard.executor.call(call)
    _learn(yard, search_id, principal.subject, result, call)
    return result_response(result)


def _learn(
    yard: Yard, search_id: str | None, subject: str | None, result: Result, call: CallRequest
) -> None:
    """A call that named its search and succeeded teaches discovery (docs/discovery.md);
    the answer never depends on it."""
    if search_id is not None and subject is not None and result.ran_ok:
        yard.learn_from_call(search_id, subject, call.plugin_id, result.operation or call.operation)


@router.post(
    "/api/v1/plugins/{plugin_id}/execute/stream",
    summary="Call an operation; progress and the result as server-sent events",
    response_model=None,
    responses={200: _SSE_DOC, **errors_doc(*_REQUEST)},
    openapi_extra={**_BODY, "parameters": [IDEMPOTENCY_KEY]},
)
async def execute_stream(
    plugin_id: str,
    request: Request,
    principal: Annotated[Principal, Depends(caller)],
    operation: Annotated[str | None, Query(description="Which operation (or in the body).")] = None,
) -> Response:
    call, search_id = await _read_call(plugin_id, request, principal, operation)
    return _streaming(request.app.state.yard, call, search_id)


def _streaming(yard: Yard, call: CallRequest, search_id: str | None = None) -> StreamingResponse:
    async def events() -> AsyncIterator[bytes]:
        async for item in yard.executor.stream(call):
            if isinstance(item, Result):
                _learn(yard, search_id, call.context.subject if call.context else None, item, call)
                yield b"event: result\ndata: " + _encode(item.to_dict()) + b"\n\n"
            else:
                yield b"event: progress\ndata: " + _encode(item.to_dict()) + b"\n\n"

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(events(), media_type="text/event-stream", headers=headers)


async def _read_call(
    plugin_id: str, request: Request, principal: Principal, operation: str | None
) -> tuple[CallRequest, str | None]:
    body = members.read(await read_json(request, empty={}), _MEMBERS)
    key = header(request, b"idempotency-key")
    # Checked before a stream starts: once it has, the answer is 200 whatever the call says.
    if key is not None and not (len(key) <= IDEMPOTENCY_KEY_MAX and _KEY_TEXT.search(key)):
        raise InvalidRequest([fault("/header/Idempotency-Key", "1 to 255 characters, not blank")])
    context = CallContext(
        request_id=new_request_id(),
        subject=principal.subject,
        roles=principal.roles,
        user_context=body.get("user_context", {}),
        idempotency_key=key,
        debug=body.get("debug", False),
    )
    call = CallRequest(
        plugin_id,
        body.get("operation") or operation,
        body.get("parameters", {}),
        context,
        body.get("timeout_ms"),
        approval_receipt=body.get("approval_receipt"),
    )
    return call, body.get("search_id")
