"""What a call is given, and how a group reads its control plugins' answers.

Parameters of a call, in order of precedence (later wins): the context's values under
the operation's own parameter names (only when the call has no ``input`` mapping), the
call's constant ``params``, its ``input`` mapping, and what the engine hands a slot
(a fork's branch names, a join's branch outputs). A declared ``context`` parameter
(and a fork's ``input``) that nothing else filled gets the whole context. Everything
is copied, so a plugin that changes what it was given changes nothing of the run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from plugyard.pipelines.paths import MISSING, read
from plugyard.pipelines.plan import Call

MAX_ITEMS = 10_000
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


class BadAnswer(ValueError):
    """A control plugin answered something its slot cannot use (``invalid_output``)."""


def copy(value: Any) -> Any:
    return _decode(_encode(value))


def size(value: Any) -> int:
    return len(_encode(value))


def params(call: Call, context: dict[str, Any], extra: Mapping[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if call.by_name:
        for name in call.declared:
            if name in context:
                out[name] = context[name]
    if call.params:
        out.update(call.params)
    for name, path in call.inputs:
        value = read(context, path)
        if value is not MISSING:
            out[name] = value
    if extra:
        out.update(extra)
    # The names the bundled control plugins (and OLO's) give the pipeline context.
    if "context" in call.declared and "context" not in out:
        out["context"] = context
    if call.role == "FORK" and "input" in call.declared and "input" not in out:
        out["input"] = context
    # Only containers can be changed in place; scalars are passed as they are.
    for name, value in out.items():
        if type(value) is dict or type(value) is list:
            out[name] = copy(value)
    return out


def fork_extra(call: Call, names: list[str]) -> dict[str, Any]:
    """What a fork is told of its branches, in the terms its operation declares."""
    if "names" in call.declared:
        return {"names": names}
    return {"branches": len(names)} if "branches" in call.declared else {}


def truth(data: Any) -> bool:
    """A condition's answer: ``result`` (a boolean), OLO's ``branch`` (0 = then), or a
    bare boolean."""
    if isinstance(data, bool):
        return data
    if isinstance(data, Mapping):
        if isinstance(data.get("result"), bool):
            return bool(data["result"])
        branch = data.get("branch")
        if isinstance(branch, int) and not isinstance(branch, bool):
            return branch == 0
    raise BadAnswer("a condition answers a boolean 'result' (or OLO's 'branch')")


def items(data: Any) -> list[Any]:
    """An iterator's answer: ``items`` (a list), or a bare list."""
    found = data.get("items") if isinstance(data, Mapping) else data
    if not isinstance(found, list):
        raise BadAnswer("an iterator answers a list 'items'")
    if len(found) > MAX_ITEMS:
        raise BadAnswer(f"an iterator may give at most {MAX_ITEMS} items")
    return found


def branches(data: Any, count: int) -> list[Any]:
    """A fork's answer: ``branches``, one input per branch, in branch order."""
    found = data.get("branches") if isinstance(data, Mapping) else data
    if not isinstance(found, list) or len(found) != count:
        raise BadAnswer(f"a fork answers a list 'branches' of {count} inputs")
    return found


def branch_context(value: Any, context: dict[str, Any], item_key: str) -> dict[str, Any]:
    """A branch starts from its fork input when it is an object, else from the group's
    context with the input under ``item_key``."""
    if isinstance(value, dict):
        return dict(value)
    return {**context, item_key: value}
