"""Governance over HTTP: the policy, approvals, the Shu Actions API, the audit log and
secrets — thin routes over ``yard.admin`` (docs/governance.md), so the CLI and the API
do exactly the same thing.

Who may do what: reading or replacing the policy, the audit log and system secrets need
an admin key. Anyone may list the actions open to them and perform them; anyone may
list the approvals they asked for, and those the policy lets them decide; deciding one
is checked against the policy (``approve`` grants) at that moment. A user's own secrets
are theirs to set, list and delete; values never come back.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Header, Path, Query, Request
from pydantic import ConfigDict, Field
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from plugyard.errors import PlugyardError
from plugyard.governance.admin import Administration, context_for
from plugyard.governance.policy import rights
from plugyard.governance.policy.document import PolicyDocument
from plugyard.governance.policy.rights import Right
from plugyard.server.auth import caller, needs
from plugyard.server.errors import json_response
from plugyard.server.inputs import DIGITS, ActionBody, Strict, schema_of
from plugyard.server.routes.documented import (
    IDEMPOTENCY_KEY_MAX,
    IDEMPOTENCY_KEY_TEXT,
    JSON_BODY,
    KEYED,
    errors_doc,
)
from plugyard.store.keys import Principal
from plugyard.types import Caller

router = APIRouter(tags=["governance"])


def _admin(request: Request) -> Administration:
    administration: Administration = request.app.state.yard.admin
    return administration


def _subject(principal: Principal) -> Caller:
    return Caller(principal.subject, principal.roles)


# ---------------------------------------------------------------------------- policy


@router.get("/api/v1/policy", summary="The policy in force; admin only",
            responses=errors_doc(*KEYED))  # fmt: skip
async def policy_show(
    request: Request, _: Annotated[Principal, Depends(needs(Right.POLICY_MANAGE))]
) -> Response:
    book = _admin(request).book
    document = book.document
    return json_response(
        {
            "state": book.state,
            "version": book.version,
            "problem": book.problem,
            "document": document.model_dump(mode="json") if document else None,
        }
    )


_POLICY = schema_of(PolicyDocument)


@router.put(
    "/api/v1/policy",
    summary="Replace the policy (YAML or JSON body); admin only",
    responses=errors_doc(*KEYED, "policy_invalid"),
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "The policy document (docs/governance.md), read strictly: a "
            "document this schema cannot judge whole (a cycle of roles, a name with a "
            'space) is refused with `policy_invalid` (docs/server.md, "Documents").',
            "content": {
                "application/yaml": {"schema": _POLICY},
                "application/json": {"schema": _POLICY},
            },
        }
    },
)
async def policy_load(
    request: Request, who: Annotated[Principal, Depends(needs(Right.POLICY_MANAGE))]
) -> Response:
    text = await request.body()
    version = _admin(request).load_policy(text, by=who.subject, source="api")
    return json_response({"version": version})


class CheckBody(Strict):
    model_config = ConfigDict(extra="forbid")
    subject: str
    roles: list[str] = Field(default_factory=list)
    plugin_id: str
    operation: str
    verb: Literal["call", "approve"] = "call"


@router.post("/api/v1/policy/check", summary="What the policy decides, and why; admin only",
             responses=errors_doc(*KEYED, *JSON_BODY))  # fmt: skip
async def policy_check(
    request: Request, body: CheckBody, _: Annotated[Principal, Depends(needs(Right.POLICY_MANAGE))]
) -> Response:
    who = Caller(body.subject, tuple(body.roles))
    return json_response(_admin(request).check(who, body.plugin_id, body.operation, body.verb))


# ------------------------------------------------------------------------- approvals


@router.get("/api/v1/approvals", summary="Approvals the caller asked for or may decide",
            responses=errors_doc(*KEYED))  # fmt: skip
async def approvals_list(
    request: Request,
    who: Annotated[Principal, Depends(caller)],
    state: Annotated[
        Literal["pending", "approved", "rejected", "used", "all"], Query()
    ] = "pending",
) -> Response:
    administration = _admin(request)
    rows = administration.approvals(None if state == "all" else state, limit=500)
    if not rights.holds(who, Right.OTHERS_RECORDS):
        me = _subject(who)
        book = administration.book
        rows = [
            r
            for r in rows
            if r["subject"] == who.subject
            or book.may_approve(me, r["plugin_id"], r["operation"]).outcome == "allow"
        ]
    return json_response(rows)


class DecideBody(Strict):
    model_config = ConfigDict(extra="forbid")
    note: str | None = Field(default=None, max_length=2000)


@router.post(
    "/api/v1/approvals/{action_id}/{decision}",
    summary="Approve or reject a pending request",
    responses=errors_doc(
        *KEYED, *JSON_BODY, "approval_not_found", "approval_decided", "receipt_expired"
    ),
)
async def decide(
    action_id: str,
    decision: Literal["approve", "reject"],
    request: Request,
    who: Annotated[Principal, Depends(caller)],
    body: DecideBody | None = None,
) -> Response:
    note = body.note if body else None
    approve = decision == "approve"
    return json_response(_admin(request).decide(action_id, _subject(who), approve, note))


# --------------------------------------------------------------------------- actions


@router.get("/api/v1/actions", summary="The actions the caller may perform",
            responses=errors_doc(*KEYED))  # fmt: skip
async def actions_list(request: Request, who: Annotated[Principal, Depends(caller)]) -> Response:
    return json_response(_admin(request).list_actions(_subject(who)))


@router.post(
    "/api/v1/actions/{plugin_id}/{action}",
    summary="Perform an action: ok, error, or pending_approval with a receipt",
    responses=errors_doc(*KEYED, *JSON_BODY),
)
async def perform(
    plugin_id: str,
    action: str,
    request: Request,
    who: Annotated[Principal, Depends(caller)],
    body: ActionBody | None = None,
    idempotency_key: Annotated[
        str | None,
        Header(
            alias="Idempotency-Key",
            description="Retries with the same key answer the first call's stored result.",
            min_length=1,
            max_length=IDEMPOTENCY_KEY_MAX,
            pattern=IDEMPOTENCY_KEY_TEXT,
        ),
    ] = None,
) -> Response:
    asked = body or ActionBody()
    context = context_for(who.subject, who.roles, idempotency_key=idempotency_key)
    answer = await _admin(request).perform_action(
        plugin_id, action, asked.args, context, receipt=asked.approval_receipt
    )
    return json_response(answer)


# ----------------------------------------------------------------------------- audit


@router.get("/api/v1/audit", summary="The newest audit events; admin only",
            responses=errors_doc(*KEYED))  # fmt: skip
async def audit_tail(
    request: Request,
    _: Annotated[Principal, Depends(needs(Right.AUDIT_READ))],
    count: Annotated[int, Query(ge=1, le=1000), DIGITS] = 20,
) -> Response:
    return json_response([r.to_dict() for r in _admin(request).tail(count)])


@router.get("/api/v1/audit/verify", summary="Whether the audit chain holds; admin only",
            responses=errors_doc(*KEYED))  # fmt: skip
async def audit_verify(
    request: Request, _: Annotated[Principal, Depends(needs(Right.AUDIT_READ))]
) -> Response:
    check = await run_in_threadpool(_admin(request).verify)
    return json_response(check.to_dict())


# --------------------------------------------------------------------------- secrets


class SecretBody(Strict):
    model_config = ConfigDict(extra="forbid")
    value: str = Field(min_length=1, max_length=65536)


def _owner(who: Principal, scope: str) -> str | None:
    if scope == "system":
        rights.require(who, Right.SECRET_SYSTEM)
        return None
    return who.subject


_SCOPE = Annotated[Literal["user", "system"], Query(description="`user`: the caller's own.")]
# The names the secret store takes (governance/secrets/vault.py), so a bad one is a 400 here.
_NAME = Annotated[str, Path(pattern=r"^[A-Za-z0-9_.:-]{1,200}$")]


@router.put("/api/v1/secrets/{name}", summary="Store a secret (the value never comes back)",
            responses=errors_doc(*KEYED, *JSON_BODY, "secrets_key_error"))  # fmt: skip
async def secret_set(
    name: _NAME,
    request: Request,
    body: SecretBody,
    who: Annotated[Principal, Depends(caller)],
    scope: _SCOPE = "user",
) -> Response:
    owner = _owner(who, scope)
    info = _admin(request).set_secret(name, body.value, scope=scope, owner=owner, by=who.subject)
    return json_response(info.to_dict())


@router.get("/api/v1/secrets", summary="Names, scopes and dates of secrets: never values",
            responses=errors_doc(*KEYED))  # fmt: skip
async def secret_list(
    request: Request, who: Annotated[Principal, Depends(caller)], scope: _SCOPE = "user"
) -> Response:
    owner = _owner(who, scope)
    found = _admin(request).secrets(scope=scope, owner=owner)
    return json_response([s.to_dict() for s in found])


@router.delete("/api/v1/secrets/{name}", summary="Delete a secret",
               responses=errors_doc(*KEYED, "secret_not_found"))  # fmt: skip
async def secret_delete(
    name: _NAME,
    request: Request,
    who: Annotated[Principal, Depends(caller)],
    scope: _SCOPE = "user",
) -> Response:
    owner = _owner(who, scope)
    if not _admin(request).delete_secret(name, scope=scope, owner=owner, by=who.subject):
        raise PlugyardError(f"no {scope} secret {name!r}", code="secret_not_found")
    return json_response({"deleted": name})
