"""Combining dense and lexical scores, and splitting multi-intent queries.

Measured on the DEV split (DISCOVERY_LAB.md): reciprocal-rank fusion lost
to dense alone because it throws away how far apart scores are. Putting each
channel on a common scale (z-score over the catalog, per query) and taking a
convex combination won, with a flat optimum for the lexical weight between
0.1 and 0.3; 0.2 is the middle of that plateau, not a sharp peak.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

Scores = NDArray[np.float32]

LEXICAL_WEIGHT = 0.2


def zscore(scores: NDArray[np.floating], mean: float, std: float) -> Scores:
    """Standardise; a channel with no spread (e.g. no query word matched)
    carries no ranking information and becomes all zeros."""
    if std <= 1e-9:
        return np.zeros(scores.shape, dtype=np.float32)
    return ((scores - mean) / std).astype(np.float32)


def minmax(scores: NDArray[np.floating]) -> Scores:
    lo, hi = float(scores.min(initial=0.0)), float(scores.max(initial=0.0))
    if hi - lo <= 1e-9:
        return np.zeros(scores.shape, dtype=np.float32)
    return ((scores - lo) / (hi - lo)).astype(np.float32)


def convex(dense_z: Scores, lexical_z: Scores, lexical_weight: float = LEXICAL_WEIGHT) -> Scores:
    return ((1.0 - lexical_weight) * dense_z + lexical_weight * lexical_z).astype(np.float32)


def rrf(rankings: Sequence[NDArray[np.int64]], n: int, k: int = 60) -> Scores:
    """Reciprocal-rank fusion over full rankings (kept as the baseline)."""
    out = np.zeros(n, dtype=np.float32)
    for order in rankings:
        out[order] += 1.0 / (k + 1 + np.arange(len(order), dtype=np.float32))
    return out


# Joints that separate requests in one sentence, plus sentence ends.
_JOINT = re.compile(
    r"\s*(?:[;?!.]\s+|,?\s+and\s+(?:also\s+)?|,?\s+as well as\s+|,?\s+also\s+"
    r"|,?\s+plus\s+|,?\s+then\s+)",
    re.IGNORECASE,
)
_FILLER = frozenset(
    """
    a about an any are be can could do does for how i in is it me my of on please some
    that the this to what with would you your
    """.split()  # noqa: SIM905
)


def decompose(query: str) -> list[str]:
    """Sub-requests of a multi-intent query, or [] when it is one request.

    A part must keep two content words, so "salt and pepper" is not split.
    """
    parts = [p.strip() for p in _JOINT.split(query) if p and p.strip()]
    parts = [
        p for p in parts if sum(w not in _FILLER for w in re.findall(r"[a-z]+", p.lower())) >= 2
    ]
    return parts if len(parts) >= 2 else []


def combine_parts(full: Scores, parts: Sequence[Scores]) -> Scores:
    """Half the whole query, half its best-matching part, per document: each
    intent can lift its own tool without the whole query losing its say."""
    if not parts:
        return full
    best: Scores = np.max(np.stack(parts), axis=0)
    return (0.5 * full + 0.5 * best).astype(np.float32)
