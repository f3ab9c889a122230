"""The typed plugin registry (DS003): register, get, list, list_by_type, and events.

Write-through: every change is written to the repository first and reaches the
in-memory view only once it committed, so after any call — successful or not — the
registry holds exactly what the store holds. Reads are served from memory without a
lock (the view is replaced, never mutated), which keeps ``find`` on the call path cheap.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import replace as copy_with
from typing import TYPE_CHECKING, Any, get_args

from plugyard.errors import ManifestError, NotFoundError, PlugyardError, RegistryError
from plugyard.manifest.auth_fields import faults as auth_faults
from plugyard.manifest.bindings import faults as binding_faults
from plugyard.manifest.families import FAMILY_OF_TYPE
from plugyard.manifest.model import DESCRIPTOR_STAMP, Family, PluginDescriptor
from plugyard.registry.intake import check_family, read_plugins
from plugyard.registry.model import (
    EventKind,
    Listener,
    LoadFailure,
    RegisteredPlugin,
    RegistryEvent,
    SourceKind,
    Trust,
    content_hash,
)
from plugyard.registry.rows import from_row, to_row
from plugyard.registry.rules import admit
from plugyard.store.plugins import PluginRepository, PluginRow

if TYPE_CHECKING:
    from plugyard.store.store import Store

log = logging.getLogger("plugyard.registry")
Unsubscribe = Callable[[], None]
#: Past this many changed ids, reading the whole table is cheaper than one read each.
_FULL_REFRESH_FROM = 200


class Registry:
    """Plugins by id (unique across families), backed by a :class:`PluginRepository`.

    Nothing is loaded on construction: call :meth:`load` to read the store, or
    :func:`plugyard.registry.sync.sync_on_start` to also read the plugin sources.
    """

    def __init__(self, repository: PluginRepository | None = None) -> None:
        if repository is None:  # the rows live in an in-memory store of this registry's own
            from plugyard.store.store import Store

            repository = Store.open(":memory:").plugins
        self._repo: PluginRepository = repository
        self._entries: dict[str, RegisteredPlugin] = {}
        self._listeners: tuple[Listener, ...] = ()
        self._lock = threading.RLock()
        self._stale: list[tuple[str, str]] = []  # rows read under another model's stamp

    @classmethod
    def over(cls, store: Store) -> Registry:
        return cls(store.plugins)

    @property
    def repository(self) -> PluginRepository:
        return self._repo

    def load(self) -> tuple[LoadFailure, ...]:
        """Replace the in-memory view with the store's rows; no events are sent.

        A row this version cannot read (an unknown family, say) is reported, skipped
        and left in the store untouched.
        """
        with self._lock:
            entries: dict[str, RegisteredPlugin] = {}
            failures: list[LoadFailure] = []
            stale: list[tuple[str, str]] = []
            for row in self._repo.list(timestamps=False):
                try:
                    entries[row.id] = from_row(row)
                except PlugyardError as exc:
                    failures.append(LoadFailure(f"store:{row.id}", exc.code, exc.message))
                    continue
                if row.stamp != DESCRIPTOR_STAMP:
                    stale.append((row.id, row.content_hash))
            self._entries = entries
            self._stale = stale
        return tuple(failures)

    def restamp(self) -> int:
        """Mark the rows the last :meth:`load` validated under another model's stamp (an
        older plugyard wrote them) as valid under this one, so the next start need not
        validate them as it reads them. Answers how many it marked."""
        with self._lock:
            stale, self._stale = self._stale, []
        self._repo.restamp(stale, DESCRIPTOR_STAMP)
        return len(stale)

    def refresh(self) -> tuple[RegistryEvent, ...]:
        """Read the store again and announce what changed there since this view was
        read — by another process on the same database (a CLI beside a server, another
        replica). Unlike :meth:`load`, listeners hear of every difference, so the search
        index follows."""
        with self._lock:
            before = self._entries
            self.load()
            after = self._entries
            events: list[RegistryEvent] = []
            for plugin_id in sorted(before.keys() | after.keys()):
                old, new = before.get(plugin_id), after.get(plugin_id)
                if new is None and old is not None:
                    events.append(RegistryEvent("removed", plugin_id, None, old))
                elif old is None and new is not None:
                    events.append(RegistryEvent("registered", plugin_id, new, None))
                elif (
                    old is not None and new is not None and not to_row(old).same_entry(to_row(new))
                ):
                    events.append(RegistryEvent("updated", plugin_id, new, old))
            self._emit(events)
        return tuple(events)

    def refresh_ids(self, plugin_ids: Iterable[str]) -> tuple[RegistryEvent, ...]:
        """:meth:`refresh` for the plugins another replica changed (the change log):
        one read per id instead of the whole table; a large batch reads the table."""
        ids = tuple(dict.fromkeys(plugin_ids))
        if len(ids) > _FULL_REFRESH_FROM:
            return self.refresh()
        with self._lock:
            entries = dict(self._entries)
            events: list[RegistryEvent] = []
            for plugin_id in ids:
                old, row = entries.get(plugin_id), self._repo.get(plugin_id)
                new = None if row is None else _readable(row)
                if new is None:
                    if old is not None:
                        del entries[plugin_id]
                        events.append(RegistryEvent("removed", plugin_id, None, old))
                elif old is None:
                    entries[plugin_id] = new
                    events.append(RegistryEvent("registered", plugin_id, new, None))
                elif not to_row(old).same_entry(to_row(new)):
                    entries[plugin_id] = new
                    events.append(RegistryEvent("updated", plugin_id, new, old))
            self._entries = entries
            self._emit(events)
        return tuple(events)

    # writes -------------------------------------------------------------------------

    def register(self, plugin: RegisteredPlugin, *, replace: bool = False) -> RegistryEvent | None:
        """Add or update ``plugin``; ``None`` when the registry already held it as is.

        Raises ``unsupported_type``, ``duplicate_plugin`` (the id belongs to another
        source or location), ``version_conflict`` (older than the registered version)
        or ``store_error``. ``replace=True`` overrides the origin and version rules.
        """
        events = self.register_many([plugin], replace=replace)
        return events[0] if events else None

    def register_many(
        self, plugins: Iterable[RegisteredPlugin], *, replace: bool = False
    ) -> tuple[RegistryEvent, ...]:
        """Register several plugins all-or-nothing: one refusal registers none."""
        batch = tuple(_checked(p) for p in plugins)
        ids = [p.id for p in batch]
        repeated = sorted(i for i, n in Counter(ids).items() if n > 1)
        if repeated:
            raise RegistryError(f"plugin id {repeated[0]!r} given twice", code="duplicate_plugin")
        with self._lock:
            results = self._repo.upsert_many(
                [to_row(p) for p in batch],
                check=lambda stored, incoming: admit(stored, incoming, replace=replace),
            )
            entries = dict(self._entries)
            events: list[RegistryEvent] = []
            for plugin, result in zip(batch, results, strict=True):
                if result.written:
                    before = self._previous(result.previous)
                    kind: EventKind = "registered" if before is None else "updated"
                    events.append(RegistryEvent(kind, plugin.id, plugin, before))
                entries[plugin.id] = plugin
            self._entries = entries
            self._emit(events)
        return tuple(events)

    def register_data(
        self,
        data: Any,
        *,
        source: SourceKind = "external",
        trust: Trust = "untrusted",
        location: str | None = None,
        replace: bool = False,
    ) -> tuple[RegistryEvent, ...]:
        """Register the plugins of raw data: a manifest of any dialect, or a canonical
        descriptor as JSON. An unknown family or MRP type is ``unsupported_type``."""
        read = read_plugins(data)
        plugins = [
            RegisteredPlugin.of(d, source, trust=trust, location=location, dialect=dialect)
            for d, dialect in read
        ]
        return self.register_many(plugins, replace=replace)

    def unregister(self, plugin_id: str) -> RegistryEvent | None:
        """Remove a plugin; ``None`` when there was none."""
        with self._lock:
            removed = self._repo.delete(plugin_id)
            entries = dict(self._entries)
            cached = entries.pop(plugin_id, None)
            self._entries = entries
            if removed is None:
                return None
            event = RegistryEvent("removed", plugin_id, None, cached or self._previous(removed))
            self._emit([event])
        return event

    def set_availability(
        self, plugin_id: str, available: bool, reason: str | None = None
    ) -> RegistryEvent | None:
        """Mark a plugin (un)available; ``None`` when nothing changed.

        Raises ``plugin_not_found`` for an unknown id.
        """
        with self._lock:
            result = self._repo.set_availability(plugin_id, available, reason)
            if result is None:
                entries = dict(self._entries)
                entries.pop(plugin_id, None)
                self._entries = entries
                raise NotFoundError(f"no plugin {plugin_id!r}", code="plugin_not_found")
            before = self._previous(result.previous)
            if before is None:
                return None
            after = copy_with(before, available=available, unavailable_reason=reason)
            self._entries = {**self._entries, plugin_id: after}
            if not result.written:
                return None
            event = RegistryEvent("availability", plugin_id, after, before)
            self._emit([event])
        return event

    # reads --------------------------------------------------------------------------

    def find(self, plugin_id: str) -> RegisteredPlugin | None:
        """The plugin with this id, whatever its family."""
        return self._entries.get(plugin_id)

    def require(self, plugin_id: str) -> RegisteredPlugin:
        found = self._entries.get(plugin_id)
        if found is None:
            raise NotFoundError(f"no plugin {plugin_id!r}", code="plugin_not_found")
        return found

    def get(self, family: str, plugin_id: str) -> RegisteredPlugin | None:
        """DS003 ``get(type, id)``: the plugin if it has this id *and* this family."""
        wanted = _family(family)
        found = self._entries.get(plugin_id)
        return found if found is not None and found.family == wanted else None

    def ids(self) -> tuple[str, ...]:
        """Every registered id (for "did you mean" hints)."""
        return tuple(self._entries)

    def list(self, family: str | None = None) -> tuple[RegisteredPlugin, ...]:
        """All plugins, or those of one family, ordered by id."""
        entries = self._entries
        wanted = _family(family) if family is not None else None
        return tuple(
            entries[i] for i in sorted(entries) if wanted is None or entries[i].family == wanted
        )

    def list_by_type(self, family: str) -> tuple[RegisteredPlugin, ...]:
        """DS003 ``listByType``; accepts family names and MRP types (``kb-plugin``)."""
        return self.list(family)

    def descriptors(self, family: str | None = None) -> tuple[PluginDescriptor, ...]:
        return tuple(p.descriptor for p in self.list(family))

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, plugin_id: object) -> bool:
        return plugin_id in self._entries

    # events -------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Unsubscribe:
        """Call ``listener`` with every change, in order, after it committed.

        Listeners run synchronously under the registry's lock; one that raises is
        logged and does not undo or block the change. Returns the unsubscribe function.
        """
        with self._lock:
            self._listeners = (*self._listeners, listener)

        def unsubscribe() -> None:
            with self._lock:
                self._listeners = tuple(x for x in self._listeners if x is not listener)

        return unsubscribe

    def _emit(self, events: Iterable[RegistryEvent]) -> None:
        for event in events:
            for listener in self._listeners:
                try:
                    listener(event)
                except Exception:
                    log.exception(
                        "registry listener %r failed on %s %s",
                        listener,
                        event.kind,
                        event.plugin_id,
                    )

    def _previous(self, row: PluginRow | None) -> RegisteredPlugin | None:
        """The registered plugin a stored row was; memory's copy when it is that row."""
        if row is None:
            return None
        cached = self._entries.get(row.id)
        if cached is not None and to_row(cached).same_entry(row):
            return cached
        try:
            return from_row(row)
        except PlugyardError:
            return None


