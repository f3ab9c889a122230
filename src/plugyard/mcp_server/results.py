"""Result envelopes as MCP ``CallToolResult``s that strict clients accept.

A client that knows a tool's ``outputSchema`` validates every ``structuredContent``
against it (the TypeScript SDK even on errors) and refuses a success that has none. So:

- **success**: ``structuredContent`` is the data, or ``{"result": data}`` when the
  operation's output schema is not an object schema (or, with no schema, the data is not
  an object) — the shape the advertised ``outputSchema`` describes; ``content`` is the
  same JSON as text;
- **pending approval**: not an error; ``structuredContent`` is ``{"status":
  "pending_approval", "action_id", "receipt", …}``, which the ``outputSchema`` of a tool
  that may wait for approval admits (:func:`with_pending`); ``content`` tells a reader the
  action and the receipt;
- **error**: ``isError`` with ``code: message`` as text and no ``structuredContent``.

Every result carries ``_meta``: ``io.plugyard/status``, and on an error
``io.plugyard/error`` (``code``, ``message``, ``details``), for programs that want codes.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from plugyard.execution.result import Result
from plugyard.manifest.exporters.mcp_schema import WRAP_KEY, is_object_schema

STATUS_META = "io.plugyard/status"
ERROR_META = "io.plugyard/error"
REQUEST_META = "io.plugyard/requestId"
#: Where an approval receipt travels with a call.
RECEIPT_META = "io.plugyard/approvalReceipt"
PENDING = "pending_approval"

PENDING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "const": PENDING},
        "action_id": {"type": "string"},
        "receipt": {"type": "string"},
        "expires_at": {"type": "number"},
        "preview": {"type": "object"},
    },
    "required": ["status", "action_id", "receipt"],
}


def with_pending(output_schema: dict[str, Any]) -> dict[str, Any]:
    """An ``outputSchema`` that also admits a pending approval's answer."""
    result = dict(output_schema)
    union: dict[str, Any] = {"type": "object"}
    # References inside stay relative to the document's root, so its definitions move up.
    for key in ("$schema", "$id", "$defs", "definitions"):
        if key in result:
            union[key] = result.pop(key)
    union["anyOf"] = [result, copy.deepcopy(PENDING_SCHEMA)]
    return union


def result_to_mcp(
    result: Result, output_schema: dict[str, Any] | None, receipt_hint: str
) -> dict[str, Any]:
    """``result`` as a ``CallToolResult``, for an operation whose output schema (the
    descriptor's) is ``output_schema``. ``receipt_hint`` says where a receipt goes back."""
    meta: dict[str, Any] = {STATUS_META: result.status}
    if result.request_id is not None:
        meta[REQUEST_META] = result.request_id
    if result.status == PENDING:
        return _pending(dict(result.data or {}), meta, receipt_hint)
    if not result.ok:
        if result.error is not None:
            error = result.error.to_dict()
        else:
            error = {"code": result.status, "message": "the call failed", "details": {}}
        return error_result(error["code"], error["message"], error.get("details"), meta)
    if result.payload_ref is not None and output_schema is not None:
        # The data is a preview of a cut payload, which the output schema does not
        # describe; a strict client would refuse it as a success.
        message = (
            f"the result ({dict(result.data or {}).get('bytes')} bytes) was cut to a preview "
            "that its output schema does not describe"
        )
        details = {"payload_ref": result.payload_ref, "preview": result.data}
        return error_result("output_validation_error", message, details, meta)
    data = result.data
    if is_object_schema(output_schema) or (output_schema is None and isinstance(data, dict)):
        return structured_result(data, meta)
    return structured_result({WRAP_KEY: data}, meta)


def structured_result(data: dict[str, Any], meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """A success: ``data`` as structured content, and as JSON text for older clients."""
    return {
        "content": [_text(_json(data))],
        "structuredContent": data,
        "isError": False,
        "_meta": meta if meta is not None else {STATUS_META: "success"},
    }


def _pending(data: dict[str, Any], meta: dict[str, Any], receipt_hint: str) -> dict[str, Any]:
    structured = {"status": PENDING, **data}
    text = (
        f"{PENDING}: this call waits for an approver (action {data.get('action_id')}). "
        f"Once it is approved, make the same call again with the approval receipt "
        f"{data.get('receipt')} in {receipt_hint}."
    )
    return {
        "content": [_text(text)],
        "structuredContent": structured,
        "isError": False,
        "_meta": meta,
    }


def error_result(
    code: str,
    message: str,
    details: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An ``isError`` result: what failed as text a person reads, the code in ``_meta``."""
    error = {"code": code, "message": message, "details": dict(details or {})}
    return {
        "content": [_text(f"{code}: {message}")],
        "isError": True,
        "_meta": {STATUS_META: "error", **(meta or {}), ERROR_META: error},
    }


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
