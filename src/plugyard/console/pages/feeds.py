"""Feeds: scheduled operations, run as their owner.

The create and edit dialogs read the plugin's ``default_feed_op`` and
``allowed_feed_ops`` (Shu "Feeds"): when only one operation may run in a feed, the
operation is not a choice — it is shown, locked, and posted as a hidden field — and the
scheduler refuses any other with ``invalid_feed_op`` whatever a post says. A feed can be
paused and resumed, run now, and shows its last run. Editing replaces the feed (a new
id with the new settings), since a feed's identity is its schedule's claim history.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from plugyard.console.results import pretty
from plugyard.console.web import (
    ConsoleRoute,
    PageRefused,
    Viewer,
    console_of,
    posted,
    redirect,
    render,
    viewer,
)
from plugyard.errors import PlugyardError
from plugyard.governance.policy import rights
from plugyard.registry.model import RegisteredPlugin
from plugyard.store.feeds import FeedRow

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)


def _own(request: Request, who: Viewer, feed_id: str) -> FeedRow:
    row = console_of(request).yard.feeds.get(feed_id)
    if not rights.may_see(who, row.owner):  # another's feed is not even named
        raise PlugyardError(f"no feed {feed_id!r}", code="feed_not_found")
    return row


def op_choice(plugin: RegisteredPlugin) -> dict[str, Any]:
    """What the dialog offers for the operation: locked to one, or a choice."""
    d = plugin.descriptor
    allowed = list(d.allowed_feed_ops) or [op.id for op in d.operations]
    default = d.default_feed_op if d.default_feed_op in allowed else allowed[0] if allowed else None
    return {"ops": allowed, "default": default, "locked": len(allowed) == 1}


def _schedulable(request: Request, who: Viewer) -> list[RegisteredPlugin]:
    yard = console_of(request).yard
    shows = yard.shows(who.subject, who.roles)
    return [p for p in yard.registry.list()
            if p.descriptor.operations and p.available and shows(p)]  # fmt: skip


def _rows(request: Request, who: Viewer) -> list[dict[str, Any]]:
    rows = console_of(request).yard.feeds.all(rights.owner_scope(who))
    return [{**r.summary(), "params": pretty(r.params), "last_run_at": r.last_run_at,
             "last_result": pretty(r.last_result) if r.last_result is not None else None}
            for r in rows]  # fmt: skip


@router.get("/console/feeds")
async def feeds(request: Request) -> Response:
    who = viewer(request)
    return render(request, "feeds.html", who=who, feeds=_rows(request, who),
                  done=request.query_params.get("done"), ran=None)  # fmt: skip


def _dialog(request: Request, who: Viewer, *, plugin_id: str | None, editing: FeedRow | None,
            error: dict[str, str] | None = None, status: int = 200) -> Response:  # fmt: skip
    plugins = _schedulable(request, who)
    chosen = next((p for p in plugins if p.id == plugin_id), None)
    return render(
        request, "feed_form.html", who=who, status=status, plugins=plugins, chosen=chosen,
        choice=op_choice(chosen) if chosen else None, editing=editing, error=error,
        params=pretty(editing.params) if editing else "{}",
    )  # fmt: skip


@router.get("/console/feeds/new")
async def feed_new(request: Request) -> Response:
    who = viewer(request)
    return _dialog(request, who, plugin_id=request.query_params.get("plugin"), editing=None)


@router.get("/console/feeds/{feed_id}/edit")
async def feed_edit(feed_id: str, request: Request) -> Response:
    who = viewer(request)
    row = _own(request, who, feed_id)
    return _dialog(request, who, plugin_id=row.plugin_id, editing=row)


def _schedule(form: FormData) -> tuple[float | None, str | None]:
    interval, cron = str(form.get("interval_s") or "").strip(), str(form.get("cron") or "").strip()
    if bool(interval) == bool(cron):
        raise PlugyardError("give an interval or a cron expression, not both",
                            code="invalid_schedule")  # fmt: skip
    if interval:
        try:
            return float(interval), None
        except ValueError:
            raise PlugyardError(f"not a number of seconds: {interval[:40]!r}",
                                code="invalid_schedule") from None  # fmt: skip
    return None, cron


def _params(form: FormData) -> dict[str, Any]:
    text = str(form.get("params") or "").strip() or "{}"
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise PageRefused(f"params: not valid JSON: {exc}", code="invalid_parameters") from None
    if not isinstance(value, dict):
        raise PageRefused("params: a JSON object", code="invalid_parameters")
    return value


@router.post("/console/feeds")
async def feed_save(request: Request) -> Response:
    """Create a feed, or replace one (``replaces``: the edited feed's id)."""
    who = viewer(request)
    form = await posted(request, who)
    plugin_id = str(form.get("plugin_id") or "")
    replaces = str(form.get("replaces") or "") or None
    editing = _own(request, who, replaces) if replaces else None
    scheduler = console_of(request).yard.feeds
    try:
        interval_s, cron = _schedule(form)
        operation = str(form.get("operation") or "") or None
        scheduler.add(owner=who.subject, plugin_id=plugin_id, operation=operation,
                      params=_params(form), interval_s=interval_s, cron=cron,
                      roles=who.roles)  # fmt: skip
    except PlugyardError as exc:
        error = {"code": exc.code, "message": exc.message}
        return _dialog(request, who, plugin_id=plugin_id, editing=editing, error=error,
                       status=exc.http_status)  # fmt: skip
    if editing is not None:
        scheduler.delete(editing.id)
    return redirect(f"/console/feeds?done={'saved' if editing else 'created'}")


@router.post("/console/feeds/{feed_id}/{verb}")
async def feed_act(feed_id: str, verb: str, request: Request) -> Response:
    who = viewer(request)
    await posted(request, who)
    row = _own(request, who, feed_id)
    yard = console_of(request).yard
    if verb in ("pause", "resume"):
        governance = yard.governance
        assert governance is not None  # yard.feeds above needs it
        governance.feeds.set_enabled(row.id, verb == "resume")
        return redirect(f"/console/feeds?done={verb}d")
    if verb == "delete":
        yard.feeds.delete(row.id)
        return redirect("/console/feeds?done=deleted")
    if verb == "run":
        tick = await yard.feeds.run(row.id)
        ran = {"id": tick.feed_id, "status": tick.status, "error": tick.error_code}
        return render(request, "feeds.html", who=who, feeds=_rows(request, who), done=None,
                      ran=ran)  # fmt: skip
    raise PageRefused(f"no feed action {verb!r}", code="invalid_request")
