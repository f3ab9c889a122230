"""What each route documents in OpenAPI beside its body: its error responses, by
plugyard code, and the headers it reads."""

from __future__ import annotations

from typing import Any

from plugyard.errors import ERROR_CODES
from plugyard.server.bodies import ErrorEnvelope

#: Any route can answer these (framework refusals, the body cap in front of every route,
#: unexpected failures).
ALWAYS = ("route_not_found", "method_not_allowed", "request_too_large", "internal_error")
#: A route behind an API key (read from the store) that checks rights and validates its
#: query or body.
KEYED = ("unauthenticated", "permission_denied", "invalid_request", "store_error")
#: A route that reads a JSON body.
JSON_BODY = ("invalid_request", "unsupported_media_type")
#: The header that makes a call's retries safe (docs/governance.md): 1 to 255 characters,
#: not all blank (a server reads a header without its surrounding blanks).
IDEMPOTENCY_KEY_MAX = 255
IDEMPOTENCY_KEY_TEXT = "[^ \t]"
IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "Retries with the same key answer the first call's stored result.",
    "schema": {
        "type": "string",
        "minLength": 1,
        "maxLength": IDEMPOTENCY_KEY_MAX,
        "pattern": IDEMPOTENCY_KEY_TEXT,
    },
}


#: The headers an error answer carries beside its envelope.
_HEADERS: dict[int, dict[str, Any]] = {
    401: {
        "WWW-Authenticate": {
            "description": "One challenge per scheme a key may come in: "
            '`Bearer realm="plugyard"` (with `error="invalid_token"` when the key sent '
            'is not valid) and `ApiKey realm="plugyard", header="X-API-Key"`.',
            "required": True,
            "schema": {"type": "string"},
        }
    },
    405: {
        "Allow": {
            "description": "Every method the resource takes.",
            "required": True,
            "schema": {"type": "string"},
        }
    },
}


def errors_doc(*codes: str) -> dict[int | str, Any]:
    """``responses=`` for these codes: each status with the codes that give it, every
    one answering the error envelope, with the headers its status calls for."""
    by_status: dict[int, list[str]] = {}
    for code in (*codes, *ALWAYS):
        by_status.setdefault(ERROR_CODES[code].http_status, []).append(code)
    out: dict[int | str, Any] = {}
    for status, names in sorted(by_status.items()):
        out[status] = {
            "description": ", ".join(f"`{n}`" for n in sorted(set(names))),
            "model": ErrorEnvelope,
            **({"headers": _HEADERS[status]} if status in _HEADERS else {}),
        }
    return out
