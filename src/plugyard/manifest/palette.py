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
from typing import Generic, Protocol, TypeVar

from plugyard.manifest.model import (
    ALL_CAPABILITIES,
    PIPELINE_CAPABILITIES,
    Placement,
    Role,
)

UNDEFINED = "Undefined"
#: The capability order of OLO's default engine configuration.
DEFAULT_ORDER = PIPELINE_CAPABILITIES
CONTROL_ROLES: tuple[Role, ...] = ("CONDITION", "ITERATOR", "FORK", "JOIN")


class Placed(Protocol):
    """What grouping reads of a plugin: a descriptor, or a listing's lighter stand-in."""

    @property
    def id(self) -> str: ...

    @property
    def placement(self) -> Placement: ...


P = TypeVar("P", bound=Placed)


@dataclass(frozen=True, slots=True)
class Palette(Generic[P]):
    """``sections`` in display order (capabilities, then Undefined); ``control`` by role."""

    sections: tuple[tuple[str, tuple[P, ...]], ...]
    control: tuple[tuple[Role, tuple[P, ...]], ...]

    def section(self, name: str) -> tuple[P, ...]:
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


def palette(plugins: Iterable[P], capabilities: Sequence[str] | None = None) -> Palette[P]:
    """Group ``plugins``. ``capabilities`` are the pipeline's (in its order); without them
    every capability some plugin names gets a section, the OLO defaults first."""
    items = sorted(plugins, key=lambda p: p.id)
    stages = [p for p in items if p.placement.role == "CAPABILITY_STAGE"]
    if capabilities is None:
        named = {c for p in stages for c in p.placement.capabilities if c != ALL_CAPABILITIES}
        order = [c for c in DEFAULT_ORDER if c in named] + sorted(named - set(DEFAULT_ORDER))
    else:
        order = [c for c in capabilities if c not in {ALL_CAPABILITIES, UNDEFINED}]
    sections: list[tuple[str, tuple[P, ...]]] = []
    placed: set[str] = set()
    for capability in order:
        members = tuple(p for p in stages if p.placement.allows(capability))
        placed.update(p.id for p in members)
        sections.append((capability, members))
    undefined = tuple(p for p in stages if p.id not in placed)
    sections.append((UNDEFINED, undefined))
    control = tuple(
        (role, tuple(p for p in items if p.placement.role == role)) for role in CONTROL_ROLES
    )
    return Palette(tuple(sections), control)
