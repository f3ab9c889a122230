"""Which family plugins a stage may run, and in what order by default.

The core runs only plugins whose family matches the stage (DS003); the planner orders
the KB and goal-solver stages, and this module orders the rest (seed detectors,
validators, planners) from the descriptors: a pinned plugin alone, else the session's
preferred one first, then plugins that use no model before those that do, cheaper
before dearer (``plannerHints.relativeCost``), a higher ``priority`` first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from plugyard.registry.model import RegisteredPlugin

#: The stages of a request (DS027 spelling) and the family each runs.
STAGE_FAMILY: dict[str, str] = {
    "seed-detector": "sd",
    "kb": "kb",
    "goal-solver": "gs",
    "validation": "val",
    "planner": "plan",
}
#: Other names a pin or a preference may use for a stage.
STAGE_ALIASES: dict[str, str] = {
    "sd": "seed-detector",
    "seed": "seed-detector",
    "kb-plugin": "kb",
    "gs": "goal-solver",
    "solver": "goal-solver",
    "val": "validation",
    "validator": "validation",
    "plan": "planner",
    "mrp-plan-plugin": "planner",
    "sd-plugin": "seed-detector",
    "gs-plugin": "goal-solver",
    "val-plugin": "validation",
}


class Catalog(Protocol):
    """Where the flow finds plugins (the registry)."""

    def find(self, plugin_id: str) -> RegisteredPlugin | None: ...

    def list(self, family: str | None = None) -> tuple[RegisteredPlugin, ...]: ...


def stage_of(name: str) -> str | None:
    """The stage ``name`` means, or ``None``."""
    return name if name in STAGE_FAMILY else STAGE_ALIASES.get(name)


def by_stage(choices: Mapping[str, str]) -> dict[str, str]:
    """Pins or preferences keyed by stage; ``ValueError`` names an unknown stage."""
    out: dict[str, str] = {}
    for key, plugin_id in choices.items():
        stage = stage_of(key)
        if stage is None:
            known = ", ".join(STAGE_FAMILY)
            raise ValueError(f"{key!r} is no reasoning stage (one of {known})")
        out[stage] = plugin_id
    return out


def members(catalog: Catalog, family: str) -> tuple[RegisteredPlugin, ...]:
    """The enabled plugins of ``family`` in their default order."""
    return tuple(sorted((p for p in catalog.list(family) if p.available), key=_default_rank))


def ordered(
    catalog: Catalog, stage: str, pins: Mapping[str, str], preferences: Mapping[str, str]
) -> tuple[str, ...]:
    """The plugins the core tries at ``stage``: the pin alone, else the preference first."""
    if stage in pins:
        return (pins[stage],)
    found = tuple(p.id for p in members(catalog, STAGE_FAMILY[stage]))
    return preferred_first(found, preferences.get(stage))


def preferred_first(order: Sequence[str], preferred: str | None) -> tuple[str, ...]:
    """A session preference is a strong prior, never a filter: first, the rest after."""
    if not preferred:
        return tuple(order)
    return (preferred, *(p for p in order if p != preferred))


def misnamed(catalog: Catalog, stage: str, plugin_id: str) -> tuple[str, str] | None:
    """Why ``plugin_id`` cannot run at ``stage`` (code, message), or ``None``."""
    found = catalog.find(plugin_id)
    if found is None:
        return "plugin_not_found", f"no plugin {plugin_id!r}"
    family = STAGE_FAMILY[stage]
    if found.family != family:
        return (
            "family_mismatch",
            f"{plugin_id!r} is a {found.family} plugin; the {stage} stage runs {family} plugins",
        )
    if not found.available:
        return "plugin_unavailable", found.unavailable_reason or f"{plugin_id!r} is unavailable"
    return None


def summary(plugin: RegisteredPlugin) -> dict[str, Any]:
    """What a planner is told about a candidate: its DS003 descriptor fields."""
    d = plugin.descriptor
    hints = d.planner_hints
    return {
        "id": d.id,
        "type": f"{d.family}-plugin" if d.family != "plan" else "mrp-plan-plugin",
        "description": d.description,
        "costClass": d.cost_class,
        "usesLLM": bool(d.uses_llm),
        "maxLLMCalls": d.max_llm_calls,
        "modelRoles": list(d.model_roles),
        "tags": list(d.tags),
        "plannerHints": None
        if hints is None
        else {
            "expectedLatencyMs": hints.expected_latency_ms,
            "expectedLLMCalls": hints.expected_llm_calls,
            "relativeCost": hints.relative_cost,
            "supportedActs": list(hints.supported_acts),
            "topicTags": list(hints.topic_tags),
            "preferredDepth": hints.preferred_depth,
            "fallbackRole": hints.fallback_role,
            "confidenceWhenMatched": hints.confidence_when_matched,
        },
    }


def _default_rank(plugin: RegisteredPlugin) -> tuple[Any, ...]:
    d = plugin.descriptor
    hints = d.planner_hints
    cost = hints.relative_cost if hints and hints.relative_cost is not None else 0.5
    priority = d.x.get("/priority")
    return (
        bool(d.uses_llm),
        -(priority if isinstance(priority, int | float) else 0),
        cost,
        d.id,
    )