def _checked(plugin: RegisteredPlugin) -> RegisteredPlugin:
    if not isinstance(plugin, RegisteredPlugin):
        raise TypeError(f"expected a RegisteredPlugin, got {type(plugin).__name__}")
    # model_construct() can smuggle in any family; the model alone is not enough.
    check_family(plugin.descriptor.family)
    if plugin.source not in _SOURCES or plugin.trust not in _TRUST:
        raise RegistryError(
            f"plugin {plugin.id!r}: unknown source {plugin.source!r} or trust {plugin.trust!r}",
            code="invalid_request",
        )
    undeclared = binding_faults(plugin.descriptor, plugin.trust)
    if plugin.dialect == "shu":
        undeclared += auth_faults(plugin.descriptor)
    if undeclared:
        raise ManifestError(undeclared, path=plugin.location or "")
    digest = content_hash(plugin.descriptor)
    return plugin if plugin.content_hash == digest else copy_with(plugin, content_hash=digest)


def _readable(row: PluginRow) -> RegisteredPlugin | None:
    # A row this version cannot read stays out of memory, as in load().
    try:
        return from_row(row)
    except PlugyardError:
        return None


def _family(name: str) -> Family:
    family = FAMILY_OF_TYPE.get(name, name)
    check_family(family)
    return family  # type: ignore[return-value]


_SOURCES = frozenset(get_args(SourceKind))
_TRUST = frozenset(get_args(Trust))
