"""What each route documents in OpenAPI beside its body: its error responses, by
plugyard code, and the headers it reads."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

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


def errors_doc(*codes: str, envelope: type[BaseModel] | None = None) -> dict[int | str, Any]:
    """``responses=`` for these codes: each status with the codes that give it.

    With ``envelope``, a status carries either that model (an execute's result envelope)
    or the error envelope.
    """
    by_status: dict[int, list[str]] = {}
    for code in (*codes, *ALWAYS):
        by_status.setdefault(ERROR_CODES[code].http_status, []).append(code)
    out: dict[int | str, Any] = {}
    for status, names in sorted(by_status.items()):
        doc: dict[str, Any] = {"description": ", ".join(f"`{n}`" for n in sorted(set(names)))}
        if envelope is not None:
            schema = {"anyOf": [_ref(envelope), _ref(ErrorEnvelope)]}
            doc["content"] = {"application/json": {"schema": schema}}
        else:
            doc["model"] = ErrorEnvelope
        out[status] = doc
    return out


def _ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{model.__name__}"}
