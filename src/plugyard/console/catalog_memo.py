"""What the catalog keeps between requests, and how a registry change reaches it.

Three things, from the longest-lived: the viewers' rights (:mod:`catalog_rights`), kept
across registry changes; the :class:`Layout` — the registry by placement, shared by all
viewers — patched with the registry's events rather than made again; and the groupings
of what one viewer sees under one set of filters, dropped on every change (making one
again from the layout and the rights is a pass of lookups and a few sorted merges).
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter

from plugyard.console.catalog_rights import KeptRights
from plugyard.manifest.model import Placement
from plugyard.manifest.palette import Palette, by_placement
from plugyard.registry.model import RegisteredPlugin, RegistryEvent

#: A viewer's grouping: registered plugins, by the OLO rules.
Grouped = Palette[RegisteredPlugin]
MEMO_SIZE = 64
#: Past this many changes waiting, making the layout again is cheaper than patching it.
PATCH_LIMIT = 200
Where = tuple[str, tuple[str, ...]]
#: A registered plugin's id, read in C (``RegisteredPlugin.id`` is a Python property).
by_id = attrgetter("descriptor.id")
_descriptor = attrgetter("descriptor")


def _where(plugin: RegisteredPlugin) -> Where:
    placement = plugin.descriptor.placement
    return placement.role, placement.capabilities


@dataclass(frozen=True, slots=True)
class Layout:
    """The registry by placement (:func:`by_placement`), each group in id order."""

    groups: dict[Where, tuple[Placement, tuple[RegisteredPlugin, ...]]]

    @classmethod
    def of(cls, plugins: Sequence[RegisteredPlugin]) -> Layout:
        """From ``plugins`` in id order (``Registry.list``)."""
        grouped = by_placement(plugins, _descriptor)
        return cls({(w.role, w.capabilities): (w, tuple(ps)) for w, ps in grouped})

    def patched(self, events: Iterable[RegistryEvent]) -> Layout:
        """This layout after ``events``: each changed plugin out of the group that holds
        it (found by id) and, unless removed, into its placement's group by id."""
        groups = dict(self.groups)
        for event in events:
            for where, (placement, members) in groups.items():
                at = bisect_left(members, event.plugin_id, key=by_id)
                if at < len(members) and members[at].descriptor.id == event.plugin_id:
                    groups[where] = (placement, members[:at] + members[at + 1 :])
                    break
            plugin = event.plugin
            if plugin is not None:
                where = _where(plugin)
                placement, members = groups.get(where, (plugin.descriptor.placement, ()))
                at = bisect_left(members, plugin.descriptor.id, key=by_id)
                groups[where] = (placement, (*members[:at], plugin, *members[at:]))
        return Layout(groups)


class CatalogMemo:
    """``changed`` is what the registry calls on every change (``Registry.subscribe``):
    kept groupings go at once, the change waits to be patched into the layout on the
    next request, and the rights forget a removed plugin. The caller puts the policy's
    version in a grouping's key, so a new policy is a new grouping too."""

    def __init__(self, size: int = MEMO_SIZE) -> None:
        self._size = size
        self._kept: OrderedDict[Hashable, Grouped] = OrderedDict()
        self._generation = 0
        self._layout: Layout | None = None
        self._pending: list[RegistryEvent] = []
        self._lock = threading.Lock()
        self.rights = KeptRights(size)

    def changed(self, event: RegistryEvent | None = None) -> None:
        """After ``event`` (``None``: some change unknown, everything is made again)."""
        with self._lock:
            self._generation += 1
            self._kept.clear()
            if event is None or self._layout is None or len(self._pending) >= PATCH_LIMIT:
                self._layout, self._pending = None, []
            else:
                self._pending.append(event)
        if event is not None:
            self.rights.changed(event)

    def layout(self, plugins: Callable[[], Sequence[RegisteredPlugin]]) -> Layout:
        """The registry by placement now, made from ``plugins()`` when none is kept."""
        with self._lock:
            if self._layout is not None:
                if self._pending:
                    self._layout, self._pending = self._layout.patched(self._pending), []
                return self._layout
            generation = self._generation
        made = Layout.of(plugins())
        with self._lock:  # kept only if no change came while it was made
            if generation == self._generation and self._layout is None:
                self._layout = made
        return made

    def grouped(self, key: Hashable, build: Callable[[], Grouped]) -> Grouped:
        with self._lock:
            full = (self._generation, key)
            found = self._kept.get(full)
            if found is not None:
                self._kept.move_to_end(full)
                return found
        made = build()  # outside the lock: two first requests may both build, harmlessly
        with self._lock:
            if full[0] == self._generation:
                self._kept[full] = made
                while len(self._kept) > self._size:
                    self._kept.popitem(last=False)
        return made
