"""Liveness and readiness: ``/healthz`` answers while the process serves; ``/readyz``
only when the store answers at the installed schema revision."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from plugyard.errors import PlugyardError
from plugyard.server.bodies import Probe
from plugyard.server.errors import error_response, json_response
from plugyard.server.routes.documented import errors_doc
from plugyard.store import migrate
from plugyard.yard import Yard

router = APIRouter(tags=["probes"])


@router.get("/healthz", summary="Liveness", response_model=Probe, responses=errors_doc())
async def healthz() -> Response:
    return json_response({"status": "ok"})


@router.get(
    "/readyz",
    summary="Readiness: the store answers at the installed schema",
    response_model=Probe,
    responses=errors_doc("store_error"),
)
async def readyz(request: Request) -> Response:
    yard: Yard = request.app.state.yard
    try:
        revision = await run_in_threadpool(yard.store.revision)
    except PlugyardError as exc:
        return error_response("store_error", exc.message)
    if revision != migrate.head():
        return error_response("store_error", f"store at revision {revision}, not {migrate.head()}")
    return json_response({"status": "ready", "plugins": len(yard.registry), "revision": revision})
