"""Registered plugins as the surfaces list them: one summary per plugin, grouped the way
the OLO palette groups them. The CLI and the REST API print the same shape."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from plugyard.manifest.palette import palette
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
) -> dict[str, list[dict[str, Any]]]:
    """``{"sections": [{capability, plugins}], "control": [{role, plugins}]}``, each plugin
    as ``summarise`` shows it."""
    entries = {p.id: p for p in plugins}
    view = palette([p.descriptor for p in entries.values()], capabilities)
    return {
        "sections": [
            {"capability": name, "plugins": [summarise(entries[p.id]) for p in members]}
            for name, members in view.sections
        ],
        "control": [
            {"role": role, "plugins": [summarise(entries[p.id]) for p in members]}
            for role, members in view.control
        ],
    }
