"""The OLO palette: plugins grouped under capabilities, with ALL, *Undefined* and the
control components apart.

Rules of the OLO seed: a stage plugin shows under every capability it lists; ``ALL``
shows it under every section; a plugin that lists no capability — or, when the
pipeline's capabilities are given, none of those — shows under *Undefined* only.
Plugins with a structural role (CONDITION, ITERATOR, FORK, JOIN) are not stages: they
are listed by role, for the group slots they fill.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter
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


class Identified(Protocol):
    @property
    def id(self) -> str: ...


class Placed(Identified, Protocol):
    """What grouping reads of a plugin: a descriptor, or a listing's lighter stand-in."""

    @property
    def placement(self) -> Placement: ...


T = TypeVar("T")
P = TypeVar("P", bound=Identified)
Q = TypeVar("Q", bound=Placed)


@dataclass(frozen=True, slots=True)
class Palette(Generic[P]):
    """``sections`` in display order (capabilities, then Undefined); ``control`` by role.
    It holds descriptors, or what the caller grouped (a catalog: registered plugins)."""

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


def palette(plugins: Iterable[Q], capabilities: Sequence[str] | None = None) -> Palette[Q]:
    """Group ``plugins``. ``capabilities`` are the pipeline's (in its order); without them
    every capability some plugin names gets a section, the OLO defaults first."""
    return placed(by_placement(sorted(plugins, key=_id), _itself), capabilities)


def by_placement(
    plugins: Iterable[T], descriptor: Callable[[T], Placed]
) -> list[tuple[Placement, list[T]]]:
    """``plugins`` by where their ``descriptor`` lets them stand, each group in the
    order given. A catalog keeps these groups between requests."""
    groups: dict[tuple[str, tuple[str, ...]], tuple[Placement, list[T]]] = {}
    for plugin in plugins:
        where = descriptor(plugin).placement
        found = groups.get((where.role, where.capabilities))
        if found is None:
            groups[where.role, where.capabilities] = (where, [plugin])
        else:
            found[1].append(plugin)
    return list(groups.values())


def placed(
    groups: Iterable[tuple[Placement, Sequence[P]]],
    capabilities: Sequence[str] | None = None,
    *,
    key: Callable[[P], str] = attrgetter("id"),
    merge: Callable[[list[Sequence[P]], Callable[[P], str]], tuple[P, ...]] | None = None,
) -> Palette[P]:
    """The palette of plugins grouped by placement (:func:`by_placement`; each group in
    id order, no plugin in two groups). The OLO rules depend on the placement alone, so
    they are asked once per group, and a section is its groups merged by id — which
    keeps a catalog of ten thousand plugins to a few dozen questions and C-level merges.
    ``key`` reads a member's id; ``merge`` is :func:`merged` or one that keeps its
    answers (the same groups give the same section)."""
    join = merged if merge is None else merge
    present = [(where, members) for where, members in groups if members]
    stages = [(where, members) for where, members in present if where.role == "CAPABILITY_STAGE"]
    if capabilities is None:
        named = {c for where, _ in stages for c in where.capabilities if c != ALL_CAPABILITIES}
        order = [c for c in DEFAULT_ORDER if c in named] + sorted(named - set(DEFAULT_ORDER))
    else:
        order = [c for c in capabilities if c not in {ALL_CAPABILITIES, UNDEFINED}]
    sections: list[tuple[str, tuple[P, ...]]] = []
    placed_groups: set[int] = set()
    for capability in order:
        chosen = [at for at, (where, _) in enumerate(stages) if where.allows(capability)]
        placed_groups.update(chosen)
        sections.append((capability, join([stages[at][1] for at in chosen], key)))
    unplaced = (members for at, (_, members) in enumerate(stages) if at not in placed_groups)
    sections.append((UNDEFINED, join(list(unplaced), key)))
    control = tuple(
        (role, join([members for where, members in present if where.role == role], key))
        for role in CONTROL_ROLES
    )
    return Palette(tuple(sections), control)


def merged(runs: list[Sequence[P]], key: Callable[[P], str]) -> tuple[P, ...]:
    """Groups each in id order, as one tuple in id order (a sort of sorted runs)."""
    if len(runs) == 1:
        return tuple(runs[0])
    return tuple(sorted(chain.from_iterable(runs), key=key))


def _itself(plugin: Q) -> Q:
    return plugin


_id = attrgetter("id")
