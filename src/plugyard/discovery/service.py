"""Plugin search over a live registry: ``search`` and ``tools_for``.

The service builds its index from the registry (reusing vectors the store holds for
the same text and embedder), follows every registry change, and answers from memory:
a query reads no database. Results are plugins, each with its best operation; what
the caller's filters or rights exclude is never returned, nor counted.

Threads: one lock guards the index. A registry change never waits for it: the event is
queued and applied by whoever holds the lock next (before any later search), so a
long rebuild does not stall registrations.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from plugyard.discovery.candidates import Scope
from plugyard.discovery.catalog import EntryKey
from plugyard.discovery.documents import Document
from plugyard.discovery.embedders import Embedder, floor_of, topical
from plugyard.discovery.engine import HybridIndex
from plugyard.discovery.engine import Match as Hit
from plugyard.discovery.index import Changes, Progress, SyncedIndex
from plugyard.discovery.learning import Learning, Outcome, tool_id
from plugyard.discovery.query import (
    CanSee,
    Filters,
    Match,
    Matches,
    allow_all,
    check_k,
    check_query,
)
from plugyard.discovery.vector_store import SqlVectorRepository, VectorRepository
from plugyard.errors import ExportError, NotFoundError
from plugyard.manifest.exporters import functions
from plugyard.manifest.exporters.openai_strict import strict_tools
from plugyard.manifest.model import Operation, PluginDescriptor
from plugyard.registry.model import RegistryEvent
from plugyard.registry.registry import Registry

#: Sets of documents outside the catalog kept embedded (:meth:`DiscoveryService.rank`):
#: a client sends its tools again with each turn of a conversation.
RANKED_SETS = 16

_TOOL_FORMATS: dict[str, Callable[[PluginDescriptor, Operation, str], dict[str, Any]]] = {
    "openai": functions.openai_tool,
    "anthropic": functions.anthropic_tool,
    "mcp": functions.mcp_tool,
}


class DiscoveryService:
    def __init__(
        self,
        registry: Registry,
        embedder: Embedder,
        vectors: VectorRepository | None = None,
        learning: Learning | None = None,
        **engine_options: Any,
    ) -> None:
        self.registry = registry
        self.embedder = embedder
        self._floor = floor_of(embedder)  # when a match counts as relevant
        #: Memory of what answered which request (learning.py, docs/discovery.md).
        self.learning = learning if learning is not None else Learning(embedder)
        if vectors is None:  # the rows live in an in-memory store of this service's own
            from plugyard.store.store import Store

            vectors = SqlVectorRepository(Store.open(":memory:"))
        self.vectors: VectorRepository = vectors
        self._options = engine_options
        self._index: SyncedIndex | None = None
        self._lock = threading.Lock()
        self._build_lock = threading.RLock()
        self._pending: deque[RegistryEvent] = deque()
        self._unsubscribe: Callable[[], None] | None = None
        self._ranked: OrderedDict[tuple[str, ...], HybridIndex] = OrderedDict()
        self._ranked_lock = threading.Lock()

    # lifetime -----------------------------------------------------------------------

    def start(self, progress: Progress | None = None) -> Changes:
        """Follow the registry and build the index (reusing stored vectors)."""
        return self._build(reuse=True, progress=progress)

    def rebuild(self, progress: Progress | None = None) -> Changes:
        """Embed every entry again, whatever the store holds, and replace the index."""
        return self._build(reuse=False, progress=progress)

    def close(self) -> None:
        with self._build_lock:
            if self._unsubscribe is not None:
                self._unsubscribe()
                self._unsubscribe = None

    @property
    def built(self) -> bool:
        """Whether the index exists in this process (the first search builds it)."""
        return self._index is not None

    @property
    def index(self) -> SyncedIndex:
        """The index, built on first use (by one thread; the others wait for it)."""
        index = self._index
        if index is None:
            with self._build_lock:
                if self._index is None:
                    self.start()
                index = self._index
        assert index is not None
        return index

    def _build(self, *, reuse: bool, progress: Progress | None) -> Changes:
        with self._build_lock:
            if self._unsubscribe is None:
                self._unsubscribe = self.registry.subscribe(self._on_event)
            # Built aside, so searches go on against the old index meanwhile.
            fresh = SyncedIndex(self.embedder, **self._options)
            fresh.engine.lift = self.learning.lift
            # A request is embedded as its search was: the index's memo has it.
            self.learning.embedder = fresh.embedder
            stored = self.vectors.load(fresh.identity) if reuse else None
            made = fresh.sync(self.registry.list(), stored, progress)
            self._persist(made)
            with self._lock:
                # What changed while building is in the registry now: sync to it, and
                # the queued events have nothing left to say.
                self._pending.clear()
                plugins = self.registry.list()
                caught_up = fresh.sync(plugins)
                self._persist(caught_up)
                self.learning.load(p.descriptor for p in plugins)
                self._index = fresh
                # Rows of entries that no longer exist (under any embedder).
                held = set(fresh.hashes())
                self.vectors.delete([d for d in self.vectors.doc_ids() if d not in held])
            self._drain()
        embedded = made.embedded + caught_up.embedded
        return Changes(made.saved + caught_up.saved, caught_up.removed, embedded)

    # registry events ----------------------------------------------------------------

    def _on_event(self, event: RegistryEvent) -> None:
        self._pending.append(event)
        self._drain()

    def _drain(self) -> None:
        # Whoever fails to take the lock leaves the event to the holder, which drains
        # again right after releasing it, so no event waits for a later call.
        while self._pending and self._lock.acquire(blocking=False):
            try:
                self._apply_pending()
            finally:
                self._lock.release()

    def _apply_pending(self) -> None:
        index = self._index
        while self._pending:
            event = self._pending.popleft()
            if index is None:
                continue  # the first build reads the registry itself
            if event.plugin is None:
                self.vectors.delete(index.remove(event.plugin_id))
                self.learning.plugin_removed(event.plugin_id)
            else:
                self.learning.plugin_changed(event.plugin.descriptor)
                # Also for availability: the text hashes match, so nothing is embedded
                # and only the plugin the filters read is replaced.
                self._persist(index.upsert(event.plugin))

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with self._lock:
            self._apply_pending()
            yield
        self._drain()

    def _persist(self, changes: Changes) -> None:
        if changes.removed:
            self.vectors.delete(changes.removed)
        if changes.saved:
            self.vectors.save(self.embedder.identity, changes.saved)

    # search -------------------------------------------------------------------------

    def search(
        self,
        query: object,
        k: object = 5,
        filters: Filters | None = None,
        *,
        subject: str | None = None,
    ) -> Matches:
        """The best ``k`` plugins for ``query`` that ``filters`` admit, best first;
        its ``search_id`` lets a call or feedback by ``subject`` teach discovery."""
        text, want = check_query(query), check_k(k)
        found = self._search(text, want, filters or Filters())
        return Matches(found, search_id=self.learning.note_search(subject, text))

    def rank(self, query: str, documents: Sequence[Document]) -> list[Hit]:
        """``documents`` that are not in the catalog (a client's own tools) ranked for
        ``query`` as the catalog's entries are, best first, each marked relevant or not
        by the embedder's floor. The last :data:`RANKED_SETS` sets stay embedded."""
        if not documents or not query.strip():
            return []
        key = tuple(sorted(f"{d.doc_id}\0{d.content_hash()}" for d in documents))
        with self._ranked_lock:
            index = self._ranked.pop(key, None)
            if index is None:
                index = HybridIndex(self.embedder)
                index.upsert(documents)
            self._ranked[key] = index
            while len(self._ranked) > RANKED_SETS:
                self._ranked.popitem(last=False)
            return index.search(query, k=len(index))

    def _search(self, text: str, want: int, filters: Filters) -> list[Match]:
        families = filters.families()
        index = self.index
        with self._locked():
            index = self._index or index
            visible = _Visibility(index, filters, families)
            total = len(index)
            # Enough entries for `want` plugins at this catalog's entries per plugin;
            # rarely short (then widened: the query's vector is memoised).
            per_plugin = total / max(1, index.plugin_count)
            fetch = min(total, math.ceil(want * per_plugin) + 2)
            allowed = None if visible.everything() else visible.entry
            scope = visible.scope()
            while total:
                hits = index.search(text, fetch, allowed, scope)
                matches = self._aggregate(index, hits, want, visible)
                if len(matches) >= want or fetch >= total or len(hits) < fetch:
                    if filters.relevant_only:
                        return [m for m in matches if m.relevant]
                    return matches
                fetch = min(total, fetch * 4)
        return []

    def _aggregate(
        self, index: SyncedIndex, hits: list[Hit], k: int, visible: _Visibility
    ) -> list[Match]:
        best: dict[str, tuple[Hit, str | None]] = {}
        # The floor judges a plugin on the evidence of all its entries: its own entry
        # lists what its operations' entries do not ("ft", "cm", "grams" in a unit
        # converter's long description), while an operation's entry may score higher on
        # meaning — "I need 250 grams in ounces" matches the words of one and the
        # meaning of the other, and clears the floor with neither alone.
        floor = self._floor
        cleared: set[str] = set()
        # best cosine, best keyword match, most words matched
        evidence: dict[str, tuple[float, float, int]] = {}
        for hit in hits:  # best first: the first entry of a plugin sets its score
            key = index.key(hit.doc_id)
            if hit.relevant:
                cleared.add(key.plugin_id)
            elif floor is not None:
                cosine, lexical, words = evidence.get(key.plugin_id, (-1.0, -math.inf, 0))
                matched = topical(hit.terms)
                cosine = max(cosine, hit.cosine)
                lexical = max(lexical, hit.lexical if matched else -math.inf)
                words = max(words, matched)
                evidence[key.plugin_id] = (cosine, lexical, words)
                if floor.admits(cosine, lexical, words):
                    cleared.add(key.plugin_id)
            seen = best.get(key.plugin_id)
            if seen is None:
                if len(best) < k:
                    best[key.plugin_id] = (hit, key.operation)
            elif seen[1] is None and key.operation is not None:
                best[key.plugin_id] = (seen[0], key.operation)
        out = []
        for plugin_id, (hit, operation) in best.items():
            plugin = index.plugin(plugin_id)
            assert plugin is not None
            why = hit.why
            memory = self.learning.last.get(hit.doc_id) or (
                self.learning.last.get(tool_id(plugin_id, operation)) if operation else None
            )
            if memory is not None and memory.similar:
                why = f"{why}; answered {memory.similar} similar requests"
            via = index.key(hit.doc_id).operation
            if via is not None:
                why = f"operation {via!r}: {why}"
            elif operation is not None:
                why = f"plugin: {why}; best operation {operation!r}"
            else:
                ops = visible.operations(plugin_id)
                if len(ops) == 1:
                    operation = ops[0]
                    why = f"plugin: {why}; its only operation {operation!r}"
                else:
                    why = f"plugin: {why}"
            # What answered similar requests is relevant whatever its text says.
            relevant = plugin_id in cleared or bool(memory is not None and memory.similar)
            out.append(Match(plugin, operation, hit.score, why, relevant))
        return out

    # learning -----------------------------------------------------------------------

    def accepted(
        self, search_id: object, subject: str | None, plugin_id: str, operation: str | None
    ) -> Outcome | None:
        """A call that named ``search_id`` succeeded: remember its request for the tool
        (``None``: nothing to learn — no such search of this subject's)."""
        return self.learning.accepted(search_id, subject, plugin_id, operation)

    def feedback(
        self,
        search_id: object,
        plugin_id: str,
        operation: str | None = None,
        *,
        helpful: bool = True,
        subject: str | None = None,
        can_see: CanSee = allow_all,
    ) -> Outcome:
        """Say whether a plugin (an operation) answered the search's request.

        A plugin that is not registered, or that ``can_see`` hides, is
        ``plugin_not_found``; an operation it lacks is ``operation_not_found``."""
        index = self.index
        with self._locked():
            plugin = (self._index or index).plugin(plugin_id)
        if plugin is None or not can_see(plugin_id, None):
            raise NotFoundError(f"no plugin {plugin_id!r}")
        if operation is not None and plugin.descriptor.operation(operation) is None:
            raise NotFoundError(f"{plugin_id!r} has no operation {operation!r}",
                                code="operation_not_found")  # fmt: skip
        ops = plugin.descriptor.operations
        if not can_see(plugin_id, operation) or (
            ops and not any(can_see(plugin_id, op.id) for op in ops)
        ):
            raise NotFoundError(f"no plugin {plugin_id!r}")
        return self.learning.feedback(search_id, subject, plugin_id, operation, helpful)

    def purge_memory(self, plugin_id: str, operation: str | None = None) -> int:
        """Forget the requests learned for a plugin (or one operation); the count."""
        return self.learning.purge(plugin_id, operation)

    def remembered_changed(self, tools: Sequence[str] | None = None) -> None:
        """Another replica changed what is learned for ``tools`` (``None``: anything,
        its changes could not be listed): follow the store (the change log's
        ``remembered_requests`` topic, docs/scaling.md)."""
        self.learning.reconcile(tools)

    def remembered_count(self, plugin_id: str, operation: str | None = None) -> int:
        """How many requests memory holds for a tool (examples included)."""
        return self.learning.channel.count(tool_id(plugin_id, operation))

    def tools_for(
        self,
        query: object,
        k: object = 5,
        format: str = "openai",
        filters: Filters | None = None,
        *,
        strict: bool = False,
    ) -> list[dict[str, Any]]:
        """Function-calling definitions of the operations ``search`` found: each
        match's operation, or every operation the caller may call when the plugin
        matched as a whole. Names are unique within the answer and the same ones
        ``export_tools`` gives (at most 64 characters); ``strict`` as there."""
        make = _TOOL_FORMATS.get(format)
        if make is None:
            raise ExportError(f"unknown tool format {format!r}; one of {functions.FORMATS}")
        filters = filters or Filters()
        pairs: list[tuple[PluginDescriptor, Operation]] = []
        for match in self._search(check_query(query), check_k(k), filters):
            d = match.plugin.descriptor
            wanted = (
                [match.operation]
                if match.operation is not None
                else [op.id for op in d.operations if filters.can_see(d.id, op.id)]
            )
            pairs.extend((d, op) for op in d.operations if op.id in wanted)
        names = functions.tool_names(pairs)
        tools = [make(d, op, names[functions.full_id(d, op)]) for d, op in pairs]
        return strict_tools(tools, format) if strict else tools


class _Visibility:
    """Per-query memo of what the filters and the caller's rights let through."""

    def __init__(
        self, index: SyncedIndex, filters: Filters, families: frozenset[str] | None
    ) -> None:
        self._index = index
        self._filters = filters
        self._families = families
        self._plugins: dict[str, bool] = {}
        self._ops: dict[str, tuple[str, ...]] = {}

    def everything(self) -> bool:
        """No filter and no right can exclude anything: skip the per-entry check."""
        f = self._filters
        return (
            f.can_see is allow_all
            and self._families is None
            and f.capability is None
            and (f.include_unavailable or self._index.unavailable == 0)
        )

    def scope(self) -> Scope:
        """The same conditions for a dense source that filters where it searches:
        the plugin-level ones as they are, the rights as the entries they admit."""
        f = self._filters

        listed: list[frozenset[str]] = []

        def entries() -> frozenset[str]:
            # Once per search, however many times the pool is widened or split.
            if not listed:
                listed.append(frozenset(d for d in self._index.doc_ids() if self.entry(d)))
            return listed[0]

        rights = None if f.can_see is allow_all else entries
        return Scope(self._families, f.capability, f.include_unavailable, rights)

    def operations(self, plugin_id: str) -> tuple[str, ...]:
        ops = self._ops.get(plugin_id)
        if ops is None:
            plugin = self._index.plugin(plugin_id)
            can_see = self._filters.can_see
            ops = tuple(
                op.id
                for op in (plugin.descriptor.operations if plugin is not None else ())
                if can_see(plugin_id, op.id)
            )
            self._ops[plugin_id] = ops
        return ops

    def plugin(self, plugin_id: str) -> bool:
        ok = self._plugins.get(plugin_id)
        if ok is None:
            plugin = self._index.plugin(plugin_id)
            ok = (
                plugin is not None
                and self._filters.admits(plugin, self._families)
                and self._filters.can_see(plugin_id, None)
                # A plugin whose every operation is closed to the caller is not shown.
                and (not plugin.descriptor.operations or bool(self.operations(plugin_id)))
            )
            self._plugins[plugin_id] = ok
        return ok

    def entry(self, doc_id: str) -> bool:
        key: EntryKey = self._index.key(doc_id)
        if not self.plugin(key.plugin_id):
            return False
        return key.operation is None or key.operation in self.operations(key.plugin_id)
