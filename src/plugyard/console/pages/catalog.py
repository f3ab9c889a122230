"""The catalog (``/``): the OLO palette of what the viewer may call, filters, and search
backed by discovery, each match with why it matched."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from plugyard.console.catalog_view import CatalogQuery, catalog, group
from plugyard.console.web import ConsoleRoute, PageRefused, console_of, render, viewer
from plugyard.discovery.query import Filters
from plugyard.errors import PlugyardError
from plugyard.manifest.model import FAMILIES

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)
SEARCH_K = 20


def read_query(request: Request) -> CatalogQuery:
    try:
        # The filter form sends its "any" choices as empty values: they filter nothing.
        given = {k: v for k, v in request.query_params.items() if v.strip()}
        return CatalogQuery.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise PageRefused(f"{where}: {first['msg']}", code="invalid_request") from None


@router.get("/")
async def catalog_page(request: Request) -> Response:
    who = viewer(request)
    query = read_query(request)
    yard = console_of(request).yard
    can_see = yard.rights(who.subject, who.roles)
    sight = yard.sight(who.subject, who.roles)
    memo = console_of(request).catalog
    key = (who.subject, who.roles, sight.version if sight else None, query.filters)
    rights = memo.rights.of((who.subject, who.roles), sight)
    grouped = memo.grouped(key, lambda: group(memo.layout(yard.registry.list), rights, query))
    sections = catalog(grouped, query)
    matches: list[dict[str, Any]] | None = None
    search_error = None
    if query.q and query.q.strip():
        filters = Filters(family=query.family, can_see=can_see, include_unavailable=True)
        try:
            found = await run_in_threadpool(yard.search, query.q, SEARCH_K, filters)
            matches = [m.to_dict() for m in found]
        except PlugyardError as exc:
            search_error = {"code": exc.code, "message": exc.message}
    return render(
        request,
        "catalog.html",
        who=who,
        query=query,
        sections=sections,
        matches=matches,
        search_error=search_error,
        families=FAMILIES,
        runtimes=("python", "subprocess", "http", "mcp", "none"),
    )
