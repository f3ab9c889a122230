"""The MCP ``ask`` tool: the routing flow (docs/routing.md) for the MCP caller.

``ask`` is listed whatever the state of the model: a listing that followed a model
server's health would change under a client that cached it, and checking would cost a
request per listing. A call when no model can answer is a tool error with the code
``llm_unavailable`` (or ``llm_timeout``) and the reason. In tools mode it is listed with
the operations, so a caller who may call nothing still sees nothing; in discovery mode
it is listed beside ``search`` and ``call``.

The answer is the flow's :class:`~plugyard.routing.Answer`: its text as ``content`` and,
when it fits the advertised ``outputSchema``, the whole answer as ``structuredContent``.
An answer with status ``error`` is a tool error, its code in ``_meta`` as for any call.

``confirm`` is listed wherever ``ask`` is: it runs a call an ``ask`` held back
(``pending_confirmation``) by the receipt the answer gave, for the caller it was held
for, through the executor as any call (policy, approvals, audit); its result is shaped
as any call's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonschema_rs

from plugyard.manifest.exporters.mcp_schema import portable
from plugyard.mcp_server.results import (
    RECEIPT_META,
    REQUEST_META,
    STATUS_META,
    error_result,
    result_to_mcp,
)
from plugyard.routing import STATUSES, Answer
from plugyard.routing.failures import MAX_MESSAGE_CHARS
from plugyard.routing.flow import DEFAULT_K, DEFAULT_MAX_STEPS
from plugyard.yard import Yard

ASK = "ask"
CONFIRM = "confirm"
_ERROR_SCHEMA = {
    "type": "object",
    "properties": {"code": {"type": "string"}, "message": {"type": "string"},
                   "details": {"type": "object"}},
    "required": ["code", "message"],
}  # fmt: skip
ANSWER_SCHEMA: dict[str, Any] = portable(
    {
        "type": "object",
        "properties": {
            "status": {"type": "string", "enum": list(STATUSES)},
            "text": {"type": "string"},
            "data": {},
            "request_id": {"type": "string"},
            "cost": {"type": "object", "additionalProperties": {"type": "number"}},
            "steps": {"type": "array", "items": {"type": "object"}},
            "error": _ERROR_SCHEMA,
            "pending": {"type": "object"},
            "limit": {"type": "string"},
        },
        "required": ["status", "text", "request_id", "cost", "steps"],
    }
)
ASK_TOOL: dict[str, Any] = {
    "name": ASK,
    "title": "Ask plugyard",
    "description": "Answer a request in plain words: plugyard finds the operations you may "
    "call, its model picks one and fills in the arguments, plugyard calls it and answers. "
    "An action that needs approval comes back pending_approval, not run.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "message": {"type": "string", "minLength": 1, "maxLength": MAX_MESSAGE_CHARS},
            "k": {"type": "integer", "minimum": 1, "maximum": 50, "default": DEFAULT_K},
            "max_steps": {
                "type": "integer",
                "minimum": 1,
                "maximum": 10,
                "default": DEFAULT_MAX_STEPS,
            },
        },
        "required": ["message"],
    },
    "outputSchema": ANSWER_SCHEMA,
    # It may end in a call of any operation the caller may call, writes included.
    "annotations": {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": True},
}
CONFIRM_TOOL: dict[str, Any] = {
    "name": CONFIRM,
    "title": "Confirm a held call",
    "description": "Run a call that ask held for your confirmation (status "
    "pending_confirmation): pass the receipt from its pending member. Only the caller it "
    "was held for may confirm it; it runs once, under the same policy as any call.",
    "inputSchema": {
        "type": "object",
        "properties": {"receipt": {"type": "string", "minLength": 1, "maxLength": 200}},
        "required": ["receipt"],
    },
    # The held call's structured result: its data when an object, else wrapped in one
    # (results.result_to_mcp), so every success is an object, whichever operation ran.
    "outputSchema": {"type": "object"},
    "annotations": {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": True},
}
_VALID = jsonschema_rs.validator_for(ANSWER_SCHEMA)


async def ask(yard: Yard, subject: str | None, roles: tuple[str, ...],
              args: Mapping[str, Any]) -> dict[str, Any]:  # fmt: skip
    """One ``ask`` as a ``CallToolResult``, for the caller ``subject`` with ``roles``."""
    message = args.get("message")
    k, max_steps = args.get("k", DEFAULT_K), args.get("max_steps", DEFAULT_MAX_STEPS)
    if not isinstance(message, str):
        return error_result("invalid_request", "message must be text")
    if not (_integer(k) and _integer(max_steps)):
        return error_result("invalid_request", "k and max_steps must be integers")
    # The flow checks the sizes (an empty or oversized message, k, max_steps) itself.
    answer = await yard.router.ask(message, subject=subject, roles=roles, k=k,
                                   max_steps=max_steps)  # fmt: skip
    return answer_to_mcp(answer)


async def confirm(yard: Yard, subject: str | None, roles: tuple[str, ...],
                  args: Mapping[str, Any]) -> dict[str, Any]:  # fmt: skip
    """One ``confirm`` as a ``CallToolResult``: the held call's result."""
    receipt = args.get("receipt")
    if not isinstance(receipt, str) or not receipt:
        return error_result("invalid_request", "receipt must be non-empty text")
    result = await yard.router.confirm(receipt, subject=subject, roles=roles)
    # Confirmed, it may still wait for an approver (the policy's say): then it is called
    # again as that operation's own call, the receipt in its _meta.
    return result_to_mcp(result, None, f"the _meta ({RECEIPT_META!r}) of that operation's call")


def answer_to_mcp(answer: Answer) -> dict[str, Any]:
    meta: dict[str, Any] = {STATUS_META: answer.status, REQUEST_META: answer.request_id}
    if answer.status == "error":
        error = answer.error.to_dict() if answer.error is not None else {}
        code = str(error.get("code", "internal_error"))
        return error_result(code, str(error.get("message", answer.text)),
                            error.get("details"), meta)  # fmt: skip
    structured = answer.to_dict()
    if not _VALID.is_valid(structured):
        # A strict client refuses a success whose structure breaks the schema it was
        # promised, so this one says what went wrong instead.
        return error_result("invalid_output", "the answer does not fit the ask tool's schema",
                            meta=meta)  # fmt: skip
    return {
        "content": [{"type": "text", "text": answer.text}],
        "structuredContent": structured,
        "isError": False,
        "_meta": meta,
    }


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
