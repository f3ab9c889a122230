"""Which plugins a viewer of the catalog may see, kept across registry changes.

A viewer's rights over the whole registry are asked on the first page after every
change. A registry change alters a few plugins, not the policy: the answers for the
others still hold. They are kept per (policy version, viewer) and by *object* — the
registry replaces a plugin's object whenever anything of it changes, and the layout
(:mod:`plugyard.console.catalog_memo`) replaces the group that holds it — so only what
changed is asked again: a group the layout left alone is one lookup, a plugin in a
changed group one lookup, a new or changed plugin one question to the policy's
:class:`~plugyard.governance.policy.sight.Sight`. A new policy that changes the viewer's grants is
a new sight, hence new answers; one that leaves them as they were keeps them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence

from plugyard.governance.policy.sight import Sight
from plugyard.manifest.palette import merged
from plugyard.registry.model import RegisteredPlugin, RegistryEvent

#: Viewers (with their sight) whose answers are kept, most recent first.
KEPT_VIEWERS = 64
#: Past this many groups answered for one viewer, the old ones are forgotten.
KEPT_GROUPS = 512
Run = tuple[RegisteredPlugin, ...]


class ViewerRights:
    """One viewer's answers under one sight."""

    def __init__(self, sight: Sight | None) -> None:
        self._sight = sight
        self._plugins: dict[str, tuple[RegisteredPlugin, bool]] = {}
        self._groups: dict[int, tuple[Sequence[RegisteredPlugin], tuple[RegisteredPlugin, ...]]]
        self._groups = {}
        self._merges: dict[tuple[int, ...], tuple[tuple[Sequence[RegisteredPlugin], ...], Run]]
        self._merges = {}

    def shown(self, plugin: RegisteredPlugin) -> bool:
        if self._sight is None:  # no governance: everything shows
            return True
        pid = plugin.descriptor.id
        found = self._plugins.get(pid)
        if found is not None and found[0] is plugin:
            return found[1]
        answer = self._sight.shows(plugin.descriptor)
        self._plugins[pid] = (plugin, answer)  # a dict store: atomic, last one wins
        return answer

    def among(self, members: Sequence[RegisteredPlugin]) -> tuple[RegisteredPlugin, ...]:
        """The ``members`` (an immutable group of the layout) the viewer may see."""
        sight = self._sight
        if sight is None:
            return tuple(members)
        found = self._groups.get(id(members))
        if found is not None and found[0] is members:
            return found[1]
        answers, seen = self._plugins, []
        for plugin in members:  # shown() inline: ten thousand times after a policy load
            descriptor = plugin.descriptor
            kept = answers.get(descriptor.id)
            if kept is not None and kept[0] is plugin:
                answer = kept[1]
            else:
                answer = sight.shows(descriptor)
                answers[descriptor.id] = (plugin, answer)
            if answer:
                seen.append(plugin)
        if len(self._groups) >= KEPT_GROUPS:
            self._groups.clear()
        made = tuple(seen)
        self._groups[id(members)] = (members, made)  # holds members: its id stays its own
        return made

    def merged(
        self, runs: list[Sequence[RegisteredPlugin]], key: Callable[[RegisteredPlugin], str]
    ) -> Run:
        """:func:`plugyard.manifest.palette.merged`, kept for the same runs (the
        tuples :meth:`among` keeps): after a registry change, only the sections holding
        a changed group are merged again."""
        ids = tuple(id(run) for run in runs)
        found = self._merges.get(ids)
        if found is not None and all(a is b for a, b in zip(found[0], runs, strict=True)):
            return found[1]
        made = merged(runs, key)
        if len(self._merges) >= KEPT_GROUPS:
            self._merges.clear()
        self._merges[ids] = (tuple(runs), made)  # holds the runs: their ids stay theirs
        return made

    def forget(self, plugin_id: str) -> None:
        self._plugins.pop(plugin_id, None)


class KeptRights:
    def __init__(self, size: int = KEPT_VIEWERS) -> None:
        self._size = size
        self._kept: OrderedDict[Hashable, ViewerRights] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, viewer: Hashable, sight: Sight | None) -> ViewerRights:
        """The answers for ``viewer`` seeing with ``sight`` (``None``: no governance)."""
        key = (sight, viewer)  # equal sights answer alike, whatever their version
        with self._lock:
            found = self._kept.get(key)
            if found is None:
                found = self._kept[key] = ViewerRights(sight)
                while len(self._kept) > self._size:
                    self._kept.popitem(last=False)
            self._kept.move_to_end(key)
            return found

    def changed(self, event: RegistryEvent) -> None:
        """A removed plugin's answers go (a changed one's are replaced when next asked)."""
        if event.plugin is not None:
            return
        with self._lock:
            for rights in self._kept.values():
                rights.forget(event.plugin_id)
