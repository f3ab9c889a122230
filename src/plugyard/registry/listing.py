"""Registered plugins as the surfaces list them: one summary per plugin, grouped the way
the OLO palette groups them. The CLI and the REST API print the same shape."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from plugyard.errors import PlugyardError
from plugyard.manifest.model import ALL_CAPABILITIES, PIPELINE_CAPABILITIES, PluginDescriptor
from plugyard.manifest.nearest import nearest
from plugyard.manifest.palette import UNDEFINED, palette
from plugyard.registry.model import RegisteredPlugin


def summary(plugin: RegisteredPlugin) -> dict[str, Any]:
    """What a listing shows of one plugin (the descriptor itself is shown on request)."""
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
    }


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
    descriptors = [p.descriptor for p in entries.values()]
    if only is not None:
        check_capabilities(only, descriptors)
    view = palette(descriptors, capabilities)
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


def check_capabilities(names: Sequence[str], descriptors: Sequence[PluginDescriptor]) -> None:
    known = {*PIPELINE_CAPABILITIES, UNDEFINED}
    known.update(c for d in descriptors for c in d.placement.capabilities if c != ALL_CAPABILITIES)
    for name in names:
        if name not in known:
            guess = nearest(name, known, cutoff=0.6)
            hint = f"did you mean {guess!r}?" if guess else f"known: {', '.join(sorted(known))}"
            raise PlugyardError(f"no capability {name!r} ({hint})", code="invalid_request")
