"""Discovery over HTTP: ``search`` (ranked plugins with scores and why) and
``tools_for`` (function-calling definitions of just those). Both run in a worker thread:
the first one builds the index and loads the embedding model."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from plugyard.discovery.query import Filters
from plugyard.manifest.model import Family
from plugyard.server.auth import caller
from plugyard.server.bodies import SearchReply, ToolsReply
from plugyard.server.errors import json_response
from plugyard.server.inputs import DIGITS, CapabilityName, SearchText
from plugyard.server.routes.documented import KEYED, errors_doc
from plugyard.store.keys import Principal
from plugyard.yard import Yard

router = APIRouter(tags=["discovery"])
_ERRORS = errors_doc(*KEYED, "invalid_query", "export_unsupported")


def _filters(
    yard: Yard,
    principal: Principal,
    family: list[Family],
    capability: str | None,
    unavailable: bool,
    floor: bool,
) -> Filters:
    # The caller never finds what the policy would not let it call.
    return Filters(
        family=tuple(family) if family else None,
        capability=capability,
        include_unavailable=unavailable,
        can_see=yard.rights(principal.subject, principal.roles),
        relevant_only=floor,
    )


_FLOOR = Query(
    description="Only matches above the relevance floor (docs/discovery.md): an empty "
    "answer then means nothing registered looks relevant. `false`: the nearest k."
)


@router.get(
    "/api/v1/search",
    summary="The plugins that best match a query",
    response_model=SearchReply,
    responses=_ERRORS,
)
async def search(
    request: Request,
    principal: Annotated[Principal, Depends(caller)],
    q: Annotated[SearchText, Query(description="What the user asks.")],
    k: Annotated[int, Query(ge=1, le=100), DIGITS] = 5,
    family: Annotated[list[Family], Query()] = [],  # noqa: B006 - as plugins.py
    capability: Annotated[CapabilityName | None, Query()] = None,
    include_unavailable: Annotated[bool, Query()] = False,
    floor: Annotated[bool, _FLOOR] = True,
) -> Response:
    yard: Yard = request.app.state.yard
    filters = _filters(yard, principal, family, capability, include_unavailable, floor)
    found = await run_in_threadpool(lambda: yard.search(q, k, filters, subject=principal.subject))
    reply = {"query": q, "search_id": found.search_id, "matches": [m.to_dict() for m in found]}
    return json_response(reply)


@router.get(
    "/api/v1/tools",
    summary="Function-calling definitions of the operations that match a query",
    response_model=ToolsReply,
    responses=_ERRORS,
)
async def tools_for(
    request: Request,
    principal: Annotated[Principal, Depends(caller)],
    q: Annotated[SearchText, Query()],
    k: Annotated[int, Query(ge=1, le=100), DIGITS] = 5,
    format: Annotated[Literal["openai", "anthropic", "mcp"], Query()] = "openai",
    family: Annotated[list[Family], Query()] = [],  # noqa: B006 - as plugins.py
    capability: Annotated[CapabilityName | None, Query()] = None,
    include_unavailable: Annotated[bool, Query()] = False,
    floor: Annotated[bool, _FLOOR] = True,
    strict: Annotated[
        bool, Query(description="OpenAI strict-mode definitions where possible (docs/tools.md).")
    ] = False,
) -> Response:
    yard: Yard = request.app.state.yard
    filters = _filters(yard, principal, family, capability, include_unavailable, floor)
    tools = await run_in_threadpool(lambda: yard.tools_for(q, k, format, filters, strict=strict))
    return json_response({"query": q, "format": format, "tools": tools})
