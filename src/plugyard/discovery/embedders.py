"""The embedder contract and the dependency-free hashing embedder.

Vectors stored for a catalog are only comparable with query vectors from the
same model, so every embedder names itself (`identity`); a store keeps that
name beside the vectors and re-embeds when it changes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

Vectors = NDArray[np.float32]

_WORD = re.compile(r"[a-z0-9]+")


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 rows of width `dim`."""

    @property
    def identity(self) -> str:
        """Model, version and width, e.g. ``minilm-l6-v2:st-mean:384``."""
        ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors: ...


@runtime_checkable
class BulkEmbedder(Embedder, Protocol):
    """An embedder that can spread one large call (an index build) over threads;
    `embed` itself stays on one, as queries must."""

    def embed_bulk(self, texts: Sequence[str], workers: int) -> Vectors: ...


def embed_bulk(embedder: Embedder, texts: Sequence[str], workers: int) -> Vectors:
    """`texts` embedded on up to `workers` threads where the embedder can."""
    if workers > 1 and isinstance(embedder, BulkEmbedder):
        return embedder.embed_bulk(texts, workers)
    return embedder.embed(texts)


def l2_normalise(vectors: NDArray[np.floating]) -> Vectors:
    """Row-normalise; all-zero rows stay zero instead of becoming NaN."""
    out = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    # Same floor as torch.nn.functional.normalize, so parity with
    # sentence-transformers holds even for degenerate rows.
    return np.ascontiguousarray(out / np.maximum(norms, 1e-12), dtype=np.float32)


@dataclass(frozen=True, slots=True)
class Floor:
    """When a match counts as relevant (``Filters(relevant_only=True)``). Cosines mean
    different things to different models, so each embedder that knows its scale names
    its floor; one without (a remote model) has none, and every match counts.

    A match is relevant when its dense cosine reaches ``alone``, when query words match
    it well above the catalog (``keywords_sigma``) with a cosine of at least
    ``with_keywords``, or when two or more of them match it far above the catalog
    (``strong_sigma``) with a cosine of at least ``with_strong``: a short request
    written in symbols ("500 MB in GB") is near nothing in meaning, and one word far
    above ("average") was not enough on the bundled requests nothing serves. Only words
    count (:func:`topical`): a number the request states is a value, and a document
    that holds the same number (a default of 500, an example of 10 minutes) is not
    about what the request asks."""

    alone: float | None
    with_keywords: float
    keywords_sigma: float = 1.5
    with_strong: float | None = None
    strong_sigma: float = 4.0

    def admits(self, cosine: float, lexical_sigma: float, words: int) -> bool:
        """``words``: how many of the query's words (not numbers) the match holds."""
        if self.alone is not None and cosine >= self.alone:
            return True
        if words >= 2 and self.with_strong is not None and lexical_sigma >= self.strong_sigma:
            return cosine >= self.with_strong
        return words > 0 and lexical_sigma >= self.keywords_sigma and cosine >= self.with_keywords


def topical(terms: Sequence[str]) -> int:
    """How many matched terms are words, not numbers."""
    return sum(not term.replace(".", "").replace(",", "").isdigit() for term in terms)


def floor_of(embedder: Any) -> Floor | None:
    """The floor of ``embedder`` (or of the one it wraps), ``None`` when it names none."""
    found = getattr(embedder, "relevance_floor", None)
    if found is None and hasattr(embedder, "inner"):
        return floor_of(embedder.inner)
    return found if isinstance(found, Floor) else None


class HashingEmbedder:
    """Signed feature hashing of words and character trigrams.

    Deterministic across processes (blake2b, not Python's salted `hash`) and
    needs only numpy, so tests get stable vectors without a model. Lexical
    overlap is all it captures; it is not a semantic model — so its cosine alone never
    makes a match relevant (trigram overlap gives unrelated texts 0.2-0.3).
    """

    relevance_floor = Floor(alone=None, with_keywords=0.0)

    def __init__(self, dim: int = 256, char_ngrams: int = 3) -> None:
        if dim <= 0:
            raise ValueError("dim must be positive")
        self._dim = dim
        self._n = char_ngrams
        self._cache: dict[str, tuple[int, float]] = {}

    @property
    def identity(self) -> str:
        return f"hashing-v1:w+c{self._n}:{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _slot(self, feature: str) -> tuple[int, float]:
        hit = self._cache.get(feature)
        if hit is None:
            digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
            value = int.from_bytes(digest, "little")
            hit = (value % self._dim, 1.0 if value >> 63 else -1.0)
            if len(self._cache) < 200_000:
                self._cache[feature] = hit
        return hit

    def _features(self, text: str) -> list[str]:
        words = _WORD.findall(text.lower())
        feats = [f"w:{w}" for w in words]
        if self._n > 0:
            for w in words:
                padded = f"#{w}#"
                feats.extend(
                    f"c:{padded[i : i + self._n]}" for i in range(max(1, len(padded) - self._n + 1))
                )
        return feats

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in self._features(text):
                slot, sign = self._slot(feature)
                out[row, slot] += sign
        return l2_normalise(out)
