"""Files the browser loads, all served by plugyard itself: the console's own scripts,
styles and default icons, and the API docs pages (``/docs``, ``/redoc``) with Swagger UI
and Redoc from the ``fastapi-offline`` package on PyPI — nothing from a CDN, no copy of
another project's minified code in this repository.

Only named files are served (no path from a request reaches the file system unchecked),
each with a content type and ``nosniff``.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from plugyard.console.security import DOCS_CSP, page_headers
from plugyard.console.web import TEMPLATES

router = APIRouter(include_in_schema=False)
STATIC = Path(__file__).with_name("static")
_TYPES = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}
#: The vendor files the docs pages use, by the name they are served under.
VENDOR = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js")
_CACHE = "public, max-age=3600"


@cache
def own_files() -> dict[str, Path]:
    """The console's static files by their path under ``static/``."""
    return {
        p.relative_to(STATIC).as_posix(): p
        for p in STATIC.rglob("*")
        if p.is_file() and p.suffix in _TYPES
    }


@cache
def vendor_file(name: str) -> bytes | None:
    if name not in VENDOR:
        return None
    try:
        return (resources.files("fastapi_offline") / "static" / name).read_bytes()
    except (ModuleNotFoundError, FileNotFoundError):
        return None


def _file(body: bytes, suffix: str) -> Response:
    headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": _CACHE}
    return Response(body, media_type=_TYPES[suffix], headers=headers)


def _missing() -> Response:
    return Response(b"not found", status_code=404, media_type="text/plain",
                    headers={"X-Content-Type-Options": "nosniff"})  # fmt: skip


@router.get("/console/static/vendor/{name}")
async def vendor(name: str) -> Response:
    body = vendor_file(name)
    return _missing() if body is None else _file(body, Path(name).suffix)


@router.get("/console/static/{path:path}")
async def static(path: str) -> Response:
    found = own_files().get(path)
    return _missing() if found is None else _file(found.read_bytes(), found.suffix)


def _docs_page(name: str, request: Request) -> Response:
    html = (TEMPLATES / name).read_text(encoding="utf-8")
    html = html.replace("{{ openapi_url }}", request.app.openapi_url or "/openapi.json")
    return Response(html, media_type="text/html; charset=utf-8", headers=page_headers(DOCS_CSP))


@router.get("/docs")
async def swagger(request: Request) -> Response:
    return _docs_page("swagger.html", request)


@router.get("/redoc")
async def redoc(request: Request) -> Response:
    return _docs_page("redoc.html", request)
