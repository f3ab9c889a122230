"""What every console page shares: who is looking, rendering, form posts, and errors.

A page handler asks :func:`viewer` (or :func:`holding`, for a management page: the
viewer must hold the page's right, as the REST twin's key must) who is signed in, reads a
post with :func:`posted` (which checks its CSRF token) and answers :func:`render`. A
refusal anywhere — a plugyard error, a forged post, a page for admins only — becomes an
HTML page carrying the error's stable code (``data-code``) and HTTP status; a missing or
expired session becomes a redirect to the login page. The REST API's JSON error
handlers never see console requests.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi.routing import APIRoute
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from plugyard.console.catalog_memo import CatalogMemo
from plugyard.console.security import (
    CSRF_FIELD,
    SESSION_COOKIE,
    page_headers,
    submitted_token,
)
from plugyard.console.sessions import Session, SessionStore, same
from plugyard.errors import ERROR_CODES, PlugyardError
from plugyard.governance.policy import rights
from plugyard.governance.policy.rights import Right
from plugyard.store.keys import Principal
from plugyard.yard import Yard

LOG = logging.getLogger("plugyard.console")
TEMPLATES = Path(__file__).with_name("templates")
#: Form posts may carry a generated form's every field; the cap is the parser's.
MAX_FIELDS = 5000


class NeedLogin(Exception):
    """No live session: the page sends the browser to the login page."""


class PageRefused(PlugyardError):
    """A console refusal with a stable code (``csrf_invalid``, ``permission_denied``…)."""


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who a page is for: the principal of the session's key, never of a request body."""

    principal: Principal
    session: Session
    session_id: str

    @property
    def subject(self) -> str:
        return self.principal.subject

    @property
    def roles(self) -> tuple[str, ...]:
        return self.principal.roles

    @property
    def admin(self) -> bool:
        return self.principal.admin

    def holds(self, right: str) -> bool:
        """Whether the viewer holds a management right (pages offer only what it may do)."""
        return rights.holds(self, Right(right))


@dataclass(frozen=True)
class Console:
    """What the console pages share, kept on ``app.state.console``."""

    yard: Yard
    sessions: SessionStore
    templates: Environment
    catalog: CatalogMemo


def templates() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(("html",), default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["csrf_field"] = CSRF_FIELD
    env.filters["when"] = when
    return env


def when(epoch: Any) -> str:
    """An epoch time (or a datetime) as UTC text, to the second."""
    if isinstance(epoch, datetime):
        return epoch.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    if isinstance(epoch, int | float):
        return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return "" if epoch is None else str(epoch)


def console_of(request: Request) -> Console:
    found: Console = request.app.state.console
    return found


def viewer(request: Request) -> Viewer:
    """The signed-in viewer, or :class:`NeedLogin`."""
    console = console_of(request)
    session_id = request.cookies.get(SESSION_COOKIE)
    session = console.sessions.get(session_id)
    if session is None or session_id is None:
        raise NeedLogin()
    principal = console.yard.keys.principal_of(session.key_id)
    if principal is None:  # the key was revoked since: the session ends with it
        console.sessions.close(session_id)
        raise NeedLogin()
    return Viewer(principal, session, session_id)


def holding(request: Request, right: Right) -> Viewer:
    """The signed-in viewer if it holds ``right`` (``permission_denied`` otherwise)."""
    found = viewer(request)
    rights.require(found, right)
    return found


async def posted(request: Request, who: Viewer) -> FormData:
    """The form of a post whose CSRF token is this session's, else ``csrf_invalid``."""
    form = await request.form(max_fields=MAX_FIELDS)
    if not same(submitted_token(request, form), who.session.csrf):
        raise PageRefused("the form's CSRF token is missing or not this session's",
                          code="csrf_invalid")  # fmt: skip
    return form


def render(
    request: Request,
    name: str,
    *,
    who: Viewer | None = None,
    status: int = 200,
    headers: Mapping[str, str] | None = None,
    **context: Any,
) -> HTMLResponse:
    page = (
        console_of(request)
        .templates.get_template(name)
        .render(
            who=who,
            csrf=who.session.csrf if who is not None else None,
            path=request.url.path,
            **context,
        )
    )
    return HTMLResponse(page, status_code=status, headers={**page_headers(), **(headers or {})})


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303, headers=page_headers())


def error_page(request: Request, code: str, message: str) -> HTMLResponse:
    status = ERROR_CODES[code].http_status if code in ERROR_CODES else 500
    who = None
    with contextlib.suppress(NeedLogin, PlugyardError):  # an error page needs no session
        who = viewer(request)
    return render(request, "error.html", who=who, status=status, code=code, message=message)


Handler = Callable[[Request], Coroutine[Any, Any, Response]]


class ConsoleRoute(APIRoute):
    """A console route: its refusals are pages, its missing sessions redirects."""

    def get_route_handler(self) -> Handler:
        inner = super().get_route_handler()

        async def handler(request: Request) -> Response:
            try:
                return await inner(request)
            except NeedLogin:
                target = request.url.path
                if request.url.query:
                    target += "?" + request.url.query
                back = quote(target) if request.method == "GET" else "/"
                return redirect(f"/console/login?next={back}")
            except PlugyardError as exc:
                return error_page(request, exc.code, exc.message)
            except Exception as exc:
                LOG.exception("console page %s failed", request.url.path)
                return error_page(request, "internal_error", type(exc).__name__)

        return handler
