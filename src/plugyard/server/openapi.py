"""The OpenAPI document as the server behaves, where FastAPI's own generation says
otherwise:

- FastAPI adds a 422 with its ``HTTPValidationError`` body to every route that takes
  parameters; a refused request here answers 400 ``invalid_request`` in the error
  envelope (documented by each route), so those 422s go;
- a body schema given whole (``openapi_extra``) keeps its models in ``$defs``, which
  move to ``components/schemas``, where their references point.

``Authorization: Bearer <key>`` is described in the key scheme's text rather than as a
second scheme: a request with a valid ``X-API-Key`` does not read it, so a fuzzer that
takes the two for alternatives would expect a malformed one beside a good key refused.
"""

from __future__ import annotations

from typing import Any

_FRAMEWORK_422 = "#/components/schemas/HTTPValidationError"
_FRAMEWORK_SCHEMAS = ("HTTPValidationError", "ValidationError")


def tidy(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` (FastAPI's), corrected in place; idempotent."""
    components = document.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    for path_item in document.get("paths", {}).values():
        for operation in path_item.values():
            _drop_framework_422(operation)
            _hoist_defs(operation, schemas)
    for name in _FRAMEWORK_SCHEMAS:
        schemas.pop(name, None)
    return document


def _drop_framework_422(operation: dict[str, Any]) -> None:
    responses = operation.get("responses", {})
    content = responses.get("422", {}).get("content", {}).get("application/json", {})
    if content.get("schema", {}).get("$ref") == _FRAMEWORK_422:
        del responses["422"]


def _hoist_defs(operation: dict[str, Any], schemas: dict[str, Any]) -> None:
    for media in operation.get("requestBody", {}).get("content", {}).values():
        schema = media.get("schema")
        if isinstance(schema, dict) and "$defs" in schema:
            # A copy: the route's own openapi_extra may share this dict.
            media["schema"] = {k: v for k, v in schema.items() if k != "$defs"}
            schemas.update(schema["$defs"])
