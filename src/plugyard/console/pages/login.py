"""Log in with an API key, log out.

The key is checked as the REST API checks it and then forgotten: the session keeps only
the key's public id (console/sessions.py). A new session id is issued at every login,
so an id planted before login is worth nothing after it.
"""

from __future__ import annotations

import secrets

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from plugyard.console.security import (
    LOGIN_COOKIE,
    SESSION_COOKIE,
    cookie_options,
    plain_http_elsewhere,
    submitted_token,
)
from plugyard.console.sessions import TTL_S, same
from plugyard.console.web import ConsoleRoute, console_of, posted, redirect, render, viewer

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)
_LOGIN_TTL_S = 3600


def _next(value: object) -> str:
    """Where to go after login: a path on this site only (never ``//elsewhere``)."""
    here = isinstance(value, str) and value.startswith("/") and not value.startswith("//")
    if here and isinstance(value, str) and "\\" not in value and len(value) < 2000:
        return value
    return "/"


def _login_page(request: Request, status: int = 200, error: dict[str, str] | None = None,
                next_url: str = "/") -> Response:  # fmt: skip
    token = secrets.token_urlsafe(32)
    page = render(request, "login.html", status=status, login_token=token, error=error,
                  next=next_url, insecure=plain_http_elsewhere(request))  # fmt: skip
    page.set_cookie(LOGIN_COOKIE, token, **cookie_options(_LOGIN_TTL_S))  # type: ignore[arg-type]
    return page


@router.get("/console/login")
async def login_form(request: Request) -> Response:
    return _login_page(request, next_url=_next(request.query_params.get("next")))


@router.post("/console/login")
async def login(request: Request) -> Response:
    form = await request.form(max_fields=10)
    next_url = _next(form.get("next"))
    if not same(submitted_token(request, form), request.cookies.get(LOGIN_COOKIE)):
        error = {"code": "csrf_invalid", "message": "the login form expired: try again"}
        return _login_page(request, 403, error, next_url)
    key = form.get("key")
    console = console_of(request)
    given = key.strip() if isinstance(key, str) else ""
    principal = console.yard.keys.verify(given) if given else None
    if principal is None or principal.key_id is None:
        error = {
            "code": "unauthenticated",
            "message": "the API key is not valid (unknown or revoked)",
        }
        return _login_page(request, 401, error, next_url)
    console.sessions.close(request.cookies.get(SESSION_COOKIE))
    session_id, _ = console.sessions.open(principal.key_id, principal.subject)
    answer = redirect(next_url)
    answer.set_cookie(SESSION_COOKIE, session_id, **cookie_options(TTL_S))  # type: ignore[arg-type]
    answer.delete_cookie(LOGIN_COOKIE, path="/", secure=True, httponly=True, samesite="strict")
    return answer


@router.post("/console/logout")
async def logout(request: Request) -> Response:
    who = viewer(request)
    await posted(request, who)
    console_of(request).sessions.close(who.session_id)
    answer = redirect("/console/login")
    answer.delete_cookie(SESSION_COOKIE, path="/", secure=True, httponly=True, samesite="strict")
    return answer
