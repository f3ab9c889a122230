"""The memory channel: which tool answered requests like this one before.

Every index entry (a plugin, or one of its operations) may hold remembered requests:
the ``examples`` its manifest lists and the requests callers accepted it for
(learning.py). A tool's memory score for a query is the mean of the top
:data:`TOP` cosines between the query and its remembered requests — the mean, not
the best, so one odd request does not carry a tool. Scores are z-scored over the
tools that have memory and only the positive part is kept: memory lifts a tool whose
requests resemble the query and never sinks one, and a tool with no memory stays
neutral (z = 0), so a catalog where few plugins have examples ranks as before.

A tool whose best requests are not even :data:`MIN_SIMILARITY` alike gets no lift
whatever its z: with few tools in memory, z alone would crown the least unlike.

Speed: the query meets only its :data:`PREFILTER` nearest remembered requests (a full
product below :data:`ANN_THRESHOLD` rows, HNSW above); tools among their owners are
scored exactly from all their rows, every other tool with memory is bounded by the
farthest of those neighbours, which is all the z statistics need.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from plugyard.discovery.embedders import Vectors
from plugyard.discovery.fusion import MEMORY_WEIGHT
from plugyard.discovery.vectors import HnswIndex, VectorRows, top_k

TOP = 3
PREFILTER = 128
ANN_THRESHOLD = 20_000
MIN_SIMILARITY = 0.15
#: A remembered request this alike counts as "similar" in a match's ``why``.
SIMILAR = 0.5
#: Below this many tools with memory there is nothing to standardise against, and the
#: channel stays silent: a lone tool's examples cannot say how unusual a match is.
MIN_TOOLS = 5


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
        self._vectors = VectorRows(dim)
        self._keys: list[Hashable] = []
        self._owners: list[str] = []
        self._row: dict[Hashable, int] = {}
        self._tool_rows: dict[str, set[int]] = {}
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
        for key, tool, vector in zip(keys, tools, vectors, strict=True):
            row = len(self._keys)
            self._keys.append(key)
            self._owners.append(tool)
            self._row[key] = row
            self._tool_rows.setdefault(tool, set()).add(row)
            self._vectors.set_row(row, np.asarray(vector, dtype=np.float32))
        if self._ann is not None:
            rows = list(range(first, len(self._keys)))
            self._ann.upsert(rows, self._vectors.matrix[first:])
        elif len(self._keys) > ANN_THRESHOLD:
            self._ann = HnswIndex(self.dim)
            self._ann.upsert(list(range(len(self._keys))), self._vectors.matrix)

    def remove(self, keys: Iterable[Hashable]) -> int:
        removed = 0
        for key in keys:
            row = self._row.pop(key, None)
            if row is None:
                continue
            last = len(self._keys) - 1
            tool = self._owners[row]
            rows = self._tool_rows[tool]
            rows.discard(row)
            if not rows:
                del self._tool_rows[tool]
            self._vectors.swap_delete(row)
            if row != last:
                moved_key, moved_tool = self._keys[last], self._owners[last]
                self._keys[row], self._owners[row] = moved_key, moved_tool
                self._row[moved_key] = row
                self._tool_rows[moved_tool].discard(last)
                self._tool_rows[moved_tool].add(row)
                if self._ann is not None:
                    self._ann.upsert([row], self._vectors.matrix[row][None, :])
            if self._ann is not None:
                self._ann.delete(last)
            self._keys.pop()
            self._owners.pop()
            removed += 1
        return removed

    def vectors(self, keys: Iterable[Hashable]) -> dict[Hashable, Vectors]:
        """The stored vectors of those ``keys`` that are held."""
        matrix = self._vectors.matrix
        return {k: matrix[self._row[k]].copy() for k in keys if k in self._row}

    def forget_tool(self, tool: str) -> int:
        return self.remove(self.keys_of(tool))

    # reads --------------------------------------------------------------------------

    def recall(self, query: Vectors) -> dict[str, Recall]:
        """The tools memory lifts for ``query`` (a normalised vector), by tool."""
        n = len(self._keys)
        if n == 0 or self.weight <= 0:
            return {}
        matrix = self._vectors.matrix
        if self._ann is not None:
            near = self._ann.search(query, PREFILTER)
            near_cos = np.einsum("ij,j->i", matrix[near], query)
        else:
            every = np.einsum("ij,j->i", matrix, query)  # see VectorRows.scores
            near = top_k(every, PREFILTER)
            near_cos = every[near]
        bound = float(near_cos.min()) if len(near) < n else -1.0
        tools = list(dict.fromkeys(self._owners[int(r)] for r in near))
        similar = dict.fromkeys(tools, 0)
        for r, c in zip(near, near_cos, strict=True):
            if c >= SIMILAR:
                similar[self._owners[int(r)]] += 1
        total = len(self._tool_rows)
        if total < MIN_TOOLS:
            return {}
        scores = self._top_means(tools, query)
        # Tools with memory outside the neighbourhood score at most `bound`.
        others = total - len(tools)
        mean = (float(scores.sum()) + others * bound) / total
        second = (float((scores**2).sum()) + others * bound * bound) / total
        std = max(second - mean * mean, 0.0) ** 0.5
        if std <= 1e-9:
            return {}
        out: dict[str, Recall] = {}
        for tool, s in zip(tools, scores, strict=True):
            z = (float(s) - mean) / std
            if z > 0 and s >= MIN_SIMILARITY:
                out[tool] = Recall(self.weight * z, similar[tool])
        return out

    def _top_means(self, tools: list[str], query: Vectors) -> NDArray[np.float32]:
        """Mean of each tool's TOP best cosines with ``query``, from all its rows."""
        groups: list[int] = []
        rows: list[int] = []
        for g, tool in enumerate(tools):
            mine = self._tool_rows[tool]
            rows.extend(mine)
            groups.extend([g] * len(mine))
        # einsum, not `@`: see VectorRows.scores (BLAS's second thread steals the core).
        cos = np.einsum("ij,j->i", self._vectors.matrix[np.asarray(rows, dtype=np.int64)], query)
        group = np.asarray(groups, dtype=np.int64)
        order = np.lexsort((-cos, group))
        sorted_group = group[order]
        starts = np.searchsorted(sorted_group, sorted_group, side="left")
        rank = np.arange(len(order)) - starts
        keep = order[rank < TOP]
        sums = np.bincount(group[keep], weights=cos[keep], minlength=len(tools))
        counts = np.bincount(group[keep], minlength=len(tools))
        return (sums / np.maximum(counts, 1)).astype(np.float32)
