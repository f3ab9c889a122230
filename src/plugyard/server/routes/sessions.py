"""Reasoning sessions and their sources over HTTP (docs/reasoning.md). A session belongs
to the subject of the key that created it: another key, whatever its roles, gets
``session_not_found``. Each change tells every enabled KB plugin (DS027 session events),
with the key's rights."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import Response

from plugyard.server.auth import caller
from plugyard.server.errors import json_response
from plugyard.server.inputs import DIGITS
from plugyard.server.reasoning_bodies import (
    MountBody,
    PreferencesBody,
    SaveBody,
    SessionBody,
    SessionOut,
    SourceIn,
    SourceOut,
    UnitsBody,
)
from plugyard.server.routes.documented import JSON_BODY, KEYED, errors_doc
from plugyard.server.routes.reasoning import service, who
from plugyard.store.keys import Principal

router = APIRouter(tags=["reasoning"])
Key = Annotated[Principal, Depends(caller)]


async def _held(session_id: str, request: Request, principal: Key) -> str:
    """A request without a body names a session that must exist first: an unknown one
    (or another subject's) is ``session_not_found`` rather than a missing body. A body
    is judged before the session is looked up (by the route itself), as on every route."""
    if not await request.body():
        service(request).session(session_id, who(principal))
    return session_id


Held = Annotated[str, Depends(_held)]
_CHANGE = errors_doc(*KEYED, *JSON_BODY, "session_not_found")


@router.post(
    "/api/v1/sessions",
    summary="Start a session (its KB identity and plugin preferences)",
    status_code=201,
    response_model=SessionOut,
    responses=errors_doc(*KEYED, *JSON_BODY),
)
async def create_session(request: Request, body: SessionBody, principal: Key) -> Response:
    created = await service(request).create_session(
        kb_id=body.kbId,
        kb_name=body.kbName,
        preferences={str(k): v for k, v in body.preferences.items()},
        caller=who(principal),
    )
    return json_response(created.to_dict(), status=201)


@router.get(
    "/api/v1/sessions",
    summary="The caller's sessions, the most recently used first",
    response_model=list[SessionOut],
    responses=errors_doc(*KEYED),
)
async def list_sessions(
    request: Request,
    principal: Key,
    limit: Annotated[int, Query(ge=1, le=1000, description="At most this many."), DIGITS] = 50,
) -> Response:
    found = service(request).list_sessions(who(principal), limit)
    return json_response([s.to_dict(units=False) for s in found])


@router.get(
    "/api/v1/sessions/{session_id}",
    summary="One session, with its staged and committed knowledge units",
    response_model=SessionOut,
    responses=errors_doc(*KEYED, "session_not_found"),
)
async def get_session(session_id: str, request: Request, principal: Key) -> Response:
    return json_response(service(request).session(session_id, who(principal)).to_dict())


@router.put(
    "/api/v1/sessions/{session_id}/preferences",
    summary="Set the preferred plugin per stage (tried first, never alone)",
    response_model=SessionOut,
    responses=_CHANGE,
)
async def prefer(
    session_id: Held, request: Request, body: PreferencesBody, principal: Key
) -> Response:
    changed = await service(request).prefer(
        session_id, {str(k): v for k, v in body.preferences.items()}, who(principal)
    )
    return json_response(changed.to_dict(units=False))


@router.post(
    "/api/v1/sessions/{session_id}/units",
    summary="Stage knowledge units for the session's next turn",
    response_model=SessionOut,
    responses=_CHANGE,
)
async def stage_units(
    session_id: Held, request: Request, body: UnitsBody, principal: Key
) -> Response:
    units = [u.model_dump() for u in body.units]
    changed = await service(request).stage_units(session_id, units, who(principal))
    return json_response(changed.to_dict(units=False))


@router.put(
    "/api/v1/sessions/{session_id}/kb",
    summary="Mount a KB on the session",
    response_model=SessionOut,
    responses=_CHANGE,
)
async def mount(session_id: Held, request: Request, body: MountBody, principal: Key) -> Response:
    changed = await service(request).mount(session_id, body.kbId, body.kbName, who(principal))
    return json_response(changed.to_dict(units=False))


@router.post(
    "/api/v1/sessions/{session_id}/kb/save",
    summary="Save the session's knowledge units as its KB",
    response_model=SessionOut,
    responses=_CHANGE,
)
async def save_kb(session_id: Held, request: Request, body: SaveBody, principal: Key) -> Response:
    changed = await service(request).save_kb(session_id, body.kbName, who(principal))
    return json_response(changed.to_dict(units=False))


@router.post(
    "/api/v1/sessions/{session_id}/fork",
    summary="A new session with this one's KB and committed units",
    status_code=201,
    response_model=SessionOut,
    responses=errors_doc(*KEYED, "session_not_found"),
)
async def fork(session_id: str, request: Request, principal: Key) -> Response:
    forked = await service(request).fork(session_id, who(principal))
    return json_response(forked.to_dict(units=False), status=201)


@router.post(
    "/api/v1/sessions/{session_id}/sources",
    summary="Upload a source document: normalised into units, offered to every KB plugin",
    status_code=201,
    response_model=SourceOut,
    responses=_CHANGE,
)
async def add_source(
    session_id: Held, request: Request, body: SourceIn, principal: Key
) -> Response:
    added = await service(request).add_source(session_id, body.name, body.text, who(principal))
    return json_response(added.to_dict(), status=201)


@router.get(
    "/api/v1/sessions/{session_id}/sources",
    summary="The session's source documents",
    response_model=list[SourceOut],
    responses=errors_doc(*KEYED, "session_not_found"),
)
async def list_sources(session_id: str, request: Request, principal: Key) -> Response:
    found = service(request).sources(session_id, who(principal))
    return json_response([s.to_dict() for s in found])
