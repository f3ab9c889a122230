"""Discovery that learns from use: search ids, accepted calls, feedback and examples.

Every search gets a ``search_id`` that remembers, for a while, who asked what. A call
that names it and succeeds, or feedback with ``helpful: true``, records the request
for the tool called, for that subject; ``helpful: false`` takes the subject's own
record back. Manifest ``examples`` join the same memory (memory.py), with the same
weight, but are read from the registry rather than stored.

Guards (docs/discovery.md): only a named subject teaches; one subject adds at most
:attr:`LearningSettings.per_subject` requests to one tool, and the same request once,
so a flood of feedback moves nothing past that cap; a tool keeps at most
:attr:`LearningSettings.keep` requests, none older than :attr:`LearningSettings.days`.
Search ids live in this process only: a call that reaches another replica than the
search teaches nothing, and feedback there is ``unknown_search``. What is learned is
shared: replicas on one store follow each other's records, removals and purges through
the change log (:meth:`Learning.reconcile`, docs/scaling.md).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from plugyard.discovery import catalog
from plugyard.discovery.embedders import Embedder, Vectors, l2_normalise
from plugyard.discovery.fusion import DEFAULT as FUSION
from plugyard.discovery.fusion import MEMORY_WEIGHT
from plugyard.discovery.lexical import content_word_count, content_words
from plugyard.discovery.memory import Cosines, MemoryChannel, Recall
from plugyard.discovery.remembered import (
    Remembered,
    RememberedRepository,
    SqlRememberedRepository,
)
from plugyard.errors import PlugyardError
from plugyard.manifest.model import PluginDescriptor

#: A remembered request longer than this is cut (like a query, query.MAX_QUERY_CHARS).
MAX_REQUEST_CHARS = 1000
_DAY = 86_400.0
_BATCH = 256


class LearningError(PlugyardError):
    """Feedback discovery cannot take: an unknown search id, or no subject."""

    default_code = "unknown_search"


@dataclass(frozen=True, slots=True)
class LearningSettings:
    """``PLUGYARD_DISCOVERY_LEARNING``, ``…_PER_SUBJECT``, ``…_KEEP``, ``…_DAYS``."""

    enabled: bool = True
    per_subject: int = 20  # requests one subject may add to one tool's memory
    quorum: int = 3  # distinct subjects a tool's learned requests need before they count
    keep: int = 1000  # requests one tool keeps (the oldest go first)
    days: float = 365.0  # requests older than this are forgotten
    search_ttl_s: float = 3600.0  # how long a search id can be named
    searches: int = 100_000  # search ids held at once (the oldest go first)
    weight: float = MEMORY_WEIGHT


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a call or a feedback did to memory.

    ``reason``: ``recorded``, ``duplicate`` (this subject already taught it),
    ``capped`` (this subject's cap for this tool is reached), ``removed`` /
    ``not_remembered`` (helpful: false), ``disabled`` (learning is off)."""

    recorded: bool
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {"recorded": self.recorded, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class _Search:
    subject: str | None
    query: str
    at: float


def _first(*vectors: Vectors | None) -> Vectors:
    return next(v for v in vectors if v is not None)


def _single(request: str) -> bool:
    """Whether a request is short enough to teach one tool. A long message is most often
    several requests at once; filed under each tool it needed, it would lift all of them
    for any request like one of its parts (on Seal-Tools, 3 compound examples a tool cut
    single-tool recall@1 from 0.92 to 0.62). The search side keeps the same bound
    (fusion.Policy.remembers)."""
    return FUSION.remembers(content_word_count(request))


def tool_id(plugin_id: str, operation: str | None) -> str:
    return catalog.doc_id(plugin_id, operation)


class Learning:
    """The memory channel and what feeds it; thread-safe."""

    def __init__(
        self,
        embedder: Embedder,
        repository: RememberedRepository | None = None,
        settings: LearningSettings | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.embedder = embedder
        if repository is None:  # the rows live in an in-memory store of this memory's own
            from plugyard.store.store import Store

            repository = SqlRememberedRepository(Store.open(":memory:"), embedder.dim)
        self.repository: RememberedRepository = repository
        self.settings = settings or LearningSettings()
        self._clock = clock
        self.channel = MemoryChannel(embedder.dim, weight=self.settings.weight)
        self._searches: OrderedDict[str, _Search] = OrderedDict()
        self._examples: dict[str, tuple[Hashable, ...]] = {}  # plugin id -> its keys
        self._lock = threading.RLock()
        self.last: dict[str, Recall] = {}
        self._aged_at = clock()
        # Learned rows: who taught which tool; the vectors of tools short of quorum wait
        # in _dormant (a tool's rows join the channel once enough subjects agree).
        self._taught: dict[str, dict[int, str]] = {}  # tool -> {row id: subject}
        self._tool_of: dict[int, str] = {}
        self._of_plugin: dict[str, set[int]] = {}  # plugin id -> its learned row ids
        self._plugin_of_row: dict[int, str] = {}
        self._dormant: dict[int, Vectors] = {}
        self._active: set[str] = set()
        self._loaded = False  # until load(), the store is read in full when it comes

    # building -----------------------------------------------------------------------

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Requests embedded as the engine embeds a query (with its content-word view)."""
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        vectors = self.embedder.embed(list(texts)).astype(np.float32)
        views = [content_words(t) for t in texts]
        which = [i for i, v in enumerate(views) if v]
        if which:
            vectors[which] += self.embedder.embed([views[i] for i in which])
        return l2_normalise(vectors)

    def load(self, plugins: Iterable[PluginDescriptor]) -> None:
        """Fill memory from the plugins' examples and the stored requests (embedding
        those whose cached vector is missing or from another embedder)."""
        descriptors = list(plugins)
        with self._lock:
            self.channel = MemoryChannel(self.embedder.dim, weight=self.settings.weight)
            self._examples.clear()
            self._put_examples(descriptors)
            self._loaded = True
            if not self.settings.enabled:
                return
            known = {d.id for d in descriptors}
            rows = self.repository.rows()
            cutoff = self._clock() - self.settings.days * _DAY
            stale = [r.id for r in rows if r.plugin_id not in known or r.created_at < cutoff]
            self.repository.delete(stale)
            gone = set(stale)
            rows = [r for r in rows if r.id not in gone]
            made = self._vectors(rows)
            self._taught.clear()
            self._tool_of.clear()
            self._dormant.clear()
            self._active.clear()
            self._of_plugin.clear()
            self._plugin_of_row.clear()
            for r in rows:
                self._taught.setdefault(r.doc_id, {})[r.id] = r.subject
                self._tool_of[r.id] = r.doc_id
                self._of_plugin.setdefault(r.plugin_id, set()).add(r.id)
                self._plugin_of_row[r.id] = r.plugin_id
                self._dormant[r.id] = _first(made.get(r.id), r.vector)
            live = [r for r in rows if self._quorate(r.doc_id)]
            self._active = {r.doc_id for r in live}
            if live:
                matrix = np.vstack([self._dormant.pop(r.id) for r in live])
                keys = [("learned", r.id) for r in live]
                self.channel.add_many(keys, [r.doc_id for r in live], matrix)

    def _vectors(self, rows: Sequence[Remembered]) -> dict[int, Vectors]:
        """Vectors for the rows whose cached one is missing or another embedder's,
        written back so the next reader reuses them."""
        identity = self.embedder.identity
        todo = [r for r in rows if r.vector is None or r.embedder != identity]
        fresh = self.embed([r.query for r in todo])
        self.repository.save_vectors(identity, [(r.id, fresh[i]) for i, r in enumerate(todo)])
        return {r.id: fresh[i] for i, r in enumerate(todo)}

    def _quorate(self, tool: str) -> bool:
        return len(set(self._taught.get(tool, {}).values())) >= self.settings.quorum

    def _learn(self, row: Remembered, vector: Vectors) -> None:
        row_id, tool = row.id, row.doc_id
        self._taught.setdefault(tool, {})[row_id] = row.subject
        self._tool_of[row_id] = tool
        self._of_plugin.setdefault(row.plugin_id, set()).add(row_id)
        self._plugin_of_row[row_id] = row.plugin_id
        if tool in self._active:
            self.channel.add(("learned", row_id), tool, vector)
        else:
            self._dormant[row_id] = vector
            self._settle(tool)

    def _forget(self, ids: Iterable[int]) -> None:
        touched = set()
        for row_id in ids:
            tool = self._tool_of.pop(row_id, None)
            if tool is None:
                continue
            self._taught[tool].pop(row_id, None)
            self._dormant.pop(row_id, None)
            plugin = self._plugin_of_row.pop(row_id, None)
            if plugin is not None:
                self._of_plugin[plugin].discard(row_id)
            self.channel.remove([("learned", row_id)])
            touched.add(tool)
        for tool in touched:
            self._settle(tool)

    def _settle(self, tool: str) -> None:
        """Move a tool's learned rows into the channel or out of it as its quorum
        is reached or lost."""
        rows = self._taught.get(tool, {})
        quorate = self._quorate(tool)
        if quorate and tool not in self._active:
            ids = [i for i in rows if i in self._dormant]
            if ids:
                matrix = np.vstack([self._dormant.pop(i) for i in ids])
                self.channel.add_many([("learned", i) for i in ids], [tool] * len(ids), matrix)
            self._active.add(tool)
        elif not quorate and tool in self._active:
            keys: list[Hashable] = [("learned", i) for i in rows]
            held = self.channel.vectors(keys)
            self.channel.remove(keys)
            for i in rows:
                vector = held.get(("learned", i))
                if vector is not None:
                    self._dormant[i] = vector
            self._active.discard(tool)
        if not rows:
            self._taught.pop(tool, None)

    def _put_examples(self, descriptors: Iterable[PluginDescriptor]) -> None:
        """Each plugin's examples as it lists them now (embedded in batches)."""
        keys: list[Hashable] = []
        tools: list[str] = []
        texts: list[str] = []
        for d in descriptors:
            pairs = [(tool_id(d.id, None), text) for text in d.examples]
            pairs += [(tool_id(d.id, op.id), t) for op in d.operations for t in op.examples]
            pairs = [(tool, text) for tool, text in pairs if _single(text)]
            mine = tuple(("example", tool, text) for tool, text in pairs)
            if self._examples.get(d.id, ()) == mine:
                continue  # unchanged (an availability change, say): nothing to embed
            self.channel.remove(self._examples.pop(d.id, ()))
            if mine:
                self._examples[d.id] = mine
                keys.extend(mine)
                tools.extend(tool for tool, _ in pairs)
                texts.extend(text for _, text in pairs)
        for start in range(0, len(texts), _BATCH):
            part = slice(start, start + _BATCH)
            self.channel.add_many(keys[part], tools[part], self.embed(texts[part]))

    # registry events ----------------------------------------------------------------

    def plugin_changed(self, d: PluginDescriptor) -> None:
        """A plugin registered or replaced: its examples as now; the memory of its
        operations that are gone goes with them."""
        with self._lock:
            self._put_examples([d])
            tools = {tool_id(d.id, None)} | {tool_id(d.id, op.id) for op in d.operations}
            mine = self._of_plugin.get(d.id, set())
            gone = [i for i in mine if self._tool_of.get(i) not in tools]
            if gone:
                self.repository.delete(gone)
                self._forget(gone)

    def plugin_removed(self, plugin_id: str) -> None:
        with self._lock:
            self.channel.remove(self._examples.pop(plugin_id, ()))
            self._forget(self.repository.delete_plugin(plugin_id))

    # other replicas -----------------------------------------------------------------

    def reconcile(self, tools: Iterable[str] | None = None) -> None:
        """Make what is learned for ``tools`` (``None``: every tool) what the store
        holds now, after another replica recorded, removed or purged requests (the
        change log names the tools). Rows held already stay as they are; new ones join
        with their stored vector when it is this embedder's, and each tool's quorum is
        settled again, counting the subjects of every replica. Before :meth:`load`
        there is nothing to reconcile: it reads the store itself."""
        with self._lock:
            if not (self._loaded and self.settings.enabled):
                return
            # Ids first: only the rows this replica lacks are read with their vectors.
            chosen = None if tools is None else set(tools)
            stored = self.repository.ids(chosen)
            held = (
                list(self._tool_of)
                if chosen is None
                else [i for tool in chosen for i in self._taught.get(tool, {})]
            )
            self._forget([i for i in held if i not in stored])
            new = self.repository.by_ids(i for i in stored if i not in self._tool_of)
            made = self._vectors(new)
            for r in new:
                self._learn(r, _first(made.get(r.id), r.vector))

    # search -------------------------------------------------------------------------

    def lift(self, query: Vectors, cosine: Cosines | None = None) -> Mapping[str, float]:
        """The engine's hook: extra score per tool for a query vector (``cosine``: the
        query's dense cosine with a tool's document). What it found is kept in
        :attr:`last` for the matches' ``why`` (the service holds its lock from this call
        until it reads it)."""
        with self._lock:
            self.last = self.channel.recall(query, cosine)
        return {tool: r.lift for tool, r in self.last.items()}

    def note_search(self, subject: str | None, query: str) -> str:
        """A new search id for ``query`` asked by ``subject``."""
        search_id = secrets.token_urlsafe(12)
        now = self._clock()
        with self._lock:
            self._searches[search_id] = _Search(subject, query[:MAX_REQUEST_CHARS], now)
            while len(self._searches) > self.settings.searches:
                self._searches.popitem(last=False)
        return search_id

    def knows(self, search_id: object, subject: str | None) -> bool:
        """Whether ``search_id`` names a live search of ``subject``'s."""
        return self._search(search_id, subject) is not None

    def _search(self, search_id: object, subject: str | None) -> _Search | None:
        if not isinstance(search_id, str):
            return None
        with self._lock:
            found = self._searches.get(search_id)
        if found is None or found.subject != subject:
            return None
        if self._clock() - found.at > self.settings.search_ttl_s:
            return None
        return found

    # learning -----------------------------------------------------------------------

    def accepted(
        self, search_id: object, subject: str | None, plugin_id: str, operation: str | None
    ) -> Outcome | None:
        """A call named ``search_id`` and succeeded: remember its request. ``None``
        when the search id is unknown or there is no subject (the call is not at
        fault, so nothing is raised)."""
        found = self._search(search_id, subject)
        if found is None or subject is None:
            return None
        return self._record(subject, found.query, plugin_id, operation)

    def feedback(
        self,
        search_id: object,
        subject: str | None,
        plugin_id: str,
        operation: str | None,
        helpful: bool,
    ) -> Outcome:
        """Explicit feedback; the caller checked that ``subject`` may call the tool."""
        if not subject:
            raise LearningError("feedback needs an authenticated subject", code="learning_refused")
        found = self._search(search_id, subject)
        if found is None:
            raise LearningError("unknown or expired search id")
        if helpful:
            return self._record(subject, found.query, plugin_id, operation)
        if not self.settings.enabled:
            return Outcome(False, "disabled")
        with self._lock:
            ids = self.repository.remove(subject, tool_id(plugin_id, operation), found.query)
            self._forget(ids)
        return Outcome(False, "removed" if ids else "not_remembered")

    def _record(self, subject: str, query: str, plugin_id: str, operation: str | None) -> Outcome:
        s = self.settings
        if not s.enabled:
            return Outcome(False, "disabled")
        if not _single(query):
            return Outcome(False, "too_long")
        tool = tool_id(plugin_id, operation)
        with self._lock:
            if self.repository.count(subject, tool) >= s.per_subject:
                return Outcome(False, "capped")
            vector = self.embed([query])[0]
            row = Remembered(
                0, plugin_id, tool, subject, query, self._clock(), self.embedder.identity, vector
            )
            made = self.repository.add(row)
            if made is None:
                return Outcome(False, "duplicate")
            self._learn(made, vector)
            self._retain(tool)
        return Outcome(True, "recorded")

    def _retain(self, tool: str) -> None:
        """Keep the tool within ``keep`` and, every hour, everything within ``days``."""
        now = self._clock()
        old: list[int] = []
        if now - self._aged_at > 3600:
            self._aged_at = now
            old = self.repository.created_before(now - self.settings.days * _DAY)
        if len(self._taught.get(tool, {})) > self.settings.keep:
            rows = self.repository.rows(doc_id=tool)
            old += [r.id for r in rows[: max(0, len(rows) - self.settings.keep)]]
        if old:
            self.repository.delete(old)
            self._forget(old)

    # administration -----------------------------------------------------------------

    def remembered(self, plugin_id: str, operation: str | None = None) -> list[Remembered]:
        """A plugin's (or one tool's) learned requests, oldest first: for admins only,
        since they are what callers asked."""
        doc = tool_id(plugin_id, operation) if operation is not None else None
        return self.repository.rows(plugin_id=plugin_id, doc_id=doc)

    def purge(self, plugin_id: str, operation: str | None = None) -> int:
        doc = tool_id(plugin_id, operation) if operation is not None else None
        with self._lock:
            ids = self.repository.delete_plugin(plugin_id, doc)
            self._forget(ids)
        return len(ids)
