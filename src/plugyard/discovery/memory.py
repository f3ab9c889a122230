"""The memory channel: which tool answered requests like this one before.

Every index entry (a plugin, or one of its operations) may hold remembered requests:
the ``examples`` its manifest lists and the requests callers accepted it for
(learning.py). A tool's memory score for a query is the mean of the top
:data:`TOP` cosines between the query and its remembered requests — the mean, not
the best, so one odd request does not carry a tool.

What memory adds is what the tool's own text does not already say. Requests resemble
the text of the tool that answered them, so a raw memory score mostly repeats the
dense channel: on a catalog of near-twin tools (Seal-Tools: one field, many similar
functions) it lifted whichever twin happened to have memory over the right one without.
So, per query, the memory scores of the tools are regressed on the query's dense cosine
with each tool's document (the ``cosine`` the engine passes), and the residual is what
is standardised: a tool lifts when its requests resemble the query *more than its
description does*, relative to the other tools with memory. Only the positive part is
kept: memory lifts a tool and never sinks one, and a tool with no memory stays neutral.

A tool whose best requests are not even :data:`MIN_SIMILARITY` alike gets no lift
whatever its z: with few tools in memory, z alone would crown the least unlike.

Speed: up to :data:`ANN_THRESHOLD` remembered requests every tool with memory is scored
exactly (one product with all rows and a grouped top-3). Above, the query meets only its
:data:`PREFILTER` nearest requests (HNSW); the tools among their owners are scored
exactly from all their rows and standardised among themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from plugyard.discovery.embedders import Vectors
from plugyard.discovery.fusion import MEMORY_WEIGHT
from plugyard.discovery.vectors import HnswIndex, VectorRows

TOP = 3
PREFILTER = 128
ANN_THRESHOLD = 20_000
MIN_SIMILARITY = 0.15
#: A remembered request this alike counts as "similar" in a match's ``why``.
SIMILAR = 0.5
#: Below this many tools with memory there is nothing to standardise against, and the
#: channel stays silent: a lone tool's examples cannot say how unusual a match is.
MIN_TOOLS = 5

#: The query's dense cosine with each named tool's document; NaN for a tool the index
#: does not hold.
Cosines = Callable[[Sequence[str]], NDArray[np.float32]]


@dataclass(frozen=True, slots=True)
class Recall:
    """What memory says of one tool for one query."""

    lift: float  # added to the fused score (already weighted)
    similar: int  # remembered requests of this tool at least SIMILAR alike


class MemoryChannel:
    """Remembered request vectors keyed by any hashable row key; not thread-safe."""

    def __init__(self, dim: int, *, weight: float = MEMORY_WEIGHT) -> None:
        self.dim = dim
        self.weight = weight
        self._vectors = VectorRows(dim, moments=False)
        self._keys: list[Hashable] = []
        self._row: dict[Hashable, int] = {}
        self._tool_rows: dict[str, set[int]] = {}
        # Each row's tool as a small integer (its name in _tool_names): the owner of a
        # row, and the groups of the vectorised top-3.
        self._tool_id: dict[str, int] = {}
        self._tool_names: list[str] = []
        self._gid = np.zeros(1024, dtype=np.int64)
        self._ann: HnswIndex | None = None

    def __len__(self) -> int:
        return len(self._keys)

    @property
    def tools(self) -> int:
        return len(self._tool_rows)

    def count(self, tool: str) -> int:
        return len(self._tool_rows.get(tool, ()))

    def keys_of(self, tool: str) -> list[Hashable]:
        return [self._keys[r] for r in self._tool_rows.get(tool, ())]

    def __contains__(self, key: object) -> bool:
        return key in self._row

    # writes -------------------------------------------------------------------------

    def add(self, key: Hashable, tool: str, vector: Vectors) -> None:
        """Remember ``vector`` (a normalised request embedding) for ``tool``."""
        self.add_many([key], [tool], np.asarray(vector, dtype=np.float32)[None, :])

    def add_many(self, keys: Sequence[Hashable], tools: Sequence[str], vectors: Vectors) -> None:
        """Several at once (a build): the ANN graph takes them in one batch."""
        self.remove([k for k in keys if k in self._row])
        first = len(self._keys)
        latest: dict[Hashable, int] = {}  # a key given twice keeps its last vector
        for i, key in enumerate(keys):
            latest[key] = i
        picked = list(latest.values())
        for i in picked:
            row, key, tool = len(self._keys), keys[i], tools[i]
            self._keys.append(key)
            self._row[key] = row
            self._tool_rows.setdefault(tool, set()).add(row)
            self._set_gid(row, tool)
        block = np.asarray(vectors, dtype=np.float32).reshape(len(keys), self.dim)[picked]
        self._vectors.append_rows(block)
        if self._ann is not None:
            rows = list(range(first, len(self._keys)))
            self._ann.upsert(rows, self._vectors.matrix[first:])
        elif len(self._keys) > ANN_THRESHOLD:
            self._ann = HnswIndex(self.dim)
            self._ann.upsert(list(range(len(self._keys))), self._vectors.matrix)

    def _set_gid(self, row: int, tool: str) -> None:
        gid = self._tool_id.get(tool)
        if gid is None:
            gid = self._tool_id[tool] = len(self._tool_names)
            self._tool_names.append(tool)
        if row >= len(self._gid):
            self._gid = np.concatenate([self._gid, np.zeros(len(self._gid), np.int64)])
        self._gid[row] = gid

    def remove(self, keys: Iterable[Hashable]) -> int:
        removed = 0
        for key in keys:
            row = self._row.pop(key, None)
            if row is None:
                continue
            last = len(self._keys) - 1
            tool = self._owner(row)
            rows = self._tool_rows[tool]
            rows.discard(row)
            if not rows:
                del self._tool_rows[tool]
            self._vectors.swap_delete(row)
            if row != last:
                moved_key, moved_tool = self._keys[last], self._owner(last)
                self._keys[row] = moved_key
                self._gid[row] = self._gid[last]
                self._row[moved_key] = row
                self._tool_rows[moved_tool].discard(last)
                self._tool_rows[moved_tool].add(row)
                if self._ann is not None:
                    self._ann.upsert([row], self._vectors.matrix[row][None, :])
            if self._ann is not None:
                self._ann.delete(last)
            self._keys.pop()
            removed += 1
        return removed

    def _owner(self, row: int) -> str:
        return self._tool_names[int(self._gid[row])]

    def vectors(self, keys: Iterable[Hashable]) -> dict[Hashable, Vectors]:
        """The stored vectors of those ``keys`` that are held."""
        matrix = self._vectors.matrix
        return {k: matrix[self._row[k]].copy() for k in keys if k in self._row}

    def forget_tool(self, tool: str) -> int:
        return self.remove(self.keys_of(tool))

    # reads --------------------------------------------------------------------------

    def recall(self, query: Vectors, cosine: Cosines | None = None) -> dict[str, Recall]:
        """The tools memory lifts for ``query`` (a normalised vector), by tool.

        Without ``cosine`` the raw memory scores are standardised (no residual)."""
        if not self._keys or self.weight <= 0 or len(self._tool_rows) < MIN_TOOLS:
            return {}
        if self._ann is None:
            tools, scores, similar = self._exact(query)
        else:
            tools, scores, similar = self._near(query)
        z = standardise(scores, cosine(tools) if cosine is not None else None)
        out: dict[str, Recall] = {}
        for i in np.flatnonzero((z > 0) & (scores >= MIN_SIMILARITY)):
            out[tools[i]] = Recall(self.weight * float(z[i]), int(similar[i]))
        return out

    def _exact(self, query: Vectors) -> tuple[list[str], NDArray[np.float32], NDArray[np.int64]]:
        """Every tool with memory: the mean of its TOP best cosines with ``query``."""
        n = len(self._keys)
        # einsum, not `@`: see VectorRows.scores (BLAS's second thread steals the core).
        cos = np.einsum("ij,j->i", self._vectors.matrix, query)
        gid = self._gid[:n]
        width = len(self._tool_names)
        means = _grouped_top_mean(cos, gid, width)
        similar = np.bincount(gid[cos >= SIMILAR], minlength=width)
        held = np.flatnonzero(np.bincount(gid, minlength=width))
        return [self._tool_names[g] for g in held], means[held], similar[held]

    def _near(self, query: Vectors) -> tuple[list[str], NDArray[np.float32], NDArray[np.int64]]:
        """The owners of the query's PREFILTER nearest requests, scored from all their
        rows."""
        assert self._ann is not None
        n = len(self._keys)
        gid = self._gid[:n]
        near = self._ann.search(query, PREFILTER)
        wanted = np.zeros(len(self._tool_names), dtype=bool)
        wanted[gid[near]] = True
        # Vectorised over all rows: a Python walk of the owners' rows cost more than
        # the graph search itself at 100k requests.
        rows = np.flatnonzero(wanted[gid])
        held, local = np.unique(gid[rows], return_inverse=True)
        cos = np.einsum("ij,j->i", self._vectors.matrix[rows], query)
        means = _grouped_top_mean(cos, local, len(held))
        similar = np.bincount(local[cos >= SIMILAR], minlength=len(held))
        return [self._tool_names[g] for g in held], means, similar


def _grouped_top_mean(
    cos: NDArray[np.float32], gid: NDArray[np.int64], width: int
) -> NDArray[np.float32]:
    """Per group id, the mean of its TOP largest ``cos`` (0 for an empty group)."""
    order = np.lexsort((-cos, gid))
    sorted_gid = gid[order]
    rank = np.arange(len(order)) - np.searchsorted(sorted_gid, sorted_gid, side="left")
    keep = order[rank < TOP]
    sums = np.bincount(gid[keep], weights=cos[keep], minlength=width)
    counts = np.bincount(gid[keep], minlength=width)
    return (sums / np.maximum(counts, 1)).astype(np.float32)


def standardise(
    scores: NDArray[np.float32], cosine: NDArray[np.float32] | None
) -> NDArray[np.float32]:
    """z of each tool's memory score among the tools scored, after taking out the part
    the query's cosine with the tool's own document predicts (a least-squares line over
    the tools whose cosine is known; the others keep their score less the mean)."""
    resid = scores.astype(np.float64) - float(scores.mean())
    if cosine is not None:
        known = np.isfinite(cosine)
        if int(known.sum()) >= MIN_TOOLS:
            c = cosine[known].astype(np.float64)
            s = scores[known].astype(np.float64)
            spread = float(((c - c.mean()) ** 2).sum())
            slope = float(((c - c.mean()) * (s - s.mean())).sum()) / spread if spread > 0 else 0.0
            resid[known] = s - s.mean() - slope * (c - c.mean())
    std = float(resid.std())
    # Cosines are float32: a spread this small is rounding, not a difference.
    if std <= 1e-6:
        return np.zeros(len(scores), dtype=np.float32)
    return np.asarray((resid - resid.mean()) / std, dtype=np.float32)
