"""The palette API of the OLO seed, over :func:`plugyard.manifest.palette.palette`.

Stage plugins grouped by capability — a plugin listing ``ALL`` under every section,
one listing none (or none of the pipeline's) under *Undefined* — and the control
components (CONDITION, ITERATOR, FORK, JOIN) apart, by role, for the group slots.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from plugyard.pipelines.model import DocumentModel, PipelineModel
from plugyard.registry.listing import grouped
from plugyard.registry.model import RegisteredPlugin


def summary(plugin: RegisteredPlugin) -> dict[str, Any]:
    """What a palette shows of one plugin."""
    d = plugin.descriptor
    return {
        "id": d.id,
        "name": d.name,
        "description": d.description,
        "family": d.family,
        "role": d.placement.role,
        "capabilities": list(d.placement.capabilities),
        "only_inside_group": d.placement.only_inside_group,
        "operations": [op.id for op in d.operations],
        "available": plugin.available,
    }


def palette_view(
    plugins: Iterable[RegisteredPlugin], capabilities: Sequence[str] | None = None
) -> dict[str, Any]:
    """``{"sections": [{capability, plugins}], "control": [{role, plugins}]}``.

    ``capabilities`` are a pipeline's, in its order (see :func:`capabilities_of`);
    without them every capability a plugin names gets a section, OLO's order first.
    """
    return grouped(plugins, capabilities, summary)


def capabilities_of(document: DocumentModel, pipeline: str | None = None) -> list[str]:
    """The capabilities of one pipeline of a document (all of them, once each, when
    no pipeline is named), in the order they run."""
    chosen: list[PipelineModel] = [document] if document.capabilities is not None else []
    if pipeline is not None:
        named = document.pipelines.get(pipeline)
        chosen = [named] if named is not None else []
    elif not chosen:
        chosen = list(document.pipelines.values())
    names = [c.capability for p in chosen for c in (p.capabilities or [])]
    return list(dict.fromkeys(names))
