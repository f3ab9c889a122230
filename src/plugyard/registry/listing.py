"""Registered plugins as the surfaces list them: one summary per plugin, grouped the way
the OLO palette groups them. The CLI and the REST API print the same shape."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from plugyard.errors import PlugyardError
from plugyard.manifest.model import (
    ALL_CAPABILITIES,
    PIPELINE_CAPABILITIES,
    NoRuntime,
    Placement,
    PluginDescriptor,
)
from plugyard.manifest.nearest import nearest
from plugyard.manifest.palette import UNDEFINED, Placed, palette
from plugyard.registry.model import RegisteredPlugin


def summary(plugin: RegisteredPlugin) -> dict[str, Any]:
    """What a listing shows of one plugin (the descriptor itself is shown on request)."""
    stored = plugin.stored_data
    if stored is not None:
        try:
            return _stored_summary(plugin, stored)
        except (KeyError, TypeError, AttributeError):
            pass  # not what to_data() writes: the descriptor says what is wrong
    d = plugin.descriptor
    return {
        "id": d.id,
        "name": d.name,
        "family": d.family,
        "version": d.version,
        "description": d.description,
        "runtime": d.runtime.kind,
        "source": plugin.source,
        "dialect": plugin.dialect,
        "available": plugin.available,
        "unavailable_reason": plugin.unavailable_reason,
        "placement": {
            "capabilities": list(d.placement.capabilities),
            "role": d.placement.role,
            "only_inside_group": d.placement.only_inside_group,
        },
        "operations": [op.id for op in d.operations],
    } | _origins(plugin.id, d.origins)


def grouped(
    plugins: Iterable[RegisteredPlugin],
    capabilities: Sequence[str] | None = None,
    summarise: Callable[[RegisteredPlugin], dict[str, Any]] = summary,
    *,
    only: Sequence[str] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """``{"sections": [{capability, plugins}], "control": [{role, plugins}]}``, each plugin
    as ``summarise`` shows it.

    ``capabilities`` are a pipeline's (a plugin naming none of them is *Undefined* there);
    ``only`` filters a listing to some sections of the whole palette (a CACHING plugin
    stays under CACHING, it does not fall to *Undefined*) and drops the control roles.
    An ``only`` name that no plugin and no configured capability has is
    ``invalid_request``, with the nearest name."""
    entries = {p.id: p for p in plugins}
    placements: dict[Any, Placement] = {}
    placed = [_placed(p, placements) for p in entries.values()]
    if only is not None:
        check_capabilities(only, placed)
    view = palette(placed, capabilities)
    return {
        "sections": [
            {"capability": name, "plugins": [summarise(entries[p.id]) for p in members]}
            for name, members in view.sections
            if only is None or name in only
        ],
        "control": [
            {"role": role, "plugins": [summarise(entries[p.id]) for p in members]}
            for role, members in view.control
            if only is None
        ],
    }


def check_capabilities(names: Sequence[str], descriptors: Sequence[Placed]) -> None:
    known = {*PIPELINE_CAPABILITIES, UNDEFINED}
    known.update(c for d in descriptors for c in d.placement.capabilities if c != ALL_CAPABILITIES)
    for name in names:
        if name not in known:
            guess = nearest(name, known, cutoff=0.6)
            hint = f"did you mean {guess!r}?" if guess else f"known: {', '.join(sorted(known))}"
            raise PlugyardError(f"no capability {name!r} ({hint})", code="invalid_request")


# A plugin read from the store and not used yet is listed from its stored data (written
# by ``PluginDescriptor.to_data()``, which leaves defaults out), without validating the
# whole descriptor: on 10,000 plugins that was a fifth of a listing's time.
_DEFAULTS = PluginDescriptor.model_fields
_NO_RUNTIME = NoRuntime().kind
_PLACEMENT = Placement()


class _Placed(NamedTuple):
    id: str
    placement: Placement


def _placed(plugin: RegisteredPlugin, placements: dict[Any, Placement]) -> Placed:
    """What grouping reads of ``plugin``; one validated placement per distinct one."""
    stored = plugin.stored_data
    if stored is None:
        return plugin.descriptor
    data = stored.get("placement")
    if data is None:
        return _Placed(plugin.id, _PLACEMENT)
    key = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in data.items())
    found = placements.get(key)
    if found is None:
        try:
            found = placements[key] = Placement.model_validate(data, strict=False)
        except Exception:
            return plugin.descriptor  # validates the whole, raising the error it finds
    return _Placed(plugin.id, found)


def _stored_summary(plugin: RegisteredPlugin, data: Mapping[str, Any]) -> dict[str, Any]:
    placement = data.get("placement") or {}
    runtime = data.get("runtime")
    return {
        "id": plugin.id,
        "name": data["name"],
        "family": plugin.family,
        "version": data.get("version", _DEFAULTS["version"].default),
        "description": data.get("description", _DEFAULTS["description"].default),
        "runtime": runtime["kind"] if runtime is not None else _NO_RUNTIME,
        "source": plugin.source,
        "dialect": plugin.dialect,
        "available": plugin.available,
        "unavailable_reason": plugin.unavailable_reason,
        "placement": {
            "capabilities": list(placement.get("capabilities", _PLACEMENT.capabilities)),
            "role": placement.get("role", _PLACEMENT.role),
            "only_inside_group": placement.get("only_inside_group", _PLACEMENT.only_inside_group),
        },
        "operations": [op["id"] for op in data.get("operations", ())],
    } | _origins(plugin.id, data.get("origins", ()))


def _origins(plugin_id: str, origins: Sequence[str]) -> dict[str, Any]:
    """A Shu plugin's declared origins, listed (only when it declares some) with the one
    ``source_type`` its writes are stored under, so a surface can offer them as filters."""
    if not origins:
        return {}
    return {"origins": list(origins), "source_type": f"plugin:{plugin_id}"}
