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

An unchanged restart writes nothing and sends no event. A broken plugin is reported and
skipped; a failing store is not a plugin's fault and raises ``StoreError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from plugyard.errors import RegistryError, UnsupportedTypeError
from plugyard.registry.model import LoadFailure, RegistryEvent, SourceKind
from plugyard.registry.registry import Registry
from plugyard.registry.rows import to_row
from plugyard.registry.sources import PluginSource, SourceResult, duplicate, failure, merge

#: Kinds re-read on every start; what they no longer offer is removed.
REREAD: frozenset[SourceKind] = frozenset({"builtin", "folder", "catalog", "entrypoint", "code"})


@dataclass(frozen=True, slots=True)
class SyncReport:
    loaded: tuple[str, ...]
    removed: tuple[str, ...]
    kept: tuple[str, ...]
    failures: tuple[LoadFailure, ...]
    skipped: tuple[str, ...]
    events: tuple[RegistryEvent, ...]


def sync_on_start(
    registry: Registry,
    sources: Sequence[PluginSource],
    *,
    reread: frozenset[SourceKind] = REREAD,
) -> SyncReport:
    failures = list(registry.load())
    offered = merge(_read(source) for source in sources)
    failures.extend(offered.failures)
    wanted = {p.id: p for p in offered.plugins}

    events: list[RegistryEvent] = []
    removed: list[str] = []
    for entry in registry.list():
        if entry.source in reread and entry.id not in wanted:
            event = registry.unregister(entry.id)
            removed.append(entry.id)
            if event is not None:
                events.append(event)

    loaded: list[str] = []
    for plugin in wanted.values():
        existing = registry.find(plugin.id)
        if existing is not None and existing.source not in reread:
            failures.append(duplicate(plugin, existing))
            continue
        if existing is not None and to_row(existing).same_entry(to_row(plugin)):
            loaded.append(plugin.id)
            continue
        try:
            event = registry.register(plugin, replace=True)
        except (RegistryError, UnsupportedTypeError) as exc:
            failures.append(failure(plugin.manifest_path or plugin.source, exc))
            continue
        loaded.append(plugin.id)
        if event is not None:
            events.append(event)

    kept = tuple(p.id for p in registry.list() if p.source not in reread)
    return SyncReport(
        loaded=tuple(loaded),
        removed=tuple(removed),
        kept=kept,
        failures=tuple(failures),
        skipped=offered.skipped,
        events=tuple(events),
    )


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
