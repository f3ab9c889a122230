"""Plugin packages over HTTP, admin only: upload a zip (raw body or multipart), list the
installed packages, remove one. Trust comes from the admin's query (``?trust=true``),
never from the zip; the server's body cap (``ServerSettings.max_body_bytes``) bounds
the upload before the package's own caps do."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.responses import Response

from plugyard.errors import PlugyardError
from plugyard.governance.policy.rights import Right
from plugyard.server.auth import needs
from plugyard.server.errors import json_response
from plugyard.server.faults import InvalidRequest, fault, pointer
from plugyard.server.routes.documented import KEYED, errors_doc
from plugyard.store.keys import Principal
from plugyard.yard import Yard

router = APIRouter(tags=["packages"])
_RAW_TYPES = ("application/zip", "application/x-zip-compressed", "application/octet-stream")
_ZIP = {"schema": {"type": "string", "format": "binary", "minLength": 1}}
_UPLOAD = {
    "requestBody": {
        "required": True,
        "description": "The package zip: the raw body, or a multipart form whose one field "
        "is the file `package`. The package reader judges it (docs/server.md, "
        '"Documents").',
        "content": {
            **dict.fromkeys(_RAW_TYPES, _ZIP),
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {"package": {"type": "string", "format": "binary"}},
                    "required": ["package"],
                    "additionalProperties": False,
                }
            },
        },
    }
}


def _yard(request: Request) -> Yard:
    yard: Yard = request.app.state.yard
    return yard


@router.post(
    "/api/v1/packages",
    summary="Install (or upgrade) a plugin package zip; admin only",
    openapi_extra=_UPLOAD,
    responses=errors_doc(
        *KEYED,
        "unsupported_media_type",
        "package_invalid",
        "package_refused",
        "duplicate_plugin",
        "capability_unavailable",
        "store_error",
    ),
)
async def install_package(
    request: Request,
    principal: Annotated[Principal, Depends(needs(Right.PACKAGE_MANAGE))],
    trust: Annotated[bool, Query(description="Run it in-process (default: untrusted).")] = False,
    allow_findings: Annotated[
        bool, Query(description="Install an untrusted package despite import-guard findings.")
    ] = False,
    name: Annotated[
        str | None, Query(description="The folder name (default: the first plugin id).")
    ] = None,
) -> Response:
    archive = await _archive(request)
    yard = _yard(request)
    done = await run_in_threadpool(
        yard.packages.install,
        archive,
        trust="trusted" if trust else "untrusted",
        allow_findings=allow_findings,
        name=name,
    )
    body = done.package.to_dict() | {
        "registered": [e.plugin_id for e in done.events],
        "unavailable": [{"plugin_id": i, "reason": r} for i, r in done.unavailable],
    }
    return json_response(body, status=201)


@router.get(
    "/api/v1/packages",
    summary="The installed packages with their trust, plugins and findings; admin only",
    responses=errors_doc(*KEYED, "capability_unavailable"),
)
async def list_packages(
    request: Request, principal: Annotated[Principal, Depends(needs(Right.PACKAGE_MANAGE))]
) -> Response:
    packages = await run_in_threadpool(_yard(request).packages.installed)
    return json_response({"packages": [p.to_dict() for p in packages]})


@router.delete(
    "/api/v1/packages/{name}",
    summary="Remove a package and unregister its plugins; admin only",
    responses=errors_doc(*KEYED, "package_not_found", "capability_unavailable", "store_error"),
)
async def remove_package(
    name: str,
    request: Request,
    principal: Annotated[Principal, Depends(needs(Right.PACKAGE_MANAGE))],
) -> Response:
    package, events = await run_in_threadpool(_yard(request).packages.remove, name)
    return json_response({"name": package.name, "removed": [e.plugin_id for e in events]})


async def _archive(request: Request) -> bytes:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind in _RAW_TYPES:
        body = await request.body()
        if not body:
            raise InvalidRequest([fault("/body", "the zip is empty")])
        return body
    if kind == "multipart/form-data":
        form = await request.form(max_files=1, max_fields=1)
        try:
            upload = form.get("package")
            others = [name for name in form if name != "package"]
            if others:
                where = pointer("body", others[0])
                raise InvalidRequest([fault(where, "the form has one field, 'package'")])
            if not isinstance(upload, UploadFile):
                raise InvalidRequest([fault("/body/package", "a file field 'package'")])
            return await upload.read()
        finally:
            await form.close()
    raise PlugyardError(
        "send the zip as application/zip or multipart/form-data", code="unsupported_media_type"
    )
