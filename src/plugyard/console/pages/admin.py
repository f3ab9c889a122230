"""Admin pages: the audit log (filters, verify the chain), API keys (a new key is shown
once; revoke), external plugin registration, and MCP tool pins awaiting re-approval.

Each is the console's face of what the CLI and REST API already do — ``yard.admin``,
``yard.keys``, ``yard.register_external``, ``yard.approve_mcp_tool`` — and only for
viewers holding the page's right (governance/policy/rights.py), the one its REST twin asks for.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from plugyard.console.results import pretty
from plugyard.console.web import (
    ConsoleRoute,
    PageRefused,
    console_of,
    holding,
    posted,
    redirect,
    render,
)
from plugyard.errors import PlugyardError
from plugyard.governance.policy.rights import Right
from plugyard.manifest.safeload import parse

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)
AUDIT_FILTERS = ("kind", "subject", "plugin_id", "status", "error_code")
_SUBJECT_TEXT = 200


# ---------------------------------------------------------------------------- audit


@router.get("/console/admin/audit")
async def audit(request: Request) -> Response:
    who = holding(request, Right.AUDIT_READ)
    wanted = {k: v.strip() for k in AUDIT_FILTERS if (v := request.query_params.get(k, ""))}
    try:
        count = max(1, min(int(request.query_params.get("count", "200")), 1000))
    except ValueError:
        raise PageRefused("count: a whole number", code="invalid_request") from None
    records = [r.to_dict() for r in console_of(request).yard.admin.tail(count)]
    shown = [
        r for r in reversed(records) if all(str(r.get(k) or "") == v for k, v in wanted.items())
    ]
    for r in shown:
        r["detail_text"] = pretty(r["detail"], 4000) if r.get("detail") is not None else ""
    return render(request, "audit.html", who=who, records=shown, filters=wanted, count=count,
                  fields=AUDIT_FILTERS, verification=None)  # fmt: skip


@router.post("/console/admin/audit/verify")
async def audit_verify(request: Request) -> Response:
    who = holding(request, Right.AUDIT_READ)
    await posted(request, who)
    check = await run_in_threadpool(console_of(request).yard.admin.verify)
    records = [r.to_dict() for r in reversed(console_of(request).yard.admin.tail(50))]
    for r in records:
        r["detail_text"] = pretty(r["detail"], 4000) if r.get("detail") is not None else ""
    return render(request, "audit.html", who=who, records=records, filters={}, count=50,
                  fields=AUDIT_FILTERS, verification=check.to_dict())  # fmt: skip


# ----------------------------------------------------------------------------- keys


@router.get("/console/admin/keys")
async def keys(request: Request) -> Response:
    who = holding(request, Right.KEY_MANAGE)
    return render(request, "keys.html", who=who, keys=console_of(request).yard.keys.list(),
                  created=None, revoked=request.query_params.get("revoked"))  # fmt: skip


@router.post("/console/admin/keys")
async def key_create(request: Request) -> Response:
    who = holding(request, Right.KEY_MANAGE)
    form = await posted(request, who)
    subject = str(form.get("subject") or "").strip()
    roles = tuple(r.strip() for r in str(form.get("roles") or "").split(",") if r.strip())
    label = str(form.get("label") or "").strip() or None
    if not subject or len(subject) > _SUBJECT_TEXT:
        raise PageRefused("a subject is 1 to 200 characters", code="invalid_request")
    yard = console_of(request).yard
    info, key = yard.keys.create(subject, roles or None, label=label)
    # The key is in this one answer and nowhere else: only its hash is stored.
    return render(request, "keys.html", who=who, keys=yard.keys.list(), created=(info, key),
                  revoked=None)  # fmt: skip


@router.post("/console/admin/keys/{key_id}/revoke")
async def key_revoke(key_id: str, request: Request) -> Response:
    who = holding(request, Right.KEY_MANAGE)
    await posted(request, who)
    if not console_of(request).yard.keys.revoke(key_id):
        raise PlugyardError(f"no unrevoked key {key_id!r}", code="invalid_request")
    request.app.state.auth.forget()  # the REST API's key cache: revoked here, refused now
    return redirect(f"/console/admin/keys?revoked={key_id}")


# ---------------------------------------------------------------- external plugins


def _externals(request: Request) -> list[Any]:
    return [p for p in console_of(request).yard.registry.list() if p.source == "external"]


@router.get("/console/admin/plugins")
async def externals(request: Request) -> Response:
    who = holding(request, Right.PLUGIN_REGISTER)
    return render(request, "external.html", who=who, plugins=_externals(request), body="",
                  outcome=None, error=None)  # fmt: skip


@router.post("/console/admin/plugins")
async def register(request: Request) -> Response:
    who = holding(request, Right.PLUGIN_REGISTER)
    form = await posted(request, who)
    text = str(form.get("body") or "")
    try:
        # The manifest reader's own safe parser: hostile YAML is refused with its code.
        documents = parse(text).documents if text.strip() else ()
        data = documents[0] if len(documents) == 1 else list(documents) or None
        if not isinstance(data, dict | list):
            raise PlugyardError("give a registration body: a JSON or YAML object",
                                code="invalid_request")  # fmt: skip
        events = await console_of(request).yard.register_external(data)
    except PlugyardError as exc:
        error = {"code": exc.code, "message": exc.message}
        plugins = _externals(request)
        return render(request, "external.html", who=who, status=exc.http_status,
                      plugins=plugins, body=text, outcome=None, error=error)  # fmt: skip
    outcome = [{"kind": e.kind, "plugin_id": e.plugin_id} for e in events]
    return render(request, "external.html", who=who, plugins=_externals(request), body="",
                  outcome=outcome, error=None)  # fmt: skip


@router.post("/console/admin/plugins/{plugin_id}/remove")
async def unregister(plugin_id: str, request: Request) -> Response:
    who = holding(request, Right.PLUGIN_REGISTER)
    await posted(request, who)
    await run_in_threadpool(console_of(request).yard.unregister_external, plugin_id)
    return redirect("/console/admin/plugins")


# ------------------------------------------------------------------------- MCP pins


@router.get("/console/admin/mcp")
async def pins(request: Request) -> Response:
    who = holding(request, Right.MCP_PIN_APPROVE)
    every = [p.to_dict() for p in console_of(request).yard.mcp_tool_pins()]
    return render(request, "pins.html", who=who, changed=[p for p in every if p["changed"]],
                  pins=every, approved=request.query_params.get("approved"))  # fmt: skip


@router.post("/console/admin/mcp/{plugin_id}/{tool}/approve")
async def pin_approve(plugin_id: str, tool: str, request: Request) -> Response:
    who = holding(request, Right.MCP_PIN_APPROVE)
    await posted(request, who)
    console_of(request).yard.approve_mcp_tool(plugin_id, tool, by=who.subject)
    return redirect("/console/admin/mcp?approved=1")
