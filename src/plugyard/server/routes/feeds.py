"""Feeds over HTTP: schedules of operations, run through the executor as their owner
(docs/governance.md#feeds). A caller owns the feeds it adds (they run with its subject and
roles); it sees and deletes its own, an admin sees and deletes all and may run the due
ones (for deployments without ``plugyard feeds run-due`` on a timer)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from plugyard.errors import PlugyardError
from plugyard.feeds.scheduler import FeedScheduler
from plugyard.server.auth import admin, caller
from plugyard.server.errors import json_response
from plugyard.server.routes.documented import KEYED, errors_doc
from plugyard.store.keys import Principal

router = APIRouter(tags=["feeds"])


class FeedBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    plugin_id: str
    operation: str | None = Field(default=None, description="Default: `default_feed_op`.")
    params: dict[str, Any] = Field(default_factory=dict)
    interval_s: float | None = Field(default=None, gt=0)
    cron: str | None = Field(default=None, description="Five fields: `M H DOM MON DOW`.")


def _feeds(request: Request) -> FeedScheduler:
    feeds: FeedScheduler = request.app.state.yard.feeds
    return feeds


@router.post(
    "/api/v1/feeds",
    summary="Schedule an operation, run as the caller",
    status_code=201,
    responses=errors_doc(*KEYED, "invalid_feed_op", "invalid_schedule", "plugin_not_found"),
)
async def feed_add(
    request: Request, body: FeedBody, who: Annotated[Principal, Depends(caller)]
) -> Response:
    row = _feeds(request).add(
        owner=who.subject,
        plugin_id=body.plugin_id,
        operation=body.operation,
        params=body.params,
        interval_s=body.interval_s,
        cron=body.cron,
        roles=who.roles,
    )
    return json_response(row.summary(), status=201)


@router.get(
    "/api/v1/feeds", summary="The caller's feeds (an admin's: all)", responses=errors_doc(*KEYED)
)
async def feed_list(request: Request, who: Annotated[Principal, Depends(caller)]) -> Response:
    rows = _feeds(request).all(None if who.admin else who.subject)
    return json_response([r.summary() for r in rows])


@router.delete(
    "/api/v1/feeds/{feed_id}",
    summary="Delete a feed (its owner or an admin)",
    responses=errors_doc(*KEYED, "feed_not_found"),
)
async def feed_delete(
    feed_id: str, request: Request, who: Annotated[Principal, Depends(caller)]
) -> Response:
    feeds = _feeds(request)
    row = feeds.get(feed_id)
    if row.owner != who.subject and not who.admin:  # another's feed is not even named
        raise PlugyardError(f"no feed {feed_id!r}", code="feed_not_found")
    feeds.delete(feed_id)
    return json_response({"deleted": feed_id})


@router.post(
    "/api/v1/feeds/run-due",
    summary="Run every feed whose time has come; admin only",
    responses=errors_doc(*KEYED),
)
async def feed_run_due(request: Request, _: Annotated[Principal, Depends(admin)]) -> Response:
    ticks = await _feeds(request).run_due()
    return json_response(
        [
            {
                "id": t.feed_id,
                "status": t.status,
                "error": t.error_code,
                "next_cursor": t.next_cursor,
            }
            for t in ticks
        ]
    )
