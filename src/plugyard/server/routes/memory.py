"""What discovery learns from use, over HTTP: feedback on a search, and an admin's view
of a plugin's remembered requests (docs/discovery.md, "Memory").

Feedback is the caller's own: its subject comes from the API key, and it may only name
a plugin it may call. Remembered requests are what callers asked, so only an admin
reads them.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from plugyard.discovery.learning import LearningError
from plugyard.errors import NotFoundError
from plugyard.governance.policy.rights import Right
from plugyard.server import members
from plugyard.server.auth import caller, needs
from plugyard.server.bodies import FeedbackReply, MemoryPurge, MemoryReply
from plugyard.server.errors import json_response
from plugyard.server.faults import InvalidRequest, fault
from plugyard.server.inputs import FeedbackBody, read_json, schema_of
from plugyard.server.routes.documented import JSON_BODY, KEYED, errors_doc
from plugyard.store.keys import Principal
from plugyard.yard import Yard

router = APIRouter(tags=["discovery"])
SearchId = Annotated[str, Path(min_length=1, max_length=100)]


_MEMBERS: dict[str, members.Check] = {
    "plugin": members.STRING,
    "operation": members.STRING,
    "helpful": members.BOOLEAN,
}


@router.post(
    "/api/v1/search/{search_id}/feedback",
    summary="Say whether a plugin answered a search's request",
    response_model=FeedbackReply,
    responses=errors_doc(
        *KEYED, *JSON_BODY, "unknown_search", "learning_refused", "plugin_not_found",
        "operation_not_found",
    ),
    openapi_extra={"requestBody": {
        "required": True,
        "content": {"application/json": {"schema": schema_of(FeedbackBody)}},
    }},
)  # fmt: skip
async def feedback(
    search_id: SearchId,
    request: Request,
    principal: Annotated[Principal, Depends(caller)],
) -> Response:
    yard: Yard = request.app.state.yard
    body = members.read(await read_json(request, empty={}), _MEMBERS)
    # Then the search: an unknown one is 404 before the members' presence is checked.
    if not yard.discovery.learning.knows(search_id, principal.subject):
        raise LearningError("unknown or expired search id")
    plugin = body.get("plugin")
    if not plugin or len(plugin) > 200 or len(body.get("operation") or "") > 200:
        raise InvalidRequest([fault("/body/plugin", "1 to 200 characters")])
    outcome = await run_in_threadpool(
        lambda: yard.feedback(
            search_id, plugin, body.get("operation"), helpful=body.get("helpful", True),
            subject=principal.subject, roles=principal.roles,
        )
    )  # fmt: skip
    return json_response(outcome.to_dict())


@router.get(
    "/api/v1/plugins/{plugin_id}/memory",
    summary="The requests discovery learned for a plugin; admin only",
    response_model=MemoryReply,
    responses=errors_doc(*KEYED, "plugin_not_found"),
)
async def remembered(
    plugin_id: str,
    request: Request,
    principal: Annotated[Principal, Depends(needs(Right.MEMORY_MANAGE))],
    operation: Annotated[str | None, Query(max_length=200)] = None,
) -> Response:
    yard: Yard = request.app.state.yard
    _known(yard, plugin_id)
    rows = await run_in_threadpool(yard.discovery.learning.remembered, plugin_id, operation)
    items = [
        {
            "id": r.id,
            "operation": r.operation,
            "subject": r.subject,
            "query": r.query,
            "created_at": r.created_at,
        }
        for r in rows
    ]
    return json_response({"plugin_id": plugin_id, "remembered": items})


@router.delete(
    "/api/v1/plugins/{plugin_id}/memory",
    summary="Forget what discovery learned for a plugin (or one operation); admin only",
    response_model=MemoryPurge,
    responses=errors_doc(*KEYED, "plugin_not_found"),
)
async def purge(
    plugin_id: str,
    request: Request,
    principal: Annotated[Principal, Depends(needs(Right.MEMORY_MANAGE))],
    operation: Annotated[str | None, Query(max_length=200)] = None,
) -> Response:
    yard: Yard = request.app.state.yard
    _known(yard, plugin_id)
    purged = await run_in_threadpool(yard.discovery.purge_memory, plugin_id, operation)
    return json_response({"plugin_id": plugin_id, "purged": purged})


def _known(yard: Yard, plugin_id: str) -> None:
    # A removed plugin's memory went with it: there is nothing to show or purge.
    if yard.registry.find(plugin_id) is None:
        raise NotFoundError(f"no plugin {plugin_id!r}")
