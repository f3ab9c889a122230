"""What plugin code returns, turned into an :class:`Outcome` — the one place that decides.

- An :class:`Outcome` is taken as it is.
- A Shu ``ToolResult``: an object with ``status`` and ``data`` attributes, or a mapping
  with a ``status`` whose keys are all envelope keys (``status``, ``data``, ``error``,
  ``cost``, ``diagnostics``, ``skips``, ``citations``, ``next_cursor``) and that has
  ``data`` or ``error`` (or nothing else). Its parts are checked: a status that is not a
  result or family status, or a malformed part, gives ``invalid_output``.
- A family method's status object (MRP): the whole object is the data and its ``status``
  the outcome's status; a non-null ``error: {code, message}`` becomes the error.
- Anything else is plain data with status ``success``; a pydantic model is dumped first.

An exception becomes ``plugin_error`` with its type and message (a traceback only when
the caller asked for debug); an exception carrying a ``code`` attribute that is one of
plugyard's error codes (``invalid_parameters``…) keeps that code.
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from typing import Any, TypeGuard

from pydantic import BaseModel

from plugyard.errors import ERROR_CODES
from plugyard.manifest.families import FAMILY_STATUSES
from plugyard.runtimes.base import RESULT_STATUSES, ErrorInfo, Outcome, Progress

ENVELOPE_KEYS = frozenset(
    {"status", "data", "error", "cost", "diagnostics", "skips", "citations", "next_cursor"}
)
_BODY = frozenset({"data", "error"})
_PLAIN = frozenset({int, float, str, bool, type(None), list, tuple})
_PROGRESS_KEYS = frozenset({"type", "message", "data", "percent"})
_STATUSES = RESULT_STATUSES | FAMILY_STATUSES


class BadOutput(ValueError):
    """A part of a returned envelope has the wrong shape."""


def failure(code: str, message: str, **details: Any) -> Outcome:
    return Outcome(status="error", error=ErrorInfo(code, message, details))


def crashed(exc: BaseException, *, debug: bool) -> Outcome:
    """The outcome of plugin code that raised ``exc``."""
    code = getattr(exc, "code", None)
    if not isinstance(code, str) or code not in ERROR_CODES:
        code = "plugin_error"
    details: dict[str, Any] = {"type": type(exc).__name__}
    given = getattr(exc, "details", None)
    if code != "plugin_error" and isinstance(given, dict):
        # plugyard's own refusal (a host.kb budget, say) let through by the plugin keeps
        # what it says: which budget, the value, the limit.
        details = {**{str(k): v for k, v in given.items()}, **details}
    if debug:
        details["traceback"] = "".join(traceback.format_exception(exc))
    message = f"{type(exc).__name__}: {str(exc) or 'raised'}"
    return Outcome(status="error", error=ErrorInfo(code, message, details))


def to_outcome(value: Any, *, family: bool = False) -> Outcome:
    """The outcome ``value`` stands for (see the module docstring)."""
    if type(value) in _PLAIN and not family:
        return Outcome(data=value)  # the common case, without the checks below
    if isinstance(value, Outcome):
        return value
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    try:
        if family:
            return _family(value)
        envelope = _envelope(value)
        return _from_envelope(envelope) if envelope is not None else Outcome(data=value)
    except BadOutput as exc:
        return failure("invalid_output", str(exc))


def to_progress(item: Any) -> Progress:
    """A streamed value that is not the last one: a progress event."""
    if isinstance(item, Progress):
        return item
    if isinstance(item, str):
        return Progress(message=item)
    if isinstance(item, Mapping) and item.keys() <= _PROGRESS_KEYS:
        message, percent = item.get("message"), item.get("percent")
        return Progress(
            message=message if isinstance(message, str) else None,
            data=item.get("data"),
            percent=float(percent) if _number(percent) else None,
        )
    return Progress(data=item)


# ------------------------------------------------------------------------------ envelopes


def _envelope(value: Any) -> Mapping[str, Any] | None:
    if isinstance(value, Mapping):
        keys = value.keys()
        if "status" in keys and keys <= ENVELOPE_KEYS and (len(keys) == 1 or keys & _BODY):
            return value
        return None
    if hasattr(value, "status") and hasattr(value, "data") and not isinstance(value, type):
        return {key: getattr(value, key) for key in ENVELOPE_KEYS if hasattr(value, key)}
    return None


def _from_envelope(envelope: Mapping[str, Any]) -> Outcome:
    status = envelope.get("status")
    if not isinstance(status, str) or status not in _STATUSES:
        raise BadOutput(f"result status {status!r} is not one of {sorted(_STATUSES)}")
    data = envelope.get("data")
    if isinstance(data, BaseModel):
        data = data.model_dump(mode="json")
    error = _error(envelope.get("error"))
    if status == "error" and error is None:
        error = ErrorInfo("plugin_error", "the plugin reported an error")
    cursor = envelope.get("next_cursor")
    return Outcome(
        status=status,
        data=data,
        error=error,
        cost=_cost(envelope.get("cost")),
        diagnostics=_diagnostics(envelope.get("diagnostics")),
        skips=_mappings(envelope.get("skips"), "skips"),
        citations=_mappings(envelope.get("citations"), "citations"),
        next_cursor=None if cursor is None else str(cursor),
    )


def _family(value: Any) -> Outcome:
    if value is None:
        return Outcome()  # recordOutcome answers nothing
    if not isinstance(value, Mapping):
        if not hasattr(value, "status"):
            raise BadOutput(f"a family method must answer its status object, not {_kind(value)}")
        value = {k: v for k, v in vars(value).items() if not k.startswith("_")}
    status = value.get("status", "success")
    if not isinstance(status, str):
        raise BadOutput("the status object's 'status' is not a string")
    error = _error(value.get("error"))
    if status == "error" and error is None:
        error = ErrorInfo("plugin_error", "the plugin reported status 'error'")
    return Outcome(status=status, data=dict(value), error=error, cost=_reported_llm(value))


def _reported_llm(value: Mapping[str, Any]) -> Mapping[str, float]:
    """DS027's ``metadata.llmCalls`` as the envelope's ``cost.llm_calls``, so a flow
    deducts what a family call reports having used from its LLM budget."""
    metadata = value.get("metadata")
    calls = metadata.get("llmCalls") if isinstance(metadata, Mapping) else None
    return {"llm_calls": float(calls)} if _number(calls) and calls > 0 else {}


def _error(raw: Any) -> ErrorInfo | None:
    if raw is None:
        return None
    if isinstance(raw, ErrorInfo):
        return raw
    if isinstance(raw, str):
        return ErrorInfo("plugin_error", raw)
    if not isinstance(raw, Mapping):
        raise BadOutput(f"'error' must be a mapping or text, not {_kind(raw)}")
    code = raw.get("code")
    message = raw.get("message")
    text = message if isinstance(message, str) else str(message or code or "plugin error")
    details = dict(raw.get("details") or {}) if isinstance(raw.get("details"), Mapping) else {}
    if isinstance(code, str) and code in ERROR_CODES:
        return ErrorInfo(code, text, details)
    if code is not None:
        details["plugin_code"] = code  # the plugin's own code, outside plugyard's closed set
    return ErrorInfo("plugin_error", text, details)


def _cost(raw: Any) -> Mapping[str, float]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping) or not all(
        isinstance(k, str) and _number(v) for k, v in raw.items()
    ):
        raise BadOutput("'cost' must map names to numbers")
    return {k: float(v) for k, v in raw.items()}


def _diagnostics(raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if isinstance(raw, str):
        return (raw,)
    if isinstance(raw, list | tuple) and all(isinstance(d, str) for d in raw):
        return tuple(raw)
    raise BadOutput("'diagnostics' must be a list of strings")


def _mappings(raw: Any, name: str) -> tuple[Mapping[str, Any], ...]:
    if raw is None:
        return ()
    if isinstance(raw, list | tuple) and all(isinstance(item, Mapping) for item in raw):
        return tuple(dict(item) for item in raw)
    raise BadOutput(f"{name!r} must be a list of objects")


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    return type(value).__name__
