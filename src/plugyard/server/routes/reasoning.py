"""Reasoning over HTTP: ``POST /api/v1/reason`` (and its server-sent events of the
stages as they finish) and the DS027 records of past requests (docs/reasoning.md).

Who asks comes only from the API key: the request runs with the key's subject and roles,
and its session must be the subject's. ``Accept: text/event-stream`` (or the
``/reason/stream`` path) streams a ``stage``, ``planner``, ``plan``, ``hook`` or ``note``
event per step as it happens, then one ``result`` event with the whole answer (or, for a
failure of plugyard itself once the stream began, one ``error`` event).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Annotated

import msgspec
from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import Response, StreamingResponse

from plugyard.reasoning import Reasoned, ReasoningService
from plugyard.reasoning.trace import TraceEvent
from plugyard.server.auth import caller
from plugyard.server.errors import json_response
from plugyard.server.inputs import DIGITS
from plugyard.server.reasoning_bodies import OutcomeRecord, ReasonAnswer, ReasonBody
from plugyard.server.routes.documented import JSON_BODY, KEYED, errors_doc
from plugyard.store.keys import Principal
from plugyard.types import Caller

router = APIRouter(tags=["reasoning"])
_encode = msgspec.json.Encoder().encode
_EVENTS = ("stage", "planner", "plan", "hook", "note", "result", "error")
_SSE = {
    "text/event-stream": {
        "schema": {
            "type": "object",
            "description": "One event; `data` is JSON: a trace event, or the whole answer.",
            "required": ["event", "data"],
            "properties": {"event": {"enum": list(_EVENTS)}, "data": {"type": "string"}},
        }
    }
}
_ERRORS = errors_doc(*KEYED, *JSON_BODY, "session_not_found")


def service(request: Request) -> ReasoningService:
    found: ReasoningService = request.app.state.yard.reasoning
    return found


def who(principal: Principal) -> Caller:
    return Caller(principal.subject, tuple(principal.roles))


@router.post(
    "/api/v1/reason",
    summary="Answer a prompt with the reasoning plugins; the answer, its record and trace",
    response_model=ReasonAnswer,
    responses={200: {"content": _SSE}, **_ERRORS},
)
async def reason(
    request: Request, body: ReasonBody, principal: Annotated[Principal, Depends(caller)]
) -> Response:
    if "text/event-stream" in request.headers.get("accept", ""):
        return _streaming(service(request), body, who(principal))
    answer = await _run(service(request), body, who(principal))
    return json_response(answer.to_dict())


@router.post(
    "/api/v1/reason/stream",
    summary="Answer a prompt; each step, then the answer, as server-sent events",
    response_model=None,
    responses={
        200: {"description": "Trace events, then one `result`.", "content": _SSE},
        **_ERRORS,
    },
)
async def reason_stream(
    request: Request, body: ReasonBody, principal: Annotated[Principal, Depends(caller)]
) -> Response:
    return _streaming(service(request), body, who(principal))


@router.get(
    "/api/v1/outcomes",
    summary="The caller's planner outcome records (DS027), newest first",
    response_model=list[OutcomeRecord],
    responses=errors_doc(*KEYED),
)
async def outcomes(
    request: Request,
    principal: Annotated[Principal, Depends(caller)],
    session: Annotated[str | None, Query(description="Only this session's requests.")] = None,
    limit: Annotated[int, Query(ge=1, le=1000, description="At most this many."), DIGITS] = 50,
) -> Response:
    found = service(request).records(caller=who(principal), session_id=session, limit=limit)
    return json_response([r.to_dict() for r in found])


@router.get(
    "/api/v1/outcomes/{request_id}",
    summary="The planner outcome record of one request",
    response_model=OutcomeRecord,
    responses=errors_doc(*KEYED, "outcome_not_found"),
)
async def outcome(
    request_id: str, request: Request, principal: Annotated[Principal, Depends(caller)]
) -> Response:
    return json_response(service(request).record(request_id, who(principal)).to_dict())


async def _run(
    reasoning: ReasoningService, body: ReasonBody, who: Caller, on_event: object = None
) -> Reasoned:
    return await reasoning.reason(
        body.prompt,
        session=body.session,
        sources=[(s.name, s.text) for s in body.sources],
        pins={str(k): v for k, v in body.pins.items()},
        budget=body.budget,
        caller=who,
        on_event=on_event,  # type: ignore[arg-type]
    )


def _streaming(reasoning: ReasoningService, body: ReasonBody, who: Caller) -> Response:
    if body.session is not None:  # refused before the stream answers 200
        reasoning.session(body.session, who)
    queue: asyncio.Queue[TraceEvent | Reasoned | BaseException] = asyncio.Queue()

    async def produce() -> None:
        try:
            queue.put_nowait(await _run(reasoning, body, who, queue.put_nowait))
        except BaseException as exc:  # handed to the stream, which ends with it
            queue.put_nowait(exc)

    async def events() -> AsyncIterator[bytes]:
        task = asyncio.create_task(produce())
        try:
            while True:
                item = await queue.get()
                if isinstance(item, TraceEvent):
                    yield _event(item.kind, item.to_dict())
                elif isinstance(item, Reasoned):
                    yield _event("result", item.to_dict())
                    return
                else:  # refused after the stream began: its last event says why
                    code = getattr(item, "code", "internal_error")
                    yield _event("error", {"code": code, "message": str(item)})
                    return
        finally:
            if not task.done():  # the client went away: the request stops with it
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(events(), media_type="text/event-stream", headers=headers)


def _event(name: str, data: object) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + _encode(data) + b"\n\n"
