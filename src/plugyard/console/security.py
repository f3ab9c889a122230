"""The console's browser-facing rules: response headers, cookies and CSRF.

Every console page is sent with a strict Content-Security-Policy: scripts and styles
only from plugyard itself and never inline, so markup that slips into a page (a plugin's
description, a result) cannot run. The API docs pages need inline *styles* (Swagger UI
and Redoc set them from script) but still no inline script.
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.requests import Request

SESSION_COOKIE = "__Host-plugyard-session"
#: Before login there is no session to bind a CSRF token to: the login form's token is
#: a double-submit of this cookie (SameSite=strict: another site can neither send it
#: nor read it).
LOGIN_COOKIE = "__Host-plugyard-login"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"

_BASE = (
    "default-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
)
PAGE_CSP = "; ".join((*_BASE, "script-src 'self'", "style-src 'self'"))
DOCS_CSP = "; ".join(
    (*_BASE, "script-src 'self'", "style-src 'self' 'unsafe-inline'", "worker-src 'self' blob:")
)
#: A plugin's own icon is its author's SVG: never a document that may run anything.
ICON_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"


def page_headers(csp: str = PAGE_CSP) -> dict[str, str]:
    return {
        "Content-Security-Policy": csp,
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
        "Cross-Origin-Opener-Policy": "same-origin",
    }


def cookie_options(max_age: int | None) -> dict[str, object]:
    """Secure, HttpOnly, SameSite=strict, whole site. Browsers keep Secure cookies on
    https and on loopback (``http://127.0.0.1``), which is where the console serves."""
    return {
        "max_age": max_age,
        "path": "/",
        "secure": True,
        "httponly": True,
        "samesite": "strict",
    }


def plain_http_elsewhere(request: Request) -> bool:
    """Whether the browser will drop the session cookie: plain HTTP on a host other
    than loopback (the login page says so rather than failing silently)."""
    host = (request.url.hostname or "").lower()
    loopback = host in {"localhost", "::1", "[::1]"} or host.startswith("127.")
    forwarded = request.headers.get("x-forwarded-proto", "")
    return request.url.scheme != "https" and forwarded != "https" and not loopback


def submitted_token(request: Request, form: Mapping[str, object] | None) -> str | None:
    """The CSRF token of a post: the form field, or the header scripts send."""
    if form is not None:
        value = form.get(CSRF_FIELD)
        if isinstance(value, str):
            return value
    return request.headers.get(CSRF_HEADER)
