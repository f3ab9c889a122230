"""The one place an error becomes an HTTP answer.

Every plugyard error code has one HTTP status (``plugyard.errors.ERROR_CODES``); this
module turns a raised :class:`PlugyardError` — or a framework error (unknown route,
wrong method, bad query parameter) given its plugyard code — into that status and the
error envelope of the Shu contract::

    {"error": {"code": "HTTP_404",
               "message": {"error": "plugin_not_found", "message": "no plugin 'x'"},
               "details": {}, "error_id": "ERR-5f0c…"}}

``error_id`` is logged with every 5xx, so an operator can find what a client saw. An
``execute`` that fails answers the same envelope, its result envelope in ``details``
(:func:`result_response`); a 401 carries the challenges of the schemes a key may come in.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping, Sequence
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
_REALM = 'realm="plugyard"'
#: Framework statuses and the plugyard code each stands for.
_HTTP_CODES = {
    400: "invalid_request",
    401: "unauthenticated",
    404: "route_not_found",
    405: "method_not_allowed",
    413: "request_too_large",
    415: "unsupported_media_type",
}


class Unauthenticated(PlugyardError):
    """No key, or one that is not valid: 401 with the challenges (:func:`challenges`)."""

    def __init__(self, message: str, *, key_given: bool) -> None:
        super().__init__(message, code="unauthenticated")
        self.key_given = key_given


def challenges(*, key_given: bool = False) -> tuple[str, ...]:
    """The ``WWW-Authenticate`` challenges of a 401, one per scheme (RFC 9110 §11.6.1):
    ``Bearer`` as RFC 6750 §3 writes it, and ``ApiKey`` naming its header. Each goes on a
    field line of its own: a list of challenges with parameters on one line is where
    clients' parsers go wrong, and lines a client joins give the same list."""
    bearer = f"Bearer {_REALM}"
    if key_given:
        # RFC 6750 §3.1: a request that carried no key is not told of an error.
        bearer += ', error="invalid_token"'
    return (bearer, f'ApiKey {_REALM}, header="X-API-Key"')


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
    *,
    challenge: Sequence[str] | None = None,
) -> Response:
    """The envelope with the status of ``code``; a 401 carries ``challenge`` (default:
    :func:`challenges` for a request without a key)."""
    status = status_of(code)
    response = Response(
        error_envelope(code, message, details),
        status_code=status,
        media_type="application/json",
        headers=dict(headers or {}),
    )
    if status == 401 and "www-authenticate" not in response.headers:
        for line in challenge or challenges():
            response.headers.append("WWW-Authenticate", line)
    return response


def json_response(value: Any, status: int = 200) -> Response:
    return Response(_encode(value), status_code=status, media_type="application/json")


def result_response(result: Result) -> Response:
    """An execute's answer. A result without an error (a success, ``pending_approval``,
    a DS027 status) is the result envelope with HTTP 200. A result with one answers the
    status of its code and the error envelope every route answers — the Shu contract's
    for HTTP errors — so a client reads every failure in one place: ``details`` holds
    the error's own details (an ``invalid_parameters``' faults in ``errors``, as a 400
    lists its own), ``request_id``, and ``result``, the whole result envelope (plugin,
    operation, cost, diagnostics), so nothing the call said is lost. Where the error's
    details use the name ``request_id`` or ``result``, the host's wins; they are still
    in ``result.error.details``."""
    error = result.error
    if error is None:
        return Response(_encode(result.to_dict()), media_type="application/json")
    details = dict(error.details)
    if result.request_id is not None:
        details["request_id"] = result.request_id
    details["result"] = result.to_dict()
    return error_response(error.code, error.message, details)


def refusal_response(exc: PlugyardError) -> Response:
    """The error envelope of a refusal, with the details it carries (every fault and its
    pointer for a manifest or a pipeline)."""
    details: dict[str, Any] = dict(getattr(exc, "details", None) or {})
    problems = getattr(exc, "problems", None)
    if problems:
        details["problems"] = [p.as_dict() for p in problems]
    challenge = (
        challenges(key_given=True) if isinstance(exc, Unauthenticated) and exc.key_given else None
    )
    retry = details.get("retry_after_s")
    headers = {"Retry-After": str(retry)} if isinstance(retry, int) else None
    return error_response(exc.code, exc.message, details, headers, challenge=challenge)


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
