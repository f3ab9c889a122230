"""MCP tool pins over HTTP, admin only (docs/mcp.md): every MCP tool's pinned and last
seen definition hash, and re-approving a tool whose definition changed."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from starlette.responses import Response

from plugyard.governance.policy.rights import Right
from plugyard.server.auth import needs
from plugyard.server.errors import json_response
from plugyard.server.routes.documented import KEYED, errors_doc
from plugyard.store.keys import Principal
from plugyard.yard import Yard

router = APIRouter(tags=["mcp"])


@router.get("/api/v1/mcp/pins", summary="MCP tool pins: pinned and seen hashes; admin only",
            responses=errors_doc(*KEYED))  # fmt: skip
async def pins(
    request: Request,
    _: Annotated[Principal, Depends(needs(Right.MCP_PIN_APPROVE))],
    plugin_id: Annotated[str | None, Query(description="Only this plugin's tools.")] = None,
) -> Response:
    yard: Yard = request.app.state.yard
    return json_response([p.to_dict() for p in yard.mcp_tool_pins(plugin_id)])


@router.post(
    "/api/v1/mcp/pins/{plugin_id}/{tool}/approve",
    summary="Trust the definition an MCP tool shows now (re-enables a changed tool)",
    responses=errors_doc(*KEYED, "operation_not_found"),
)
async def approve(
    plugin_id: str,
    tool: str,
    request: Request,
    who: Annotated[Principal, Depends(needs(Right.MCP_PIN_APPROVE))],
) -> Response:
    yard: Yard = request.app.state.yard
    return json_response(yard.approve_mcp_tool(plugin_id, tool, by=who.subject).to_dict())
