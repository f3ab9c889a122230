"""How two plugin versions compare.

Both PEP 440 (``1.2.0``, ``2.0rc1``, ``1.0.post1``; a leading ``v`` is allowed): compared
by ``packaging``, so ``1.0 == 1.0.0`` and ``2.0rc1 < 2.0``. Otherwise (``2024-05-a``,
``r12``): compared run by run — digits as numbers, letters alphabetically, a number
above a word, and a word below the version's end, so ``1.0-beta < 1.0 < 1.0.1``;
trailing zero numbers are ignored. No version at all is older than any version.
Comparison is pairwise: the registry only ever asks "is this older than that".
"""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

_RUN = re.compile(r"\d+|[^\W\d_]+")
# Keys of one run: (rank, number, word). Rank orders word < end of version < number.
_WORD, _END, _NUMBER = 0, 1, 2
Key = tuple[int, int, str]


def compare_versions(a: str | None, b: str | None) -> int:
    """``-1`` if ``a`` is older than ``b``, ``0`` if they are the same, ``1`` if newer."""
    if a is None or b is None:
        return (a is not None) - (b is not None)
    pa, pb = _pep440(a), _pep440(b)
    if pa is not None and pb is not None:
        return (pa > pb) - (pa < pb)
    ka, kb = _loose(a), _loose(b)
    width = max(len(ka), len(kb))
    end: Key = (_END, 0, "")
    ka += [end] * (width - len(ka))
    kb += [end] * (width - len(kb))
    return (ka > kb) - (ka < kb)


def is_older(a: str | None, b: str | None) -> bool:
    return compare_versions(a, b) < 0


def _pep440(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _loose(text: str) -> list[Key]:
    keys: list[Key] = [
        (_NUMBER, int(run), "") if run.isdecimal() else (_WORD, 0, run.casefold())
        for run in _RUN.findall(text)
    ]
    while keys and keys[-1] == (_NUMBER, 0, ""):
        keys.pop()
    return keys
