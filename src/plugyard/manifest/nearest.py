"""Did-you-mean: the known name closest to one a user typed (difflib's ratio)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

#: How close a word must be to a known one to be called a misspelling of it.
CUTOFF = 0.75


def nearest(word: str, choices: Iterable[str], cutoff: float = CUTOFF) -> str | None:
    """The choice closest to ``word`` (case-insensitive), if one is close enough."""
    pool = list(dict.fromkeys(choices))
    lowered = {c.lower(): c for c in pool}
    found = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=cutoff)
    return lowered[found[0]] if found else None


def close_matches(word: str, choices: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` choices close to ``word``, closest first (for "did you mean")."""
    return difflib.get_close_matches(word, list(choices), n=n, cutoff=CUTOFF - 0.15)
