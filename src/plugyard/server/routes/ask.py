"""``POST /api/v1/ask`` (and its SSE variant): the routing flow over HTTP
(docs/routing.md) — retrieve what the caller may call, the model chooses, the executor
calls, the answer.

Who asks is the API key's subject with its roles, never a member of the body. Every
ending of the flow is an answer with HTTP 200 — a model that is down or slow is
``status: error`` with ``llm_unavailable`` or ``llm_timeout``, as a pipeline run that
fails is a run — and only a request refused before the flow starts (no key, a malformed
body) is an error envelope. ``Accept: text/event-stream`` (or the ``/ask/stream`` path)
streams one ``step`` event as each step finishes, then one ``answer`` event.

``POST /api/v1/ask/confirm`` runs a call an ask held back (``pending_confirmation``) by
its receipt, for the key's subject only, through the executor as any call: the policy
answers the same question it answers for ``execute``, and the answer is the result
envelope ``execute`` gives (an error's code with its HTTP status).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Annotated, Any

import msgspec
from fastapi import APIRouter, Depends, Request
from starlette.responses import Response, StreamingResponse

from plugyard.routing import Answer, Step
from plugyard.server.auth import caller
from plugyard.server.bodies import AskReply, ResultEnvelope
from plugyard.server.errors import json_response, result_response
from plugyard.server.inputs import AskBody, ConfirmBody
from plugyard.server.routes.documented import JSON_BODY, KEYED, errors_doc
from plugyard.server.routes.execute import CALL_FAILURES
from plugyard.store.keys import Principal
from plugyard.yard import Yard

router = APIRouter(tags=["routing"])
_encode = msgspec.json.Encoder().encode
_SSE = {
    "text/event-stream": {
        "schema": {
            "type": "object",
            "description": "One event; `data` is JSON: a step of the trace, or the answer.",
            "required": ["event", "data"],
            "properties": {"event": {"enum": ["step", "answer"]}, "data": {"type": "string"}},
        }
    }
}
_SSE_DOC = {"description": "`step` events as the steps finish, then one `answer` event.",
            "content": _SSE}  # fmt: skip
_ERRORS = errors_doc(*KEYED, *JSON_BODY)
#: A confirmed call ends as any call can (the execute route's codes).
_CONFIRM_ERRORS = errors_doc(*KEYED, *JSON_BODY, *CALL_FAILURES)
_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


@router.post(
    "/api/v1/ask",
    summary="Answer a request by routing it to an operation the caller may call",
    response_model=AskReply,
    responses={200: {"content": _SSE}, **_ERRORS},
)
async def ask(
    request: Request, body: AskBody, principal: Annotated[Principal, Depends(caller)]
) -> Response:
    if "text/event-stream" in request.headers.get("accept", ""):
        return _streaming(request, body, principal)
    answer = await _ask(request, body, principal)
    return json_response(answer.to_dict())


@router.post(
    "/api/v1/ask/stream",
    summary="Answer a request by routing; each step and the answer as server-sent events",
    response_model=None,
    responses={200: _SSE_DOC, **_ERRORS},
)
async def ask_stream(
    request: Request, body: AskBody, principal: Annotated[Principal, Depends(caller)]
) -> Response:
    return _streaming(request, body, principal)


@router.post(
    "/api/v1/ask/confirm",
    summary="Run a call an ask held for your confirmation, by its receipt",
    response_model=ResultEnvelope,
    responses=_CONFIRM_ERRORS,
)
async def confirm(
    request: Request, body: ConfirmBody, principal: Annotated[Principal, Depends(caller)]
) -> Response:
    yard: Yard = request.app.state.yard
    result = await yard.router.confirm(body.receipt, subject=principal.subject,
                                       roles=principal.roles)  # fmt: skip
    return result_response(result)


async def _ask(
    request: Request, body: AskBody, principal: Principal, on_step: Any = None
) -> Answer:
    yard: Yard = request.app.state.yard
    return await yard.router.ask(
        body.message,
        subject=principal.subject,
        roles=principal.roles,
        k=body.k,
        max_steps=body.max_steps,
        on_step=on_step,
    )


def _streaming(request: Request, body: AskBody, principal: Principal) -> StreamingResponse:
    async def events() -> AsyncIterator[bytes]:
        steps: asyncio.Queue[Step | None] = asyncio.Queue()
        task = asyncio.create_task(_ask(request, body, principal, steps.put_nowait))
        task.add_done_callback(lambda _: steps.put_nowait(None))
        try:
            while (step := await steps.get()) is not None:
                yield b"event: step\ndata: " + _encode(step.to_dict()) + b"\n\n"
            yield b"event: answer\ndata: " + _encode(task.result().to_dict()) + b"\n\n"
        finally:
            # A client that left stops the flow between steps, not after it.
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    return StreamingResponse(events(), media_type="text/event-stream", headers=_HEADERS)
