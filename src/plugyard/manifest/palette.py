"""The OLO palette: plugins grouped under capabilities, with ALL, *Undefined* and the
control components apart.

Rules of the OLO seed: a stage plugin shows under every capability it lists; ``ALL``
shows it under every section; a plugin that lists no capability — or, when the
pipeline's capabilities are given, none of those — shows under *Undefined* only.
Plugins with a structural role (CONDITION, ITERATOR, FORK, JOIN) are not stages: they
are listed by role, for the group slots they fill.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from plugyard.manifest.model import (
    ALL_CAPABILITIES,
    PIPELINE_CAPABILITIES,
    PluginDescriptor,
    Role,
)

UNDEFINED = "Undefined"
#: The capability order of OLO's default engine configuration.
DEFAULT_ORDER = PIPELINE_CAPABILITIES
CONTROL_ROLES: tuple[Role, ...] = ("CONDITION", "ITERATOR", "FORK", "JOIN")


@dataclass(frozen=True, slots=True)
class Palette:
    """``sections`` in display order (capabilities, then Undefined); ``control`` by role."""

    sections: tuple[tuple[str, tuple[PluginDescriptor, ...]], ...]
    control: tuple[tuple[Role, tuple[PluginDescriptor, ...]], ...]

    def section(self, name: str) -> tuple[PluginDescriptor, ...]:
        return next((plugins for key, plugins in self.sections if key == name), ())

    def to_dict(self) -> dict[str, object]:
        return {
            "sections": [
                {"capability": name, "plugins": [p.id for p in plugins]}
                for name, plugins in self.sections
            ],
            "control": [
                {"role": role, "plugins": [p.id for p in plugins]} for role, plugins in self.control
            ],
        }


def palette(
    plugins: Iterable[PluginDescriptor], capabilities: Sequence[str] | None = None
) -> Palette:
    """Group ``plugins``. ``capabilities`` are the pipeline's (in its order); without them
    every capability some plugin names gets a section, the OLO defaults first."""
    items = sorted(plugins, key=_id)
    # One pass, by position in id order: a section is the positions of the plugins that
    # name it merged with those that say ALL, so each plugin is looked at once (the
    # catalog groups ten thousand of them on the first page after a change).
    named: dict[str, list[int]] = {}
    everywhere: list[int] = []
    nowhere: list[int] = []
    roles: dict[str, list[int]] = {role: [] for role in CONTROL_ROLES}
    for at, plugin in enumerate(items):
        placement = plugin.placement
        if placement.role != "CAPABILITY_STAGE":
            roles[placement.role].append(at)
            continue
        listed = placement.capabilities
        if not listed:
            nowhere.append(at)
        elif ALL_CAPABILITIES in listed:
            everywhere.append(at)
            for capability in listed:  # ALL beside others still names those others
                if capability != ALL_CAPABILITIES:
                    named.setdefault(capability, [])
        else:
            for capability in listed:
                members = named.setdefault(capability, [])
                if not members or members[-1] != at:  # a capability listed twice
                    members.append(at)
    if capabilities is None:
        order = [c for c in DEFAULT_ORDER if c in named]
        order += sorted(set(named) - set(DEFAULT_ORDER))
    else:
        order = [c for c in capabilities if c not in {ALL_CAPABILITIES, UNDEFINED}]
    sections: list[tuple[str, tuple[PluginDescriptor, ...]]] = []
    placed: set[int] = set(everywhere) if order else set()
    for capability in order:
        own = named.get(capability, [])
        placed.update(own)
        members = sorted(own + everywhere) if everywhere else own
        sections.append((capability, tuple(items[at] for at in members)))
    # ALL stands under every section there is; with no section at all it is Undefined.
    undefined = sorted(_unplaced(named, order, placed).union(nowhere, () if order else everywhere))
    sections.append((UNDEFINED, tuple(items[at] for at in undefined)))
    control = tuple((role, tuple(items[at] for at in roles[role])) for role in CONTROL_ROLES)
    return Palette(tuple(sections), control)


def _id(plugin: PluginDescriptor) -> str:
    return plugin.id


def _unplaced(named: dict[str, list[int]], order: list[str], placed: set[int]) -> set[int]:
    """Stage plugins that name capabilities, none of them in ``order``."""
    shown = set(order)
    return {
        at
        for capability, members in named.items()
        if capability not in shown
        for at in members
        if at not in placed
    }
