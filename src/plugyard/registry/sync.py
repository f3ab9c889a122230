"""Sync on start (HomeClaw): the sources on disk are the truth for built-ins, the store for
externals.

1. the registry reads the store (externals, and what the last run registered);
2. every source is read; the same id from two sources keeps the first (sources are in
   priority order) and reports the other as ``duplicate_plugin``;
3. entries of a re-read kind (every kind but ``external``) that no source offers any
   more are removed;
4. what the sources offer is registered over what the store had (``replace=True``: a
   built-in's version may go down when its folder does), except over an external entry,
   which keeps its id — the built-in is reported as ``duplicate_plugin``.

An unchanged restart writes nothing and sends no event (but for the first start under a
new descriptor model, which marks the rows it validated: ``Registry.restamp``). A broken
plugin is reported and skipped; a failing store is not a plugin's fault and raises
``StoreError``.

With a :class:`~plugyard.registry.memory.FolderMemory`, step 2 does not read again the
plugin folders unchanged since the last start: they offer what the registry holds.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from plugyard.errors import ManifestError, RegistryError, UnsupportedTypeError
from plugyard.registry.model import LoadFailure, RegisteredPlugin, RegistryEvent, SourceKind
from plugyard.registry.registry import Registry
from plugyard.registry.rows import to_row
from plugyard.registry.sources import PluginSource, SourceResult, duplicate, failure, merge

#: Kinds re-read on every start; what they no longer offer is removed.
REREAD: frozenset[SourceKind] = frozenset({"builtin", "folder", "catalog", "entrypoint", "code"})


@dataclass(frozen=True, slots=True)
class SyncReport:
    loaded: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    failures: tuple[LoadFailure, ...] = ()
    skipped: tuple[str, ...] = ()
    events: tuple[RegistryEvent, ...] = ()
    #: Of ``loaded``, those whose folder was unchanged and not read again.
    unchanged: tuple[str, ...] = ()


class Settles(Protocol):
    def settle(self, failures: Sequence[LoadFailure]) -> None: ...


def sync_on_start(
    registry: Registry,
    sources: Sequence[PluginSource],
    *,
    reread: frozenset[SourceKind] = REREAD,
    memory: Settles | None = None,
) -> SyncReport:
    """``memory`` is the one the sources were given: told the outcome at the end."""
    with _cycle_collection_paused():
        return _sync(registry, sources, reread, memory)


def _sync(
    registry: Registry,
    sources: Sequence[PluginSource],
    reread: frozenset[SourceKind],
    memory: Settles | None,
) -> SyncReport:
    failures = list(registry.load())
    offered = merge(_read(source) for source in sources)
    failures.extend(offered.failures)
    unchanged = {p.id: p for p in offered.unchanged}
    wanted = {p.id: p for p in (*offered.plugins, *offered.unchanged)}

    events: list[RegistryEvent] = []
    removed: list[str] = []
    for entry in registry.list():
        if entry.source in reread and entry.id not in wanted:
            event = registry.unregister(entry.id)
            removed.append(entry.id)
            if event is not None:
                events.append(event)

    held: set[str] = set()
    new: list[RegisteredPlugin] = []
    for plugin_id, plugin in wanted.items():
        existing = registry.find(plugin_id)
        if existing is not None and existing is unchanged.get(plugin_id):
            held.add(plugin_id)  # what the registry holds, offered back as it is
        elif existing is not None and existing.source not in reread:
            failures.append(duplicate(plugin, existing))
        elif existing is not None and to_row(existing).same_entry(to_row(plugin)):
            held.add(plugin_id)
        else:
            new.append(plugin)
    written, registered = _register(registry, new, failures)
    events.extend(written)
    loaded = [i for i in wanted if i in held or i in registered]

    kept = tuple(p.id for p in registry.list() if p.source not in reread)
    registry.restamp()
    if memory is not None:
        memory.settle(failures)
    return SyncReport(
        loaded=tuple(loaded),
        removed=tuple(removed),
        kept=kept,
        failures=tuple(failures),
        skipped=offered.skipped,
        events=tuple(events),
        unchanged=tuple(unchanged),
    )


@contextmanager
def _cycle_collection_paused() -> Iterator[None]:
    """A start makes tens of thousands of long-lived objects (a descriptor per plugin);
    the cycle collector would scan the growing heap again and again as they pile up —
    on 10,000 plugins, about as long as making them. Nothing made here needs it: plain
    reference counting frees what the start drops, and collection resumes after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _register(
    registry: Registry, plugins: list[RegisteredPlugin], failures: list[LoadFailure]
) -> tuple[list[RegistryEvent], set[str]]:
    """Register ``plugins`` in one transaction; when one is refused, each on its own, so
    that only the refused ones fail. Answers the events and the ids registered."""
    try:
        return list(registry.register_many(plugins, replace=True)), {p.id for p in plugins}
    except (RegistryError, UnsupportedTypeError, ManifestError):
        pass
    events: list[RegistryEvent] = []
    registered: set[str] = set()
    for plugin in plugins:
        try:
            event = registry.register(plugin, replace=True)
        except (RegistryError, UnsupportedTypeError, ManifestError) as exc:
            failures.append(failure(plugin.manifest_path or plugin.source, exc))
            continue
        registered.add(plugin.id)
        if event is not None:
            events.append(event)
    return events, registered


def _read(source: PluginSource) -> SourceResult:
    try:
        return source.load()
    except Exception as exc:
        # A source is plugin code's neighbour too: its crash must not stop the start.
        return SourceResult(failures=(failure(_name(source), exc),))


def _name(source: PluginSource) -> str:
    try:
        return source.name
    except Exception:
        return type(source).__name__
