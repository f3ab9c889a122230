"""Connected accounts over HTTP (Shu's /settings/connected-accounts): a caller connects,
lists and removes its own accounts at the identity providers the operator configured.
Tokens go in and never come back: a listing shows provider, target and scopes only."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request
from pydantic import ConfigDict, Field
from starlette.responses import Response

from plugyard.errors import PlugyardError
from plugyard.governance.identities.op_auth import Identities, connect
from plugyard.server.auth import caller
from plugyard.server.errors import json_response
from plugyard.server.inputs import Strict
from plugyard.server.routes.documented import JSON_BODY, KEYED, errors_doc
from plugyard.store.keys import Principal

router = APIRouter(tags=["accounts"])
_PROVIDER = Annotated[str, Path(pattern=r"^[A-Za-z0-9_.-]{1,100}$")]


class AccountBody(Strict):
    """A refresh token the caller holds, or an authorisation code to exchange."""

    model_config = ConfigDict(extra="forbid")
    refresh_token: str | None = Field(default=None, min_length=1, max_length=8192)
    code: str | None = Field(default=None, min_length=1, max_length=8192)
    redirect_uri: str | None = Field(default=None, max_length=2048)
    scopes: list[str] = Field(default_factory=list, max_length=100)
    target: str | None = Field(default=None, max_length=320)


def _identities(request: Request) -> Identities:
    governance = request.app.state.yard.governance
    if governance is None or governance.identities is None:
        raise PlugyardError("this service is not governed", code="capability_unavailable")
    identities: Identities = governance.identities
    return identities


@router.get("/api/v1/accounts", summary="The caller's connected accounts (never tokens)",
            responses=errors_doc(*KEYED))  # fmt: skip
async def accounts_list(request: Request, who: Annotated[Principal, Depends(caller)]) -> Response:
    found = _identities(request).accounts.list(who.subject)
    return json_response([a.to_dict() for a in found])


@router.put(
    "/api/v1/accounts/{provider}",
    summary="Connect the caller's account at an identity provider",
    responses=errors_doc(*KEYED, *JSON_BODY, "auth_provider_unknown", "auth_provider_error"),
)
async def account_connect(
    provider: _PROVIDER,
    request: Request,
    body: AccountBody,
    who: Annotated[Principal, Depends(caller)],
) -> Response:
    account = await connect(
        _identities(request), who.subject, provider, scopes=body.scopes, target=body.target,
        refresh_token=body.refresh_token, code=body.code, redirect_uri=body.redirect_uri,
    )  # fmt: skip
    return json_response(account.to_dict())


@router.delete("/api/v1/accounts/{provider}", summary="Disconnect one of the caller's accounts",
               responses=errors_doc(*KEYED, "account_not_found"))  # fmt: skip
async def account_delete(
    provider: _PROVIDER, request: Request, who: Annotated[Principal, Depends(caller)]
) -> Response:
    if not _identities(request).accounts.disconnect(who.subject, provider):
        raise PlugyardError(f"no {provider} account is connected", code="account_not_found")
    return json_response({"deleted": provider})
