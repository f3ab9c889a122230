"""The one place an error becomes an HTTP answer.

Every plugyard error code has one HTTP status (``plugyard.errors.ERROR_CODES``); this
module turns a raised :class:`PlugyardError` — or a framework error (unknown route,
wrong method, bad query parameter) given its plugyard code — into that status and the
error envelope of the Shu contract::

    {"error": {"code": "HTTP_404",
               "message": {"error": "plugin_not_found", "message": "no plugin 'x'"},
               "details": {}, "error_id": "ERR-5f0c…"}}

``error_id`` is logged with the failure, so an operator can find what a client saw.
An ``execute`` answers its result envelope instead (see :func:`result_response`).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping
from typing import Any

import msgspec
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import Response

from plugyard.errors import ERROR_CODES, PlugyardError
from plugyard.execution.result import Result
from plugyard.server.faults import from_validation

log = logging.getLogger("plugyard.server")
_encode = msgspec.json.Encoder().encode
#: Framework statuses and the plugyard code each stands for.
_HTTP_CODES = {
    400: "invalid_request",
    401: "unauthenticated",
    404: "route_not_found",
    405: "method_not_allowed",
    413: "request_too_large",
    415: "unsupported_media_type",
}


def is_json(content_type: str) -> bool:
    kind = content_type.split(";", 1)[0].strip().lower()
    return kind == "application/json" or (
        kind.startswith("application/") and kind.endswith("+json")
    )


def status_of(code: str) -> int:
    spec = ERROR_CODES.get(code)
    return spec.http_status if spec is not None else 500


def error_envelope(code: str, message: str, details: Mapping[str, Any] | None = None) -> bytes:
    status = status_of(code)
    error_id = f"ERR-{secrets.token_hex(8)}"
    if status >= 500:
        log.error("%s %s: %s", error_id, code, message)
    return _encode(
        {
            "error": {
                "code": f"HTTP_{status}",
                "message": {"error": code, "message": message},
                "details": dict(details or {}),
                "error_id": error_id,
            }
        }
    )


def error_response(
    code: str,
    message: str,
    details: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> Response:
    return Response(
        error_envelope(code, message, details),
        status_code=status_of(code),
        media_type="application/json",
        headers=dict(headers or {}),
    )


def json_response(value: Any, status: int = 200) -> Response:
    return Response(_encode(value), status_code=status, media_type="application/json")


def result_response(result: Result) -> Response:
    """An execute's answer: the result envelope, with HTTP 200 when it carries no error
    and else the status of its error code — the same table as every other error. The
    one exception is the Shu contract's: ``output_validation_error`` answers HTTP 500
    with the error envelope (the faults and request id in ``details``)."""
    error = result.error
    if error is None:
        return Response(_encode(result.to_dict()), media_type="application/json")
    if error.code == "output_validation_error":
        details = dict(error.details)
        details["request_id"] = result.request_id
        return error_response(error.code, error.message, details)
    return Response(
        _encode(result.to_dict()), status_code=status_of(error.code), media_type="application/json"
    )


def refusal_response(exc: PlugyardError) -> Response:
    """The error envelope of a refusal, with the details it carries (every fault and its
    pointer for a manifest or a pipeline)."""
    details: dict[str, Any] = dict(getattr(exc, "details", None) or {})
    problems = getattr(exc, "problems", None)
    if problems:
        details["problems"] = [p.as_dict() for p in problems]
    return error_response(exc.code, exc.message, details)


def unexpected_response(method: str, path: str, exc: Exception) -> Response:
    log.exception("unexpected failure on %s %s", method, path, exc_info=exc)
    return error_response("internal_error", f"unexpected failure: {type(exc).__name__}")


def install(app: FastAPI) -> None:
    """Register the handlers: plugyard errors, framework errors, and anything else."""

    async def plugyard_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, PlugyardError)
        return refusal_response(exc)

    async def validation_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        errors = exc.errors()
        kind = request.headers.get("content-type")
        if kind and not is_json(kind) and any(e.get("loc", ())[:1] == ("body",) for e in errors):
            # FastAPI reads a body of another type as no JSON at all: say so, as every
            # route that reads JSON does.
            return error_response("unsupported_media_type", "the body must be application/json")
        return refusal_response(from_validation(errors))

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        code = _HTTP_CODES.get(exc.status_code, "invalid_request")
        if status_of(code) != exc.status_code and exc.status_code >= 500:
            code = "internal_error"
        return error_response(code, str(exc.detail), headers=exc.headers)

    async def unexpected(request: Request, exc: Exception) -> Response:
        return unexpected_response(request.method, request.url.path, exc)

    app.add_exception_handler(PlugyardError, plugyard_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, unexpected)
