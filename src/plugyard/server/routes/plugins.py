"""The registry over HTTP: list (as the OLO palette groups it), show, health, and the
registration of external plugins (HomeClaw ``POST /api/plugins/register``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from plugyard.errors import ERROR_CODES, NotFoundError, PlugyardError
from plugyard.governance.policy.rights import Right
from plugyard.manifest.model import Family
from plugyard.registry.listing import grouped, summary
from plugyard.registry.model import RegisteredPlugin
from plugyard.server.auth import caller, needs
from plugyard.server.bodies import (
    HealthReport,
    Palette,
    PluginDetail,
    Registration,
    Unregistration,
)
from plugyard.server.errors import json_response
from plugyard.server.inputs import CapabilityName, read_json
from plugyard.server.routes.documented import JSON_BODY, KEYED, errors_doc
from plugyard.store.keys import Principal
from plugyard.yard import Yard

router = APIRouter(tags=["plugins"])
_REGISTER_BODY = {
    "requestBody": {
        "required": True,
        "description": "A HomeClaw registration body (or any manifest dialect) of an http "
        "plugin, or a list of them: `plugin_id`/`id`, `name`, `description`, `type: http`, "
        "`config.base_url`, `health_check_url`, `capabilities[]` with `method` and `path`. "
        'The manifest reader judges it (docs/server.md, "Documents").',
        "content": {
            "application/json": {
                "schema": {
                    "anyOf": [
                        {"type": "object"},
                        {"type": "array", "items": {"type": "object"}, "minItems": 1},
                    ]
                }
            }
        },
    }
}


@router.get(
    "/api/v1/plugins",
    summary="Plugins grouped by capability, as the OLO palette does",
    response_model=Palette,
    responses=errors_doc(*KEYED),
)
async def list_plugins(
    request: Request,
    principal: Annotated[Principal, Depends(caller)],
    family: Annotated[Family | None, Query(description="Only this family.")] = None,
    capability: Annotated[
        list[CapabilityName], Query(description="Only these capability sections.")
    ] = [],  # noqa: B006 - FastAPI copies a default; a list documents a list with no null
) -> Response:
    yard: Yard = request.app.state.yard
    shows = yard.shows(principal.subject, principal.roles)  # one Sight, not one per plugin
    shown = [p for p in yard.registry.list(family) if shows(p)]
    return json_response(grouped(shown, capability or None))


@router.get(
    "/api/v1/plugins/{plugin_id}",
    summary="One plugin with its canonical descriptor",
    response_model=PluginDetail,
    responses=errors_doc(*KEYED, "plugin_not_found"),
)
async def show_plugin(
    plugin_id: str, request: Request, principal: Annotated[Principal, Depends(caller)]
) -> Response:
    yard: Yard = request.app.state.yard
    plugin = _visible(yard, plugin_id, principal)
    return json_response(summary(plugin) | {"descriptor": plugin.descriptor.to_data()})


@router.get(
    "/api/v1/plugins/{plugin_id}/health",
    summary="Availability and the health checker's view of one plugin",
    response_model=HealthReport,
    responses=errors_doc(*KEYED, "plugin_not_found"),
)
async def plugin_health(
    plugin_id: str, request: Request, principal: Annotated[Principal, Depends(caller)]
) -> Response:
    yard: Yard = request.app.state.yard
    plugin = _visible(yard, plugin_id, principal)
    runtime = plugin.descriptor.runtime
    checked = bool(getattr(runtime, "health_check_url", None))
    health = yard.health.health(plugin_id) if yard.health is not None else None
    return json_response(
        {
            "plugin_id": plugin.id,
            "available": plugin.available,
            "unavailable_reason": plugin.unavailable_reason,
            "checked": checked,
            "health": health.to_dict() if health is not None else None,
        }
    )


#: What the manifest reader can say of a document already parsed (not of a file's text).
_OF_TEXT = ("manifest_not_found", "manifest_no_python_manifest", "manifest_syntax",
            "manifest_encoding", "manifest_yaml_tag")  # fmt: skip
_MANIFEST = tuple(c for c in ERROR_CODES if c.startswith("manifest_") and c not in _OF_TEXT)
_REGISTER_ERRORS = errors_doc(
    *KEYED,
    *JSON_BODY,
    *_MANIFEST,
    "outbound_blocked",
    "duplicate_plugin",
    "unsupported_type",
    "store_error",
)


@router.post(
    "/api/v1/plugins/register",
    summary="Register (or re-register) external http plugins; admin only",
    response_model=Registration,
    responses=_REGISTER_ERRORS,
    openapi_extra=_REGISTER_BODY,
)
@router.post(
    "/api/plugins/register",
    summary="The HomeClaw path of the same registration",
    response_model=Registration,
    responses=_REGISTER_ERRORS,
    openapi_extra=_REGISTER_BODY,
)
async def register(
    request: Request, principal: Annotated[Principal, Depends(needs(Right.PLUGIN_REGISTER))]
) -> Response:
    body = await read_json(request)
    if not isinstance(body, dict | list):
        raise PlugyardError("the body must be a registration object", code="invalid_request")
    yard: Yard = request.app.state.yard
    events = await yard.register_external(body)
    registered = sorted({e.plugin_id for e in events} | _ids(body))
    return json_response(
        {
            # HomeClaw's answer (its register scripts read these two), then plugyard's own.
            "plugin_id": registered[0] if len(registered) == 1 else None,
            "registered": True,
            "plugin_ids": registered,
            "changes": [{"kind": e.kind, "plugin_id": e.plugin_id} for e in events],
        }
    )


@router.delete(
    "/api/v1/plugins/{plugin_id}",
    summary="Unregister an external plugin; admin only",
    response_model=Unregistration,
    responses=errors_doc(*KEYED, "plugin_not_found"),
)
async def unregister(
    plugin_id: str,
    request: Request,
    principal: Annotated[Principal, Depends(needs(Right.PLUGIN_REGISTER))],
) -> Response:
    yard: Yard = request.app.state.yard
    event = await run_in_threadpool(yard.unregister_external, plugin_id)
    if event is None:
        raise NotFoundError(f"no plugin {plugin_id!r}", code="plugin_not_found")
    return json_response({"plugin_id": plugin_id, "removed": True})


def _ids(body: Any) -> set[str]:
    items = body if isinstance(body, list) else [body]
    found = set()
    for item in items:
        if isinstance(item, dict):
            for key in ("plugin_id", "id"):
                if isinstance(item.get(key), str):
                    found.add(item[key])
                    break
    return found


def _visible(yard: Yard, plugin_id: str, principal: Principal) -> RegisteredPlugin:
    """The plugin, or ``plugin_not_found`` — also when the caller may call none of it."""
    plugin = yard.registry.require(plugin_id)
    if not yard.visible(plugin, yard.rights(principal.subject, principal.roles)):
        raise PlugyardError(f"no plugin {plugin_id!r}", code="plugin_not_found")
    return plugin
