"""``invalid_request`` with every fault of a request and its JSON pointer.

A pointer addresses the request as one document — ``/query/family``,
``/body/timeout_ms``, ``/path/name`` — so a client (or an LLM) knows which part to
correct, whether the framework or a route's own reader found the fault::

    {"error": {"code": "HTTP_400",
               "message": {"error": "invalid_request", "message": "/body/timeout_ms: …"},
               "details": {"errors": [{"pointer": "/body/timeout_ms", "message": "…"}]}, …}}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from plugyard.errors import ERROR_CODES, PlugyardError


def pointer(*parts: object) -> str:
    """The RFC 6901 pointer of ``parts`` (``~`` and ``/`` escaped)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def fault(where: str, message: str) -> dict[str, str]:
    return {"pointer": where, "message": message}


class InvalidRequest(PlugyardError):
    """``invalid_request`` (or a more precise 4xx code); ``details.errors`` lists every
    fault."""

    def __init__(self, faults: Sequence[Mapping[str, str]], code: str = "invalid_request") -> None:
        first = faults[0] if faults else fault("", "invalid request")
        super().__init__(f"{first['pointer']}: {first['message']}", code=code)
        self.details: dict[str, Any] = {"errors": [dict(f) for f in faults] or [dict(first)]}


def from_validation(errors: Iterable[Mapping[str, Any]]) -> InvalidRequest:
    """The faults pydantic found (FastAPI's ``loc`` starts with the part of the request).
    A validator that raises an error whose type is a plugyard 400 code (``invalid_schedule``)
    gives the refusal that code."""
    faults = []
    code = "invalid_request"
    for error in errors:
        loc = tuple(error.get("loc", ()))
        kind = str(error.get("type", ""))
        if kind == "json_invalid":
            faults.append(fault(pointer(*loc[:1]), "the body is not JSON"))
        else:
            faults.append(fault(pointer(*loc), str(error.get("msg", "invalid"))))
        spec = ERROR_CODES.get(kind)
        if spec is not None and spec.http_status == 400 and code == "invalid_request":
            code = kind
    return InvalidRequest(faults, code)
