"""Wrapper protocol v1: newline-delimited JSON on a worker's stdin and stdout.

Requests ``{"protocolVersion": 1, "id": n, "method": "describe"|"execute", "params": …}``;
replies ``{"id": n, "result": …}`` or ``{"id": n, "error": {"code", "message"}}``, with any
number of ``{"id": n, "progress": {…}}`` before them; host calls from the worker
``{"id": "h<k>", "method": "host", "params": {"capability", "call", "args", "kwargs"}}``,
answered with ``{"id": "h<k>", "result": …}`` or ``{"id": "h<k>", "error": {…}}``. A
wrapper that declares it (``config.cancel``, and plugyard's own worker) is also sent
``{"protocolVersion": 1, "method": "cancel", "params": {"id": n}}`` for a request the host
gave up on. The full text is docs/subprocess.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from plugyard.runtimes.base import ErrorInfo, Outcome, Progress
from plugyard.runtimes.python.coerce import to_outcome

PROTOCOL_VERSION = 1
#: The keys an ``execute`` result may carry: the result envelope without the host's parts.
RESULT_KEYS = frozenset(
    {"status", "data", "error", "cost", "next_cursor", "citations", "skips", "diagnostics"}
)
_PROGRESS_KEYS = frozenset({"message", "data", "percent"})
encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


class ProtocolError(Exception):
    """The worker broke the protocol; it cannot be trusted with another request."""


@dataclass(frozen=True, slots=True)
class Reply:
    """The end of one request: a result or the worker's own error."""

    id: int
    result: Any = None
    error: ErrorInfo | None = None


@dataclass(frozen=True, slots=True)
class ProgressLine:
    id: int
    progress: Progress


@dataclass(frozen=True, slots=True)
class HostCall:
    id: str
    capability: str
    method: str
    args: list[Any]
    kwargs: dict[str, Any]
    call: int | None  # the request it serves, when the worker says


Message = Reply | ProgressLine | HostCall


def request(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    return encode(
        {"protocolVersion": PROTOCOL_VERSION, "id": request_id, "method": method, "params": params}
    )


def cancel(request_id: int) -> bytes:
    """A notification (no id of its own): stop request ``request_id`` and answer it."""
    return encode(
        {"protocolVersion": PROTOCOL_VERSION, "method": "cancel", "params": {"id": request_id}}
    )


def host_reply(call_id: str, result: Any = None, error: ErrorInfo | None = None) -> bytes:
    if error is not None:
        body: dict[str, Any] = {"code": error.code, "message": error.message}
        if error.details:  # a budget refused, say: which, the value, the limit
            body["details"] = dict(error.details)
        try:
            return encode({"id": call_id, "error": body}) + b"\n"
        except (TypeError, ValueError):
            del body["details"]
            return encode({"id": call_id, "error": body}) + b"\n"
    try:
        return encode({"id": call_id, "result": result}) + b"\n"
    except (TypeError, ValueError) as exc:
        body = {"code": "plugin_error", "message": f"the host's answer is not JSON: {exc}"}
        return encode({"id": call_id, "error": body}) + b"\n"


def parse(line: bytes) -> Message:
    """One line from a worker, checked; :class:`ProtocolError` when it is not protocol."""
    try:
        data = _decode(line)
    except msgspec.DecodeError as exc:
        raise ProtocolError(f"not a JSON line: {exc}") from None
    if not isinstance(data, dict):
        raise ProtocolError("a line is not a JSON object")
    version = data.get("protocolVersion", PROTOCOL_VERSION)
    if version != PROTOCOL_VERSION or isinstance(version, bool):
        raise ProtocolError(f"unknown protocolVersion {version!r}")
    ident = data.get("id")
    if isinstance(ident, str) and data.get("method") == "host":
        return _host_call(ident, data.get("params"))
    if not isinstance(ident, int) or isinstance(ident, bool):
        raise ProtocolError(f"a line has no request id: {str(ident)[:40]!r}")
    if "progress" in data:
        return ProgressLine(ident, _progress(data["progress"]))
    if "error" in data:
        return Reply(ident, error=_error(data["error"]))
    if "result" in data:
        return Reply(ident, result=data["result"])
    raise ProtocolError("a line is neither a result, an error, progress nor a host call")


def outcome(result: Any) -> Outcome:
    """The outcome an ``execute`` result stands for."""
    if not isinstance(result, dict) or not result.keys() <= RESULT_KEYS:
        extra = sorted(result.keys() - RESULT_KEYS) if isinstance(result, dict) else []
        raise ProtocolError(f"an execute result is not a result object (extra keys {extra})")
    return to_outcome({"status": "success", **result})


def _host_call(ident: str, params: Any) -> HostCall:
    if not isinstance(params, dict):
        raise ProtocolError("a host call has no params")
    capability, method = params.get("capability"), params.get("call")
    args, kwargs = params.get("args", []), params.get("kwargs", {})
    call = params.get("request")
    if not (isinstance(capability, str) and isinstance(method, str)):
        raise ProtocolError("a host call names no capability and call")
    if not isinstance(args, list) or not isinstance(kwargs, dict):
        raise ProtocolError("a host call's args are not a list, or kwargs not an object")
    if call is not None and (not isinstance(call, int) or isinstance(call, bool)):
        raise ProtocolError("a host call's request is not a request id")
    return HostCall(ident, capability, method, args, kwargs, call)


def _progress(raw: Any) -> Progress:
    if not isinstance(raw, dict) or not raw.keys() <= _PROGRESS_KEYS:
        raise ProtocolError("progress is not {message, data, percent}")
    message, percent = raw.get("message"), raw.get("percent")
    if message is not None and not isinstance(message, str):
        raise ProtocolError("a progress message is not text")
    if percent is not None and (not isinstance(percent, int | float) or isinstance(percent, bool)):
        raise ProtocolError("a progress percent is not a number")
    return Progress(message, raw.get("data"), float(percent) if percent is not None else None)


def _error(raw: Any) -> ErrorInfo:
    if not isinstance(raw, dict) or not isinstance(raw.get("message", ""), str):
        raise ProtocolError("an error is not {code, message}")
    code = raw.get("code")
    details = raw.get("details")
    return ErrorInfo(
        code if isinstance(code, str) else "plugin_error",
        raw.get("message") or "the wrapper reported an error",
        details if isinstance(details, dict) else {},
    )
