"""The error responses each route documents in OpenAPI, by plugyard code."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from plugyard.errors import ERROR_CODES
from plugyard.server.bodies import ErrorEnvelope

#: Any route can answer these (framework refusals and unexpected failures).
ALWAYS = ("route_not_found", "method_not_allowed", "internal_error")
#: A route behind an API key that checks rights and validates its query or body.
KEYED = ("unauthenticated", "permission_denied", "invalid_request")


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
