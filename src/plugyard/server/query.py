"""A query parameter the OpenAPI document gives one value comes once.

For ``?k=1&k=2`` Starlette reads the last ``k`` of a scalar parameter, so a value the
document does not allow (a list) would pass. Here it is refused, ``invalid_request`` at
``/query/k``. The table comes from the document
itself, built the first time a name repeats; a request whose query repeats nothing
costs one byte search.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Receive, Scope, Send

from plugyard.server.errors import refusal_response
from plugyard.server.faults import InvalidRequest, fault, pointer

_Table = list[tuple[str, re.Pattern[str], frozenset[str]]]


def _is_list(schema: dict[str, Any]) -> bool:
    branches = schema.get("anyOf") or schema.get("oneOf") or [schema]
    return any(branch.get("type") == "array" for branch in branches)


def _template(path: str) -> re.Pattern[str]:
    parts = re.split(r"(\{[^}]+\})", path)
    return re.compile("".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts))


def table(document: dict[str, Any]) -> _Table:
    """``(method, path pattern, scalar query names)`` of every operation, concrete paths
    first (they win over templates, as in server/methods.py)."""
    rows: _Table = []
    for path, item in sorted(document.get("paths", {}).items(), key=lambda p: "{" in p[0]):
        for method, operation in item.items():
            names = frozenset(
                p["name"]
                for p in operation.get("parameters", ())
                if p.get("in") == "query" and not _is_list(p.get("schema", {}))
            )
            rows.append((method.upper(), _template(path), names))
    return rows


def _repeated(query: bytes) -> set[str]:
    seen: set[str] = set()
    twice: set[str] = set()
    for name, _ in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
        (twice if name in seen else seen).add(name)
    return twice


class SingleValued:
    def __init__(self, app: ASGIApp, document: Callable[[], dict[str, Any]]) -> None:
        self.app = app
        self._document = document
        self._table: _Table | None = None

    def _scalars(self, method: str, path: str) -> frozenset[str]:
        if self._table is None:
            self._table = table(self._document())
        for verb, pattern, names in self._table:
            if verb == method and pattern.fullmatch(path):
                return names
        return frozenset()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and b"&" in scope["query_string"]:
            twice = _repeated(scope["query_string"])
            once = sorted(twice & self._scalars(scope["method"], scope["path"])) if twice else []
            if once:
                faults = [fault(pointer("query", n), "takes one value; it came more than once")
                          for n in once]  # fmt: skip
                await refusal_response(InvalidRequest(faults))(scope, receive, send)
                return
        await self.app(scope, receive, send)
