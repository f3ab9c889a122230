"""One plugin's page: its descriptor, operations with their schemas, health history
(external plugins), icons, version, and its manifest exported in any dialect.

Icons come from the manifest (OLO ``icons``: ``smallSvg``, ``largeSvg``, ``bannerSvg``
and their ``default…`` fallbacks), read only from inside the plugin's own folder; a
plugin without one shows plugyard's default icons. An icon is served with a policy that
lets it run nothing, and pages show it through ``<img>``, where SVG scripts never run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from plugyard.console.assets import STATIC
from plugyard.console.pages.run import visible_plugin
from plugyard.console.results import pretty
from plugyard.console.security import ICON_CSP
from plugyard.console.web import ConsoleRoute, PageRefused, console_of, render, viewer
from plugyard.errors import PlugyardError
from plugyard.manifest.exporters.dialect import DIALECT_NAMES, to_dialect
from plugyard.manifest.exporters.functions import FORMATS, export_tools
from plugyard.manifest.exporters.text import DEFAULT_SYNTAX
from plugyard.manifest.exporters.text import render as render_text
from plugyard.registry.model import RegisteredPlugin

router = APIRouter(route_class=ConsoleRoute, include_in_schema=False)
Size = Literal["small", "large", "banner"]
_ICON_KEYS: dict[str, tuple[str, str]] = {
    "small": ("smallSvg", "defaultSmallSvg"),
    "large": ("largeSvg", "defaultLargeSvg"),
    "banner": ("bannerSvg", "defaultBannerSvg"),
}
_DEFAULT_ICON = {"small": "default-icon-64.svg", "large": "default-icon-256.svg",
                 "banner": "default-banner.svg"}  # fmt: skip
_ICON_TYPES = {".svg": "image/svg+xml", ".png": "image/png"}
MAX_ICON_BYTES = 256 * 1024
EXPORTS = (*DIALECT_NAMES, *FORMATS)


def icon_file(plugin: RegisteredPlugin, size: str) -> Path:
    """The plugin's own icon file of ``size`` when it has one inside its folder."""
    keys = _ICON_KEYS.get(size, _ICON_KEYS["small"])
    fallback = STATIC / "icons" / _DEFAULT_ICON.get(size, _DEFAULT_ICON["small"])
    if plugin.location is None:
        return fallback
    folder = Path(plugin.location).resolve()
    for key in keys:
        name = plugin.descriptor.icons.get(key)
        if not name:
            continue
        candidate = (folder / name).resolve()
        inside = candidate.is_relative_to(folder) and candidate.suffix in _ICON_TYPES
        if inside and candidate.is_file() and candidate.stat().st_size <= MAX_ICON_BYTES:
            return candidate
    return fallback


@router.get("/console/plugins/{plugin_id}/icon")
async def icon(plugin_id: str, request: Request) -> Response:
    who = viewer(request)
    plugin = visible_plugin(request, who, plugin_id)
    found = icon_file(plugin, request.query_params.get("size", "small"))
    headers = {"Content-Security-Policy": ICON_CSP, "X-Content-Type-Options": "nosniff",
               "Cache-Control": "private, max-age=300"}  # fmt: skip
    return Response(found.read_bytes(), media_type=_ICON_TYPES[found.suffix], headers=headers)


def exported(plugin: RegisteredPlugin, target: str) -> tuple[str, str]:
    """The plugin written as ``target`` (a dialect or a tool format), and its syntax."""
    if target not in EXPORTS:
        raise PageRefused(f"no export format {target!r}; one of {', '.join(EXPORTS)}",
                          code="invalid_request")  # fmt: skip
    if target in FORMATS:
        return render_text(export_tools([plugin.descriptor], target), "json", as_list=True), "json"
    syntax = DEFAULT_SYNTAX.get(target, "yaml")
    return render_text([to_dialect(plugin.descriptor, target)], syntax), syntax


@router.get("/console/plugins/{plugin_id}/export")
async def export(plugin_id: str, request: Request) -> Response:
    who = viewer(request)
    plugin = visible_plugin(request, who, plugin_id)
    text, syntax = exported(plugin, request.query_params.get("format", "canonical"))
    suffix = {"json": "json", "yaml": "yaml", "python": "py"}[syntax]
    headers = {"Content-Disposition": f'attachment; filename="{plugin.id}.{suffix}"',
               "X-Content-Type-Options": "nosniff"}  # fmt: skip
    return Response(text, media_type="text/plain; charset=utf-8", headers=headers)


def health_of(request: Request, plugin: RegisteredPlugin) -> dict[str, Any] | None:
    yard = console_of(request).yard
    runtime = plugin.descriptor.runtime
    if not getattr(runtime, "health_check_url", None):
        return None
    checker = yard.health
    found = checker.health(plugin.id) if checker is not None else None
    if found is None:
        return {"state": "not checked yet", "history": []}
    return {**found.to_dict(), "history": list(reversed(found.history))}


@router.get("/console/plugins/{plugin_id}")
async def plugin_page(plugin_id: str, request: Request) -> Response:
    who = viewer(request)
    plugin = visible_plugin(request, who, plugin_id)
    target = request.query_params.get("format")
    export_text = None
    export_error = None
    if target:
        try:
            export_text = exported(plugin, target)[0]
        except PlugyardError as exc:
            export_error = {"code": exc.code, "message": exc.message}
    d = plugin.descriptor
    operations = [
        {"op": op, "parameters": pretty(op.parameters),
         "output": pretty(op.output_schema) if op.output_schema is not None else None}
        for op in d.operations
    ]  # fmt: skip
    return render(
        request, "plugin.html", who=who, plugin=plugin, d=d, operations=operations,
        descriptor=pretty(d.to_data()), health=health_of(request, plugin), exports=EXPORTS,
        export_format=target, export_text=export_text, export_error=export_error,
    )  # fmt: skip
