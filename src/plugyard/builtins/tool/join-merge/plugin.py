"""A JOIN: the branch outputs of a parallel group, reduced to one.

``merge`` merges objects recursively in branch order (a later branch wins, and the
dotted key is listed in ``conflicts`` when values differ); when not every output is an
object, ``merge`` falls back to the list of outputs.
"""

from __future__ import annotations

import copy
from typing import Any

STRATEGIES = ("merge", "list", "first", "last")


class InvalidInput(ValueError):
    code = "invalid_parameters"


class MergeJoin:
    def execute(self, params: dict[str, Any], context: Any = None, host: Any = None) -> Any:
        branches = params.get("branches")
        strategy = params.get("strategy", "merge")
        if not isinstance(branches, list):
            raise InvalidInput("'branches' must be a list of branch outputs")
        if strategy not in STRATEGIES:
            raise InvalidInput(f"'strategy' is one of {', '.join(STRATEGIES)}")
        if strategy == "first" or strategy == "last":
            chosen = branches[0 if strategy == "first" else -1] if branches else None
            return {"result": chosen, "conflicts": []}
        if strategy == "list" or not all(isinstance(b, dict) for b in branches):
            return {"result": list(branches), "conflicts": []}
        merged: dict[str, Any] = {}
        conflicts: list[str] = []
        for branch in branches:
            _merge(merged, branch, "", conflicts)
        return {"result": merged, "conflicts": list(dict.fromkeys(conflicts))}

    execute.__plugyard_inline__ = True  # type: ignore[attr-defined]


def _merge(into: dict[str, Any], other: dict[str, Any], prefix: str, conflicts: list[str]) -> None:
    for key, value in other.items():
        here = f"{prefix}{key}"
        if key not in into:
            into[key] = copy.deepcopy(value)
        elif isinstance(into[key], dict) and isinstance(value, dict):
            _merge(into[key], value, f"{here}.", conflicts)
        else:
            if into[key] != value:
                conflicts.append(here)
            into[key] = copy.deepcopy(value)
