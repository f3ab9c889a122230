"""Pipelines over HTTP: store, validate and run them, read their traces. Each route is
one call of the yard's :class:`~plugyard.pipelines.service.PipelineService`; a document
that does not validate answers ``pipeline_invalid`` with every fault and its pointer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from plugyard.governance.policy.rights import Right
from plugyard.server.auth import caller, needs
from plugyard.server.errors import json_response
from plugyard.server.faults import InvalidRequest, fault
from plugyard.server.inputs import RunBody, read_json
from plugyard.server.routes.documented import JSON_BODY, KEYED, errors_doc
from plugyard.store.keys import Principal
from plugyard.yard import Yard

router = APIRouter(tags=["pipelines"])
_DOCUMENT = {
    "requestBody": {
        "required": True,
        "description": "A pipeline document (plugyard's format or an OLO engine config), "
        'judged by the pipeline validator (docs/server.md, "Documents").',
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}


def _yard(request: Request) -> Yard:
    yard: Yard = request.app.state.yard
    return yard


def _object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise InvalidRequest([fault("/body", "must be a JSON object")])
    return body


@router.post(
    "/api/v1/pipelines/validate",
    summary="Validate a pipeline document: every fault with its code and pointer",
    openapi_extra=_DOCUMENT,
    responses=errors_doc(*KEYED, *JSON_BODY),
)
async def validate_pipeline(
    request: Request, principal: Annotated[Principal, Depends(caller)]
) -> Response:
    document = _object(await read_json(request))
    # A large document's validation is CPU work that would hold every other request.
    report = await run_in_threadpool(_yard(request).pipelines.validate, document)
    return json_response(report.to_dict())


@router.get("/api/v1/pipelines", summary="Stored pipelines", responses=errors_doc(*KEYED))
async def list_pipelines(
    request: Request, principal: Annotated[Principal, Depends(caller)]
) -> Response:
    stored = _yard(request).pipelines.list()
    return json_response({"pipelines": [p.to_dict() for p in stored]})


@router.put(
    "/api/v1/pipelines/{name}",
    summary="Store (or replace) a valid pipeline document under a name",
    openapi_extra=_DOCUMENT,
    responses=errors_doc(*KEYED, *JSON_BODY, "pipeline_invalid"),
)
async def save_pipeline(
    name: str,
    request: Request,
    principal: Annotated[Principal, Depends(needs(Right.PIPELINE_SAVE))],
) -> Response:
    document = _object(await read_json(request))
    stored = _yard(request).pipelines.save(
        document, name=name, subject=principal.subject, roles=principal.roles
    )
    return json_response(stored.to_dict())


@router.get(
    "/api/v1/pipelines/{name}",
    summary="One stored pipeline",
    responses=errors_doc(*KEYED, "pipeline_not_found"),
)
async def get_pipeline(
    name: str, request: Request, principal: Annotated[Principal, Depends(caller)]
) -> Response:
    return json_response(_yard(request).pipelines.get(name).to_dict())


@router.delete(
    "/api/v1/pipelines/{name}",
    summary="Delete a stored pipeline",
    responses=errors_doc(*KEYED, "pipeline_not_found"),
)
async def delete_pipeline(
    name: str,
    request: Request,
    principal: Annotated[Principal, Depends(needs(Right.PIPELINE_DELETE))],
) -> Response:
    _yard(request).pipelines.delete(name, subject=principal.subject, roles=principal.roles)
    return json_response({"deleted": name})


@router.post(
    "/api/v1/pipelines/run",
    summary="Run a pipeline given inline or by name; the final context and the trace",
    responses=errors_doc(*KEYED, *JSON_BODY, "pipeline_invalid", "pipeline_not_found"),
)
async def run_pipeline(
    request: Request, body: RunBody, principal: Annotated[Principal, Depends(caller)]
) -> Response:
    service = _yard(request).pipelines
    stored = service.get(str(body.name)) if body.document is None else None
    source: Mapping[str, Any] = stored.document if stored is not None else body.document or {}
    run = await service.run(
        source,
        body.input,
        pipeline=body.pipeline,
        subject=principal.subject,
        roles=principal.roles,
        timeout_ms=body.timeout_ms,
        stored=stored,
    )
    return json_response(run.to_dict())


@router.get(
    "/api/v1/pipeline-runs/{run_id}",
    summary="The trace of a recorded run of the caller's (an admin's: any); its context is "
    "not kept",
    responses=errors_doc(*KEYED, "pipeline_run_not_found"),
)
async def get_run(
    run_id: str, request: Request, principal: Annotated[Principal, Depends(caller)]
) -> Response:
    run = _yard(request).pipelines.trace(run_id, subject=principal.subject, roles=principal.roles)
    return json_response(run.to_dict(context=False))
