"""Feeds over HTTP: schedules of operations, run through the executor as their owner
(docs/governance.md#feeds). A caller owns the feeds it adds (they run with its subject and
roles); it sees and deletes its own, an admin sees and deletes all and may run the due
ones (for deployments without ``plugyard feeds run-due`` on a timer)."""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import ConfigDict, Field, field_validator, model_validator
from pydantic.json_schema import WithJsonSchema
from pydantic_core import PydanticCustomError
from starlette.responses import Response

from plugyard.errors import PlugyardError
from plugyard.feeds.schedule import MIN_INTERVAL_S
from plugyard.feeds.scheduler import FeedScheduler
from plugyard.governance.policy import rights
from plugyard.governance.policy.rights import Right
from plugyard.server.auth import caller, needs
from plugyard.server.cron import CRON
from plugyard.server.errors import json_response
from plugyard.server.inputs import Strict, optional
from plugyard.server.routes.documented import JSON_BODY, KEYED, errors_doc
from plugyard.store.keys import Principal

router = APIRouter(tags=["feeds"])


_CRON = re.compile(CRON)


def _bad_schedule(message: str) -> PydanticCustomError:
    # The error type names the plugyard code the refusal carries (server/faults.py).
    return PydanticCustomError("invalid_schedule", message)


class FeedBody(Strict):
    """One of ``interval_s`` and ``cron``; a schedule fault is ``invalid_schedule``."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"oneOf": [{"required": ["interval_s"]}, {"required": ["cron"]}]},
    )
    plugin_id: str
    operation: str | None = Field(default=None, description="Default: `default_feed_op`.")
    params: dict[str, Any] = Field(default_factory=dict)
    interval_s: Annotated[float, WithJsonSchema({"type": "number", "minimum": MIN_INTERVAL_S})] = (
        optional("Seconds between runs.")
    )
    cron: Annotated[str, WithJsonSchema({"type": "string", "pattern": CRON})] = optional(
        "Five fields: `M H DOM MON DOW` (numbers, `*`, ranges, lists, steps)."
    )

    @field_validator("interval_s")
    @classmethod
    def _interval(cls, value: float) -> float:
        if not value >= MIN_INTERVAL_S:
            raise _bad_schedule(f"an interval is at least {MIN_INTERVAL_S:g} s")
        return value

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str) -> str:
        if not _CRON.search(value):
            raise _bad_schedule(f"not a cron expression of the documented form: {value!r}")
        return value

    @model_validator(mode="after")
    def _one_schedule(self) -> FeedBody:
        # Either is None only when left out (server/inputs.py, ``optional``).
        if (self.interval_s is None) == (self.cron is None):
            raise _bad_schedule("give an interval or a cron expression, not both")
        return self


def _feeds(request: Request) -> FeedScheduler:
    feeds: FeedScheduler = request.app.state.yard.feeds
    return feeds


@router.post(
    "/api/v1/feeds",
    summary="Schedule an operation, run as the caller",
    status_code=201,
    responses=errors_doc(
        *KEYED, *JSON_BODY, "invalid_feed_op", "invalid_schedule", "plugin_not_found"
    ),
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
    rows = _feeds(request).all(rights.owner_scope(who))
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
    if not rights.may_see(who, row.owner):  # another's feed is not even named
        raise PlugyardError(f"no feed {feed_id!r}", code="feed_not_found")
    feeds.delete(feed_id)
    return json_response({"deleted": feed_id})


@router.post(
    "/api/v1/feeds/run-due",
    summary="Run every feed whose time has come; admin only",
    responses=errors_doc(*KEYED),
)
async def feed_run_due(
    request: Request, _: Annotated[Principal, Depends(needs(Right.FEED_RUN_DUE))]
) -> Response:
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
