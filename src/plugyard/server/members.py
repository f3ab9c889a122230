"""The members of a JSON object body, checked by hand: for the hot execute route, where a
model parse would cost more than the call it carries (bench/RESULTS.md, "HTTP API").

Each check gives the verdict the body's documented JSON Schema gives (inputs.py): types
are JSON's (``true`` is not an integer, ``5.0`` is one), ``null`` is no member's value,
and unknown members pass. tests/server/test_openapi_conformance.py holds the two together.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from plugyard.server.faults import InvalidRequest, fault, pointer

Check = Callable[[Any], Any]
_ABSENT: Any = object()


class _Wrong(Exception):
    pass


def of_type(kind: type, name: str) -> Check:
    def check(value: Any) -> Any:
        if type(value) is not kind:
            raise _Wrong(f"must be {name}")
        return value

    return check


def integer(low: int, high: int) -> Check:
    def check(value: Any) -> int:
        if type(value) is float and value.is_integer():
            value = int(value)
        if type(value) is not int:
            raise _Wrong("must be an integer")
        if not low <= value <= high:
            raise _Wrong(f"must be between {low} and {high}")
        return value

    return check


OBJECT = of_type(dict, "an object")
STRING = of_type(str, "a string")
BOOLEAN = of_type(bool, "a boolean")


def read(body: Any, checks: Mapping[str, Check]) -> dict[str, Any]:
    """The checked members present in ``body``; ``invalid_request`` with every fault."""
    if type(body) is not dict:
        raise InvalidRequest([fault("/body", "must be a JSON object")])
    found: dict[str, Any] = {}
    faults = []
    for name, check in checks.items():
        value = body.get(name, _ABSENT)
        if value is _ABSENT:
            continue
        try:
            found[name] = check(value)
        except _Wrong as wrong:
            faults.append(fault(pointer("body", name), str(wrong)))
    if faults:
        raise InvalidRequest(faults)
    return found
