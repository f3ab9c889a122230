"""Shu's Actions API on a plugin class: ``list_actions()`` read as operations, and each of
them answered by ``perform_action(name, args, context, host)``.

``list_actions`` (sync or async) is asked once, when the plugin is described; each
``ActionMeta`` (a mapping or an object with ``name``, ``description``,
``params_schema``, ``required_scopes``, ``requires_approval``) becomes an operation of
kind ``action`` with effect ``write`` — listed to a subject only when policy lets it call
it, and run through the executor like any call (approvals, idempotency, audit). An
``ActionResult`` becomes the result envelope: ``ok`` → success with ``result`` as data,
``error`` → an error (its code kept when it is one of plugyard's, else ``plugin_error``),
``pending_approval`` → pending with the plugin's ``action_id`` and ``preview``.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from plugyard.errors import ERROR_CODES
from plugyard.manifest.model import Operation
from plugyard.runtimes.base import ErrorInfo, Outcome
from plugyard.runtimes.python.handler import Handler, analyse

PERFORM = "perform_action"
LIST = "list_actions"


def declared_actions(owner: Any) -> list[Operation]:
    """The operations ``owner.list_actions()`` declares (none when it has no such
    method, or it fails: describing never raises)."""
    method = getattr(owner, LIST, None)
    if not callable(method) or not callable(getattr(owner, PERFORM, None)):
        return []
    try:
        found = _run(method)
    except Exception:
        return []
    out: list[Operation] = []
    for item in found if isinstance(found, list | tuple) else ():
        operation = _operation(item)
        if operation is not None and all(o.id != operation.id for o in out):
            out.append(operation)
    return out


def action_handler(owner: Any, name: str) -> Handler:
    """The handler of one action: ``perform_action(name, args, context, host)``."""
    perform = getattr(owner, PERFORM)

    async def action(params: dict[str, Any], context: dict[str, Any], host: Any) -> Outcome:
        if inspect.iscoroutinefunction(perform):
            value = await perform(name, params, context, host)
        else:
            value = await asyncio.to_thread(perform, name, params, context, host)
            if inspect.isawaitable(value):
                value = await value
        return action_outcome(value)

    return analyse(action, "execute")


def action_outcome(value: Any) -> Outcome:
    data = value.model_dump(mode="json") if hasattr(value, "model_dump") else value
    if not isinstance(data, Mapping):
        data = {
            k: getattr(value, k)
            for k in ("status", "action_id", "result", "preview", "error", "diagnostics")
            if hasattr(value, k)
        }
    status = data.get("status")
    diagnostics = tuple(str(d) for d in data.get("diagnostics") or ())
    if status == "ok":
        return Outcome(data=data.get("result"), diagnostics=diagnostics)
    if status == "pending_approval":
        pending = {"action_id": data.get("action_id"), "preview": data.get("preview")}
        return Outcome(status="pending_approval", data=pending, diagnostics=diagnostics)
    if status == "error":
        error = data.get("error")
        code, message = "plugin_error", str(error)
        if isinstance(error, Mapping):
            found = error.get("code")
            code = found if isinstance(found, str) and found in ERROR_CODES else "plugin_error"
            message = str(error.get("message") or found or "the action failed")
        return Outcome(
            status="error",
            error=ErrorInfo(code, message, {"action_id": data.get("action_id")}),
            diagnostics=diagnostics,
        )
    return Outcome(
        status="error",
        error=ErrorInfo(
            "invalid_output",
            f"an ActionResult's status is ok, error or pending_approval, not {status!r}",
        ),
    )


def _operation(item: Any) -> Operation | None:
    get = item.get if isinstance(item, Mapping) else (lambda key, d=None: getattr(item, key, d))
    name = get("name")
    if not isinstance(name, str):
        return None
    schema = get("params_schema") or get("parameters") or {"type": "object", "properties": {}}
    try:
        return Operation.model_validate(
            {
                "id": name,
                "description": get("description") or "",
                "kind": "action",
                "effect": "write",
                "parameters": schema,
                "required_scopes": tuple(get("required_scopes") or ()),
                "requires_approval": bool(get("requires_approval")),
            },
            strict=False,
        )
    except ValidationError:
        return None


def _run(method: Any) -> Any:
    """Call ``method``; a coroutine it returns is run to its end on a loop of its own (in
    a thread of its own when this thread already runs one)."""
    value = method()
    if not inspect.isawaitable(value):
        return value
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(value))
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = asyncio.run(_awaited(value))
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(30.0)
    if "error" in box:
        raise box["error"]
    return box.get("value")


async def _awaited(value: Any) -> Any:
    return await value
