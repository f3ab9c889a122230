"""Hybrid retrieval over plain documents: the engine the registry wires in.

Per document, each field (name, description, details; an absent one borrows
the next shorter, see documents.py) is embedded and the vectors are averaged;
the inner product with that mean equals the mean of the per-field
similarities, so the multi-vector scoring that won on DEV costs one row per
document. A query is embedded twice, as written and without function words
(lexical.content_words), and the two vectors are added. The dense score and two
BM25 scores (per field summed, and over the whole text) are z-scored over the whole
catalog and combined convexly, with weights that depend on the query's length
(fusion.Policy).
Above `ann_threshold` documents the dense candidates come from HNSW instead of
a full product, with the catalog statistics still exact
(vectors.VectorRows.score_stats); a `dense_source` (candidates.py) may take the
place of the in-process graph, with the search's scope applied where it searches.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from plugyard.discovery import fusion
from plugyard.discovery.candidates import EVERYTHING, DenseSource, Scope
from plugyard.discovery.documents import FIELDS, Document
from plugyard.discovery.embedders import Embedder, Vectors, embed_bulk, floor_of, topical
from plugyard.discovery.fusion import Scores
from plugyard.discovery.lexical import FieldedBM25, content_word_count, content_words
from plugyard.discovery.memory import Cosines
from plugyard.discovery.vectors import HnswIndex, VectorRows, top_k


@dataclass(frozen=True, slots=True)
class Match:
    """One result: fused score and the evidence behind it."""

    doc_id: str
    score: float
    dense: float  # standard deviations above the catalog mean, dense channel
    lexical: float  # same, BM25 channel
    terms: tuple[str, ...]  # stemmed query terms found in the document
    cosine: float = 1.0  # the raw dense similarity
    relevant: bool = True  # clears the embedder's relevance floor (embedders.Floor)

    @property
    def why(self) -> str:
        words = ", ".join(self.terms) if self.terms else "none"
        return f"semantic {self.dense:+.1f}σ, keywords {self.lexical:+.1f}σ (matched: {words})"


@dataclass(frozen=True, slots=True)
class _Channels:
    dense: Scores  # z-scored over the catalog
    lexical: Scores  # per-field BM25, z-scored
    whole: Scores  # whole-text BM25, z-scored
    raw: Scores  # the dense cosines


class HybridIndex:
    """Mutable hybrid index keyed by `doc_id`; not thread-safe."""

    def __init__(
        self,
        embedder: Embedder,
        *,
        policy: fusion.Policy = fusion.DEFAULT,
        ann_threshold: int = 20_000,
        candidates: int = 100,
        query_view: bool = True,
        dense_source: DenseSource | None = None,
    ) -> None:
        self.embedder = embedder
        self._floor = floor_of(embedder)
        self.policy = policy
        self.query_view = query_view
        self.ann_threshold = ann_threshold
        self.candidates = candidates
        self._vectors = VectorRows(embedder.dim)
        self._lexical = FieldedBM25()
        self._ids: list[str] = []
        self._rows: dict[str, int] = {}
        self._hashes: dict[str, str] = {}
        self._ann: HnswIndex | None = None
        self._source = dense_source
        #: Extra score per doc_id for a query vector, added to the fused score (the
        #: memory channel, memory.py); its entries join the candidate pool. It is given
        #: the query's dense cosine with any documents it names.
        self.lift: Callable[[Vectors, Cosines], Mapping[str, float]] | None = None

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._rows

    @property
    def identity(self) -> str:
        return self.embedder.identity

    def hashes(self) -> dict[str, str]:
        """doc_id -> content hash, for syncing with a registry."""
        return dict(self._hashes)

    def vector(self, doc_id: str) -> Vectors:
        """The stored document vector, for persisting next to its hash."""
        return np.array(self._vectors.matrix[self._rows[doc_id]], dtype=np.float32)

    def embed_document(self, doc: Document) -> Vectors:
        return np.asarray(self._embed_many([doc])[0], dtype=np.float32)

    def _embed_many(self, docs: list[Document], workers: int = 1) -> Vectors:
        # A borrowed field repeats a text: embed it once and count it twice. A text
        # that several documents share (a common description) is embedded once too.
        unique: dict[str, int] = {}
        slots: list[int] = []
        owners: list[int] = []
        weights: list[float] = []
        for i, doc in enumerate(docs):
            counts: dict[str, int] = {}
            for text in doc.filled_fields().values():
                if text:
                    counts[text] = counts.get(text, 0) + 1
            for text, n in counts.items():
                slots.append(unique.setdefault(text, len(unique)))
                owners.append(i)
                weights.append(float(n))
        out = np.zeros((len(docs), self.embedder.dim), dtype=np.float32)
        if not slots:
            return out
        w = np.asarray(weights, dtype=np.float32)
        field_vectors = embed_bulk(self.embedder, list(unique), workers)[np.asarray(slots)]
        field_vectors *= w[:, None]
        totals = np.bincount(owners, weights=w, minlength=len(docs)).astype(np.float32)
        np.add.at(out, np.asarray(owners), field_vectors)
        return (out / np.maximum(totals, 1.0)[:, None]).astype(np.float32)

    def _embed_queries(self, queries: list[str]) -> Vectors:
        """One vector per query; the whole query (first) also gets its
        content-word view added. The view goes in a call of its own: batched
        with the query it is padded to the query's length, which cost more
        than two calls (MiniLM int8, p50 5.3 ms against 4.2 ms)."""
        vectors = self.embedder.embed(queries)
        view = content_words(queries[0]) if self.query_view else ""
        if not view:
            return vectors
        whole = vectors[0] + self.embedder.embed([view])[0]
        vectors = vectors.copy()
        vectors[0] = whole / max(float(np.linalg.norm(whole)), 1e-12)
        return vectors

    def upsert(
        self,
        docs: Iterable[Document],
        precomputed: Mapping[str, tuple[str, Vectors]] | None = None,
        workers: int = 1,
    ) -> int:
        """Add or replace documents; returns how many needed embedding.

        Unchanged documents (same content hash) are skipped. `precomputed`
        maps doc_id -> (content hash, vector) as stored earlier by the same
        embedder; a vector is reused only if its hash still matches. `workers`:
        threads the embedding may use (embedders.embed_bulk).
        """
        # The last of duplicate ids wins, as writing them one by one would.
        latest = {d.doc_id: d for d in docs}
        changed = [d for d in latest.values() if self._hashes.get(d.doc_id) != d.content_hash()]
        reuse: dict[str, Vectors] = {}
        todo: list[Document] = []
        for doc in changed:
            known = precomputed.get(doc.doc_id) if precomputed else None
            if known is not None and known[0] == doc.content_hash():
                reuse[doc.doc_id] = np.asarray(known[1], dtype=np.float32)
            else:
                todo.append(doc)
        fresh = (
            self._embed_many(todo, workers)
            if todo
            else np.zeros((0, self.embedder.dim), np.float32)
        )
        made = {doc.doc_id: fresh[i] for i, doc in enumerate(todo)}
        vectors = {
            d.doc_id: reuse[d.doc_id] if d.doc_id in reuse else made[d.doc_id] for d in changed
        }
        # New documents are appended in one block (moments and HNSW in one pass each).
        new = [d for d in changed if d.doc_id not in self._rows]
        for doc in changed:
            if doc.doc_id in self._rows:
                self._put(doc, vectors[doc.doc_id])
        if new:
            start = len(self._ids)
            block = np.stack([vectors[d.doc_id] for d in new]).astype(np.float32)
            self._vectors.append_rows(block)
            for row, doc in enumerate(new, start):
                self._ids.append(doc.doc_id)
                self._rows[doc.doc_id] = row
                self._lexical.set_row(row, doc)
                self._hashes[doc.doc_id] = doc.content_hash()
            if self._ann is not None:
                self._ann.upsert(list(range(start, start + len(new))), block)
        self._sync_ann()
        return len(todo)

    def _put(self, doc: Document, vector: Vectors) -> None:
        row = self._rows[doc.doc_id]
        self._vectors.set_row(row, vector)
        self._lexical.set_row(row, doc)
        self._hashes[doc.doc_id] = doc.content_hash()
        if self._ann is not None:
            self._ann.upsert([row], vector[None, :])

    def delete(self, doc_ids: Iterable[str]) -> int:
        removed = 0
        for doc_id in doc_ids:
            row = self._rows.pop(doc_id, None)
            if row is None:
                continue
            last = len(self._ids) - 1
            moved = self._ids[last]
            self._vectors.swap_delete(row)
            self._lexical.swap_delete(row)
            if self._ann is not None:
                if row != last:
                    self._ann.upsert([row], self._vectors.matrix[row][None, :])
                self._ann.delete(last)
            self._ids[row] = moved
            self._ids.pop()
            if moved != doc_id:
                self._rows[moved] = row
            del self._hashes[doc_id]
            removed += 1
        return removed

    def _sync_ann(self) -> None:
        if self._ann is None and self._source is None and len(self) > self.ann_threshold:
            self._ann = HnswIndex(self.embedder.dim)
            self._ann.upsert(list(range(len(self))), self._vectors.matrix)

    def _channels(
        self,
        lexical: tuple[NDArray[np.float32], NDArray[np.float32]],
        qv: Vectors,
        rows: NDArray[np.int64] | None,
    ) -> _Channels:
        """The z-scored channels over `rows` or every row, and the raw dense scores;
        `lexical` is the query's (fielded, whole-text) BM25 over every row."""
        fielded, whole = lexical
        lex_z = fusion.zscore(fielded, float(fielded.mean()), float(fielded.std()))
        whole_z = fusion.zscore(whole, float(whole.mean()), float(whole.std()))
        mean, std = self._vectors.score_stats(qv)
        if rows is None:
            dense = self._vectors.scores(qv)
        else:
            dense = self._vectors.matrix[rows] @ qv
            lex_z, whole_z = lex_z[rows], whole_z[rows]
        return _Channels(fusion.zscore(dense, mean, std), lex_z, whole_z, dense)

    def search(
        self,
        query: str,
        k: int = 5,
        *,
        allowed: Callable[[str], bool] | None = None,
        decompose: bool = False,
        scope: Scope = EVERYTHING,
    ) -> list[Match]:
        """Best `k` documents for `query`, restricted to `allowed` ids.

        `decompose` also scores each sub-request of a multi-intent query
        ("X and also Y"); it costs one query embedding per part.
        """
        if not self._ids or k <= 0:
            return []
        # The request, the request with its data named by kind (when it quotes a text or
        # writes a JSON object), then its parts.
        views = list(dict.fromkeys([query, fusion.without_data(query)]))
        queries = views + (fusion.decompose(query) if decompose else [])
        qvs = self._embed_queries(queries)
        lift: Mapping[str, float] = {}
        if self.lift is not None and self.policy.remembers(content_word_count(query)):
            lift = self.lift(qvs[0], self._cosines(qvs[0]))
        lifted = np.asarray([self._rows[d] for d in lift if d in self._rows], dtype=np.int64)
        rows: NDArray[np.int64] | None = None
        # BM25 scores every row once per query: the candidate pool and the channels share it.
        bm25 = [self._lexical.both_scores(q) for q in queries]
        pool = self._dense_pool(qvs, scope)
        if pool is not None:
            for scores in bm25:
                pool += [top_k(s, self.candidates) for s in scores]
            rows = np.unique(np.concatenate([*pool, lifted]))
        channels = [self._channels(lx, qv, rows) for lx, qv in zip(bm25, qvs, strict=True)]
        fused = [
            self.policy.blend_for(content_word_count(q)).fuse(c.dense, c.lexical, c.whole)
            for q, c in zip(queries, channels, strict=True)
        ]
        whole = fused[0] if len(views) == 1 else fusion.mean(fused[: len(views)])
        final = fusion.combine_parts(whole, fused[len(views) :])
        if len(lifted):
            at = lifted if rows is None else np.searchsorted(rows, lifted)
            final = final.copy()
            final[at] += np.asarray([lift[self._ids[r]] for r in lifted], dtype=np.float32)
        first = channels[0]
        picked = self._pick(final, rows, k, allowed)
        out = []
        for i in picked:
            row = int(rows[i]) if rows is not None else i
            terms = tuple(self._lexical.matched_terms(row, query))
            cosine, lexical = float(first.raw[i]), float(first.lexical[i])
            out.append(
                Match(
                    doc_id=self._ids[row],
                    score=float(final[i]),
                    dense=float(first.dense[i]),
                    lexical=lexical,
                    terms=terms,
                    cosine=cosine,
                    relevant=self._floor is None
                    or self._floor.admits(cosine, lexical, topical(terms))
                    or (len(views) > 1 and self._admits_view(views[1], channels[1], i, row)),
                )
            )
        return out

    def _admits_view(self, view: str, channel: _Channels, i: int, row: int) -> bool:
        """Whether the floor admits the entry for the request with its data named by kind
        ('Take the first element of JSON using xs[0]')."""
        assert self._floor is not None
        terms = self._lexical.matched_terms(row, view)
        return self._floor.admits(float(channel.raw[i]), float(channel.lexical[i]), topical(terms))

    def _cosines(self, qv: Vectors) -> Cosines:
        def cosine(doc_ids: Sequence[str]) -> NDArray[np.float32]:
            rows = np.asarray([self._rows.get(d, -1) for d in doc_ids], dtype=np.int64)
            out = np.full(len(rows), np.nan, dtype=np.float32)
            held = rows >= 0
            if held.any():
                out[held] = np.einsum("ij,j->i", self._vectors.matrix[rows[held]], qv)
            return out

        return cosine

    def _dense_pool(self, qvs: Vectors, scope: Scope) -> list[NDArray[np.int64]] | None:
        """Rows of the dense candidates per query vector; ``None``: score every row."""
        if self._ann is not None:
            return [self._ann.search(qv, self.candidates) for qv in qvs]
        if self._source is None or len(self) <= self.ann_threshold:
            return None
        found = [self._source.nearest(qv, self.candidates, scope) for qv in qvs]
        # An id the source holds but this index does not (yet) is skipped.
        return [
            np.asarray([self._rows[d] for d in ids if d in self._rows], dtype=np.int64)
            for ids in found
        ]

    def _pick(
        self,
        final: Scores,
        rows: NDArray[np.int64] | None,
        k: int,
        allowed: Callable[[str], bool] | None,
    ) -> list[int]:
        """Positions in `final` of the best k allowed documents."""
        want = k if allowed is None else min(len(final), 8 * k)
        while True:
            order = top_k(final, want)
            picked = [
                int(i)
                for i in order
                if allowed is None
                or allowed(self._ids[int(rows[i]) if rows is not None else int(i)])
            ][:k]
            if len(picked) == k or want >= len(final):
                return picked
            want = min(len(final), want * 4)


__all__ = ["FIELDS", "HybridIndex", "Match"]
