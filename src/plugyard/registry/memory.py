"""Incremental sync on start: a plugin folder that has not changed is not read again.

Reading a folder means parsing its manifest and having the runtime check its code (an
in-process plugin is imported); over thousands of folders that is most of a start. So
the store remembers, per folder a start read *cleanly* — every plugin it declared
registered from it and available, no failure reported against it — the fingerprint of
its files (:mod:`.fingerprint`) and the id and content hash of each plugin registered
from it. The next start lists the folders as before (new and removed ones are found as
before), fingerprints each, and for a remembered one whose fingerprint is unchanged and
whose plugins the registry holds as they were registered offers those plugins instead
of reading it.

What a runtime's verdict depends on besides the folder (plugyard's and Python's
versions, the subprocess allowlist, the source's kind and trust) is part of the
fingerprint. A folder with an unavailable plugin or a failure is never remembered, so
it is read and reported again on every start, as before; a folder touched in the last
two seconds neither (see :data:`.fingerprint.SETTLE_NS`). A change outside the folder
that none of these capture (an upgraded library a plugin imports) shows at the plugin's
first call; removing the remembered rows (the ``plugin_folders`` table) reads all again.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from plugyard.registry.fingerprint import Fingerprint, fingerprint
from plugyard.registry.model import LoadFailure, RegisteredPlugin, SourceKind, Trust
from plugyard.registry.registry import Registry
from plugyard.registry.sources import SourceResult
from plugyard.store.folders import FolderMark, FolderMarks


@dataclass(frozen=True, slots=True)
class _Seen:
    fingerprint: Fingerprint
    plugins: tuple[str, ...]
    read: bool  # read this start (else offered as the registry held it)
    stored: FolderMark | None = None  # the mark it was recalled by


class FolderMemory:
    """Remembers plugin folders across starts in ``marks`` (see the module)."""

    def __init__(
        self,
        marks: FolderMarks,
        registry: Registry,
        *,
        context: str,
        clock_ns: Callable[[], int] = time.time_ns,
    ) -> None:
        self._marks = marks
        self._registry = registry
        self._context = context
        self._now = clock_ns()
        self._stored: dict[str, FolderMark] | None = None
        self._seen: dict[str, _Seen] = {}
        self._context_of: dict[tuple[str, str], str] = {}

    def read(
        self,
        manifest: str,
        entries: Sequence[os.DirEntry[str]],
        source: SourceKind,
        trust: Trust,
        load: Callable[[], SourceResult],
    ) -> SourceResult:
        key = manifest
        mark = fingerprint(entries, self._contexts(source, trust), self._now)
        stored = self._remembered().get(key)
        if stored is not None and stored.fingerprint == mark.digest:
            held = self._held_as_marked(key, stored, source, trust)
            if held is not None:
                self._seen[key] = _Seen(mark, tuple(p.id for p in held), False, stored)
                return SourceResult(unchanged=held)
        result = load()
        self._seen[key] = _Seen(mark, tuple(p.id for p in result.plugins), read=True)
        return result

    def settle(self, failures: Sequence[LoadFailure]) -> None:
        """After the sync: remember the folders read cleanly, forget all others."""
        stored = self._remembered()
        failed = {f.source for f in failures}
        keep: dict[str, FolderMark] = {}
        for key, seen in self._seen.items():
            if not seen.fingerprint.settled or key in failed or not seen.plugins:
                continue
            if seen.stored is not None:
                keep[key] = seen.stored
                continue
            held = self._held(key, seen.plugins, None, None)
            if held is not None:
                plugins = tuple((p.id, p.content_hash) for p in held)
                keep[key] = FolderMark(seen.fingerprint.digest, plugins)
        changed = {k: mark for k, mark in keep.items() if stored.get(k) != mark}
        self._marks.save(changed, [k for k in stored if k not in keep])
        self._seen.clear()
        self._stored = None

    def _contexts(self, source: SourceKind, trust: Trust) -> str:
        found = self._context_of.get((source, trust))
        if found is None:
            found = self._context_of[(source, trust)] = f"{self._context}|{source}|{trust}"
        return found

    def _remembered(self) -> dict[str, FolderMark]:
        if self._stored is None:
            self._stored = self._marks.all()
        return self._stored

    def _held_as_marked(
        self, manifest: str, mark: FolderMark, source: SourceKind, trust: Trust
    ) -> tuple[RegisteredPlugin, ...] | None:
        """:meth:`_held` for the plugins of ``mark``, each with the content hash it had
        then: another process may have registered another version of the folder since
        this mark was written."""
        held = []
        find = self._registry.find
        for plugin_id, digest in mark.plugins:
            plugin = find(plugin_id)
            if (
                plugin is None
                or plugin.content_hash != digest
                or plugin.manifest_path != manifest
                or not plugin.available
                or plugin.source != source
                or plugin.trust != trust
            ):
                return None
            held.append(plugin)
        return tuple(held)

    def _held(
        self, manifest: str, ids: Sequence[str], source: SourceKind | None, trust: Trust | None
    ) -> tuple[RegisteredPlugin, ...] | None:
        """The registry's plugins ``ids`` when all came from ``manifest`` (with this
        source and trust, when given) and are available; else ``None``."""
        held = []
        for plugin_id in ids:
            plugin = self._registry.find(plugin_id)
            if (
                plugin is None
                or plugin.manifest_path != manifest
                or not plugin.available
                or (source is not None and plugin.source != source)
                or (trust is not None and plugin.trust != trust)
            ):
                return None
            held.append(plugin)
        return tuple(held)
