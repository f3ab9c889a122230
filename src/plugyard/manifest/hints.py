"""Hints for a document no dialect recognises: which of its keys look misspelt.

A user who writes ``capabilites`` or ``plugn`` gets "no dialect matches" from detection,
which is true and useless. Each key that no dialect knows but that is close to one that
some dialect knows is named with the key it probably meant (difflib's ratio, the same
measure ``did you mean`` uses elsewhere in plugyard).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from plugyard.manifest.dialects import DIALECTS
from plugyard.manifest.nearest import nearest


@cache
def vocabulary() -> tuple[str, ...]:
    """Every top-level key some dialect knows, including OLO's nested ``plugin`` keys."""
    return tuple(sorted({k for d in DIALECTS for k in d.keys}))


def misspelt_keys(entry: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(key, probably meant)`` for each unknown key of ``entry`` close to a known one;
    the nested OLO ``plugin`` mapping is looked into as well."""
    known = set(vocabulary())
    found: list[tuple[str, str]] = []
    for key, value in entry.items():
        if not isinstance(key, str) or key in known:
            if key == "plugin" and isinstance(value, Mapping):
                found.extend(misspelt_keys(value))
            continue
        meant = nearest(key, known)
        if meant is not None:
            found.append((key, meant))
    return found


def unknown_dialect_message(entry: Any) -> str:
    kind = type(entry).__name__ if not isinstance(entry, dict) else "mapping"
    message = f"no dialect matches this {kind}"
    if isinstance(entry, Mapping):
        guesses = misspelt_keys(entry)
        if guesses:
            named = ", ".join(f"{key!r} → {meant!r}" for key, meant in guesses)
            message += f"; probably misspelt: {named}"
    return message
