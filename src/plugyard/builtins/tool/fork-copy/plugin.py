"""A FORK: one deep copy of the input per branch."""

from __future__ import annotations

import copy
from typing import Any

DEFAULT_BRANCHES = 2
MAX_BRANCHES = 64


class InvalidInput(ValueError):
    code = "invalid_parameters"


class CopyFork:
    def execute(self, params: dict[str, Any], context: Any = None, host: Any = None) -> Any:
        names = params.get("names")
        if names is not None:
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise InvalidInput("'names' must be a list of strings")
            count = len(names)
        else:
            count = params.get("branches", DEFAULT_BRANCHES)
            if not isinstance(count, int) or isinstance(count, bool):
                raise InvalidInput("'branches' must be a whole number")
            names = [f"branch-{i}" for i in range(1, count + 1)] if count > 0 else []
        if not 1 <= count <= MAX_BRANCHES:
            raise InvalidInput(f"a fork has from 1 to {MAX_BRANCHES} branches")
        source = params.get("input")
        return {"branches": [copy.deepcopy(source) for _ in range(count)], "names": names}

    execute.__plugyard_inline__ = True  # type: ignore[attr-defined]
