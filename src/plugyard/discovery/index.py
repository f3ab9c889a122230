"""The engine's index kept equal to a set of registered plugins.

:class:`SyncedIndex` turns plugins into entries (``catalog``), remembers which entries
belong to which plugin and the plugin as last seen (for filters, without a database
read per query), and upserts by content hash: an entry whose text did not change is
never embedded again. It returns the vectors it made so the caller can persist them;
persistence and locking are the service's business, so this class is not thread-safe.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from plugyard.discovery import catalog
from plugyard.discovery.candidates import EVERYTHING, Scope
from plugyard.discovery.catalog import EntryKey
from plugyard.discovery.cores import idle_cores
from plugyard.discovery.documents import Document
from plugyard.discovery.embedders import Embedder, Vectors, embed_bulk
from plugyard.discovery.engine import HybridIndex
from plugyard.discovery.engine import Match as Hit
from plugyard.discovery.vector_store import StoredVector
from plugyard.registry.model import RegisteredPlugin

log = logging.getLogger("plugyard.discovery")

#: An entry about to be written: what it stands for, its text, its content hash.
_Staged = tuple[EntryKey, Document, str]
#: ``progress(done, total)`` after each batch of entries during a build.
Progress = Callable[[int, int], None]
BATCH = 256
#: Fewer entries to embed than this are not worth watching the machine for threads.
MANY = 64


class QueryMemo:
    """An embedder that remembers its last few short inputs.

    The service may ask the engine twice for one query (to widen the candidate pool
    when a filter or many entries of one plugin leave fewer than k plugins), and the
    same question often comes for ``search`` and then ``tools_for``; the second time
    costs no model run. Documents pass straight through.
    """

    def __init__(self, inner: Embedder, size: int = 256, max_texts: int = 4) -> None:
        self.inner = inner
        self._size = size
        self._max_texts = max_texts
        self._memo: OrderedDict[tuple[str, ...], Vectors] = OrderedDict()

    @property
    def identity(self) -> str:
        return self.inner.identity

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        if len(texts) > self._max_texts:
            return self.inner.embed(texts)
        key = tuple(texts)
        hit = self._memo.get(key)
        if hit is None:
            hit = self.inner.embed(texts)
            self._memo[key] = hit
            if len(self._memo) > self._size:
                self._memo.popitem(last=False)
        else:
            self._memo.move_to_end(key)
        return hit.copy()

    def embed_bulk(self, texts: Sequence[str], workers: int) -> Vectors:
        return embed_bulk(self.inner, texts, workers)


@dataclass(frozen=True, slots=True)
class Changes:
    """What a sync did: vectors to persist, entries to forget, how many embedded."""

    saved: tuple[StoredVector, ...] = ()
    removed: tuple[str, ...] = ()
    embedded: int = 0


class SyncedIndex:
    def __init__(
        self, embedder: Embedder, *, cores: Callable[[], int] = idle_cores, **engine_options: Any
    ) -> None:
        """``cores()`` says how many threads a build may embed on; asked once a build."""
        self.embedder = QueryMemo(embedder)
        self._cores = cores
        self.engine = HybridIndex(self.embedder, **engine_options)
        self._keys: dict[str, EntryKey] = {}
        self._entries: dict[str, tuple[str, ...]] = {}  # plugin id -> its doc ids
        self._hashes: dict[str, str] = {}
        self._plugins: dict[str, RegisteredPlugin] = {}
        self._down: set[str] = set()

    @property
    def identity(self) -> str:
        return self.embedder.identity

    def __len__(self) -> int:
        return len(self._keys)

    @property
    def plugin_count(self) -> int:
        return len(self._plugins)

    @property
    def unavailable(self) -> int:
        """How many indexed plugins are marked unavailable."""
        return len(self._down)

    def key(self, doc_id: str) -> EntryKey:
        return self._keys[doc_id]

    def plugin(self, plugin_id: str) -> RegisteredPlugin | None:
        return self._plugins.get(plugin_id)

    def hashes(self) -> dict[str, str]:
        return dict(self._hashes)

    # writes -------------------------------------------------------------------------

    def sync(
        self,
        plugins: Iterable[RegisteredPlugin],
        precomputed: Mapping[str, tuple[str, Vectors]] | None = None,
        progress: Progress | None = None,
    ) -> Changes:
        """Make the index hold exactly ``plugins``; ``precomputed`` vectors (stored by
        the same embedder) are reused where their hash matches."""
        wanted = {p.id: p for p in plugins}
        removed: list[str] = []
        for plugin_id in [p for p in self._plugins if p not in wanted]:
            removed.extend(self.remove(plugin_id))
        pending: list[tuple[EntryKey, Document]] = []
        for plugin in wanted.values():
            pairs, stale = self._stage(plugin)
            pending.extend(pairs)
            removed.extend(stale)
        # Entries with a stored vector go in as one batch (the engine then builds its
        # ANN graph in one pass); those to embed go in batches, reporting progress.
        ready: list[_Staged] = []
        todo: list[_Staged] = []
        for key, doc in pending:
            digest = doc.content_hash()
            known = precomputed.get(doc.doc_id) if precomputed else None
            (ready if known is not None and known[0] == digest else todo).append((key, doc, digest))
        total = len(pending)
        steps = [self._write(ready, precomputed)]
        if progress is not None:
            progress(len(ready), total)
        # Decided once: asked per chunk, a build's own load would count against it.
        workers = self._cores() if len(todo) >= MANY else 1
        for start in range(0, len(todo), BATCH):
            steps.append(self._write(todo[start : start + BATCH], None, workers))
            if progress is not None:
                progress(len(ready) + min(start + BATCH, len(todo)), total)
        saved = tuple(v for step in steps for v in step.saved)
        return Changes(saved, tuple(removed), sum(step.embedded for step in steps))

    def upsert(self, plugin: RegisteredPlugin) -> Changes:
        """Index one plugin as it is now (its removed operations are removed)."""
        pairs, stale = self._stage(plugin)
        written = self._write([(key, doc, doc.content_hash()) for key, doc in pairs], None)
        return Changes(written.saved, stale, written.embedded)

    def remove(self, plugin_id: str) -> tuple[str, ...]:
        gone = self._entries.pop(plugin_id, ())
        self._plugins.pop(plugin_id, None)
        self._down.discard(plugin_id)
        self.engine.delete(gone)
        for doc_id in gone:
            self._keys.pop(doc_id, None)
            self._hashes.pop(doc_id, None)
        return gone

    def _stage(
        self, plugin: RegisteredPlugin
    ) -> tuple[list[tuple[EntryKey, Document]], tuple[str, ...]]:
        """Record ``plugin`` and drop its entries that no longer exist; returns its
        entries and the dropped doc ids."""
        pairs = []
        for key, doc in catalog.documents(plugin.descriptor):
            owner = self._keys.get(doc.doc_id)
            if owner is not None and owner.plugin_id != plugin.id:
                # "a/b" the plugin and operation "b" of plugin "a": the first one keeps it.
                log.warning("index entry %r of %r is taken by %r", doc.doc_id, plugin.id, owner)
                continue
            pairs.append((key, doc))
        ids = tuple(doc.doc_id for _, doc in pairs)
        keep = set(ids)
        stale = tuple(d for d in self._entries.get(plugin.id, ()) if d not in keep)
        self.engine.delete(stale)
        for doc_id in stale:
            self._keys.pop(doc_id, None)
            self._hashes.pop(doc_id, None)
        self._entries[plugin.id] = ids
        self._plugins[plugin.id] = plugin
        if plugin.available:
            self._down.discard(plugin.id)
        else:
            self._down.add(plugin.id)
        return pairs, stale

    def _write(
        self,
        staged: Sequence[_Staged],
        precomputed: Mapping[str, tuple[str, Vectors]] | None,
        workers: int = 1,
    ) -> Changes:
        changed = [s for s in staged if self._hashes.get(s[1].doc_id) != s[2]]
        if not changed:
            return Changes()
        docs = [doc for _, doc, _ in changed]
        embedded = self.engine.upsert(docs, precomputed, workers)
        saved = []
        for key, doc, digest in changed:
            self._keys[doc.doc_id] = key
            self._hashes[doc.doc_id] = digest
            known = precomputed.get(doc.doc_id) if precomputed else None
            if known is None or known[0] != digest:
                vector = self.engine.vector(doc.doc_id)
                saved.append(StoredVector(doc.doc_id, key.plugin_id, digest, vector))
        return Changes(tuple(saved), (), embedded)

    # reads --------------------------------------------------------------------------

    def search(
        self,
        query: str,
        fetch: int,
        allowed: Callable[[str], bool] | None,
        scope: Scope = EVERYTHING,
    ) -> list[Hit]:
        return self.engine.search(query, fetch, allowed=allowed, scope=scope)

    def doc_ids(self) -> Iterable[str]:
        return self._keys.keys()
