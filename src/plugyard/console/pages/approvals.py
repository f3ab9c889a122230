"""The approvals page: what the viewer asked for (and, once approved, "run it now"),
what the viewer may decide (approve or reject, with a note), and who decided what, when.

Deciding goes through ``yard.admin.decide`` — the policy's ``approve`` grants and its
self-approval rule apply, and the decision is audited — exactly as the REST API. Running
an approved request uses the receipt this session kept when the call went pending; the
approval desk spends it, so the request runs once.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from plugyard.console.results import pretty, view
from plugyard.console.web import ConsoleRoute, Viewer, console_of, posted, redirect, render, viewer
from plugyard.errors import PlugyardError
from plugyard.execution.executor import CallRequest, new_request_id
from plugyard.governance.policy.rights import Right
from plugyard.runtimes.base import CallContext
from plugyard.types import Caller

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)
_RECEIPT_SPENT = {"receipt_used", "receipt_expired", "invalid_receipt", "approval_rejected"}


def _rows(request: Request, who: Viewer) -> dict[str, list[dict[str, Any]]]:
    administration = console_of(request).yard.admin
    me = Caller(who.subject, who.roles)
    mine, to_decide, decided = [], [], []
    for row in administration.approvals(None, limit=500):
        row = {**row, "preview_text": pretty(row["preview"]),
               "runnable": row["action_id"] in who.session.pending}  # fmt: skip
        may = who.holds(Right.OTHERS_RECORDS) or (
            administration.book.may_approve(me, row["plugin_id"], row["operation"]).outcome
            == "allow"
        )
        if row["subject"] == who.subject:
            mine.append(row)
        if row["state"] == "pending" and may and row["subject"] != who.subject:
            to_decide.append(row)
        elif row["state"] != "pending" and (may or row["subject"] == who.subject):
            decided.append(row)
    return {"mine": mine, "to_decide": to_decide, "decided": decided[:100]}


def _page(request: Request, who: Viewer, status: int = 200, **extra: Any) -> Response:
    rows: dict[str, Any] = {**_rows(request, who), **extra}
    return render(request, "approvals.html", who=who, status=status, **rows)


@router.get("/console/approvals")
async def approvals(request: Request) -> Response:
    who = viewer(request)
    return _page(request, who, done=request.query_params.get("done"))


@router.post("/console/approvals/{action_id}/decide")
async def decide(action_id: str, request: Request) -> Response:
    who = viewer(request)
    form = await posted(request, who)
    decision = form.get("decision")
    if decision not in ("approve", "reject"):
        raise PlugyardError("decide approve or reject", code="invalid_request")
    note = form.get("note")
    text = note.strip()[:2000] if isinstance(note, str) and note.strip() else None
    console_of(request).yard.admin.decide(
        action_id, Caller(who.subject, who.roles), decision == "approve", text
    )
    return redirect(
        f"/console/approvals?done={'approved' if decision == 'approve' else 'rejected'}"
    )


@router.post("/console/approvals/{action_id}/run")
async def run_approved(action_id: str, request: Request) -> Response:
    """Run an approved request with the receipt this session kept for it."""
    who = viewer(request)
    await posted(request, who)
    held = who.session.pending.get(action_id)
    if not isinstance(held, dict):
        raise PlugyardError("this session holds no receipt for that request",
                            code="invalid_receipt")  # fmt: skip
    context = CallContext(request_id=new_request_id(), subject=who.subject, roles=who.roles)
    call = CallRequest(str(held["plugin_id"]), held.get("operation"), dict(held["params"]),
                       context, approval_receipt=str(held["receipt"]))  # fmt: skip
    console = console_of(request)
    result = await console.yard.executor.call(call)
    code = result.error.code if result.error else None
    if result.ok or code in _RECEIPT_SPENT:
        console.sessions.forget(who.session_id, who.session, action_id)
        who = viewer(request)  # the session changed: show it as it is now
    status = 200 if result.ok else (result.error and _status(code)) or 500
    return _page(request, who, status, ran=view(result), ran_id=action_id)


def _status(code: str | None) -> int:
    from plugyard.errors import ERROR_CODES

    spec = ERROR_CODES.get(code or "")
    return spec.http_status if spec else 500
