"""The secrets page: each plugin's secret requirements from ``op_auth[op].secrets``, with
their allowed scope (``user``, ``system``, ``system_or_user``) and whether a value is
set — presence only; a value goes in and never comes back out.

Anyone sets and deletes their own (``user``) secrets; ``system`` secrets need an admin.
Both go through ``yard.admin``, which audits every change.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

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
from plugyard.governance.policy import rights
from plugyard.governance.policy.rights import Right

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)
MAX_VALUE = 65536


def requirements(request: Request, who: Viewer) -> list[dict[str, Any]]:
    """One row per (plugin, operation, secret) the viewer may see."""
    yard = console_of(request).yard
    shows = yard.shows(who.subject, who.roles)
    administration = yard.admin
    mine = {s.name for s in administration.secrets(scope="user", owner=who.subject)}
    system = {s.name for s in administration.secrets(scope="system")}
    rows = []
    for plugin in yard.registry.list():
        if not plugin.descriptor.op_auth or not shows(plugin):
            continue
        for op, auth in sorted(plugin.descriptor.op_auth.items()):
            for name, need in sorted(auth.secrets.items()):
                scope = need.allowed_scope
                rows.append({
                    "plugin_id": plugin.id, "plugin": plugin.descriptor.name, "operation": op,
                    "name": name, "scope": scope,
                    "user_set": name in mine, "system_set": name in system,
                    "user_ok": scope in ("user", "system_or_user"),
                    "system_ok": scope in ("system", "system_or_user")
                    and who.holds(Right.SECRET_SYSTEM),
                })  # fmt: skip
    return rows


@router.get("/console/secrets")
async def secrets_page(request: Request) -> Response:
    who = viewer(request)
    return render(request, "secrets.html", who=who, rows=requirements(request, who),
                  done=request.query_params.get("done"))  # fmt: skip


def _scope(value: object, who: Viewer) -> Literal["user", "system"]:
    if value == "system":
        rights.require(who, Right.SECRET_SYSTEM)
        return "system"
    if value == "user":
        return "user"
    raise PageRefused("scope: user or system", code="invalid_request")


@router.post("/console/secrets")
async def secret_set(request: Request) -> Response:
    who = viewer(request)
    form = await posted(request, who)
    scope = _scope(form.get("scope"), who)
    name, value = form.get("name"), form.get("value")
    if not isinstance(name, str) or not isinstance(value, str) or not value:
        raise PageRefused("give the secret's name and a value", code="invalid_request")
    if len(value) > MAX_VALUE:
        raise PageRefused(f"a secret is at most {MAX_VALUE} characters", code="invalid_request")
    owner = who.subject if scope == "user" else None
    console_of(request).yard.admin.set_secret(name, value, scope=scope, owner=owner,
                                              by=who.subject)  # fmt: skip
    return redirect("/console/secrets?done=set")


@router.post("/console/secrets/delete")
async def secret_delete(request: Request) -> Response:
    who = viewer(request)
    form = await posted(request, who)
    scope = _scope(form.get("scope"), who)
    name = form.get("name")
    if not isinstance(name, str) or not name:
        raise PageRefused("give the secret's name", code="invalid_request")
    owner = who.subject if scope == "user" else None
    gone = console_of(request).yard.admin.delete_secret(name, scope=scope, owner=owner,
                                                        by=who.subject)  # fmt: skip
    if not gone:
        raise PageRefused(f"no {scope} secret {name!r}", code="secret_not_found")
    return redirect("/console/secrets?done=deleted")
