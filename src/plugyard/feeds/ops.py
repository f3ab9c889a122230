"""Which call a feed makes: an operation of the plugin, or — for a plugin that takes its
op as a parameter (Shu: ``execute(params)`` with ``params.op``) — that one operation
with ``op`` set.

Shu's ``default_feed_op`` / ``allowed_feed_ops`` name *ops*. For a plugin whose ops are
operations of their own, an op is an operation id; for an op-style plugin (one operation
whose parameters have an ``op`` property, and no operation of that name) it is the value
of ``op``. Either way:

- no op asked → ``default_feed_op`` is injected; with a non-empty ``allowed_feed_ops``
  and no default → ``invalid_feed_op``;
- an op outside a non-empty ``allowed_feed_ops`` → ``invalid_feed_op``;
- the op given twice, differently (``operation`` and ``params.op``) → ``invalid_feed_op``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plugyard.errors import GovernanceError
from plugyard.manifest.model import Operation, PluginDescriptor

OP = "op"


@dataclass(frozen=True, slots=True)
class FeedCall:
    """The operation a feed calls and the parameters it passes (``op`` included)."""

    operation: str
    params: dict[str, Any]
    op: str | None


def op_carrier(descriptor: PluginDescriptor) -> Operation | None:
    """The one operation that takes its op as the ``op`` parameter, if the plugin is
    op-style; ``None`` when its ops are operations of their own."""
    if len(descriptor.operations) != 1:
        return None
    only = descriptor.operations[0]
    properties = only.parameters.get("properties")
    return only if isinstance(properties, Mapping) and OP in properties else None


def feed_call(
    descriptor: PluginDescriptor, operation: str | None, params: Mapping[str, Any] | None = None
) -> FeedCall:
    """What a feed of this plugin runs (``invalid_feed_op`` when it may not run)."""
    given = dict(params or {})
    carrier = op_carrier(descriptor)
    named_op = operation is not None and descriptor.operation(operation) is not None
    if carrier is None or (named_op and operation != carrier.id):
        op = _allowed(descriptor, operation)
        if op is None:
            if len(descriptor.operations) != 1:
                raise GovernanceError("name the operation to run", code="invalid_feed_op")
            op = descriptor.operations[0].id
        if descriptor.operation(op) is None:
            raise GovernanceError(f"no operation {op!r}", code="invalid_feed_op")
        return FeedCall(op, given, op)
    asked = None if operation in (None, carrier.id) else operation
    in_params = given.get(OP)
    if in_params is not None and not isinstance(in_params, str):
        raise GovernanceError("params.op must be a string", code="invalid_feed_op")
    if asked is not None and in_params is not None and asked != in_params:
        raise GovernanceError(
            f"the op is given twice: {asked!r} and params.op {in_params!r}", code="invalid_feed_op"
        )
    op = _allowed(descriptor, asked or in_params)
    if op is not None:
        given[OP] = op
    return FeedCall(carrier.id, given, op)


def _allowed(descriptor: PluginDescriptor, op: str | None) -> str | None:
    allowed = descriptor.allowed_feed_ops
    if op is None:
        op = descriptor.default_feed_op
        if op is None and allowed:
            raise GovernanceError(f"name one of {list(allowed)}", code="invalid_feed_op")
    if op is not None and allowed and op not in allowed:
        raise GovernanceError(
            f"{op!r} may not run in a feed; allowed: {list(allowed)}", code="invalid_feed_op"
        )
    return op
