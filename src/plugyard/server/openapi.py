"""The OpenAPI document as the server behaves, where FastAPI's own generation says
otherwise:

- FastAPI adds a 422 with its ``HTTPValidationError`` body to every route that takes
  parameters; a refused request here answers 400 ``invalid_request`` in the error
  envelope (documented by each route), so those 422s go;
- a body schema given whole (``openapi_extra``) keeps its models in ``$defs``, which
  move to ``components/schemas``, where their references point.

- a path parameter cannot take the name of a concrete sibling path: OpenAPI matches
  ``/api/v1/pipelines/validate`` before ``/api/v1/pipelines/{name}``, so ``validate``
  is not a pipeline name there (the parameter's schema says ``not: {enum: [...]}``).

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
    _reserve_concrete_names(document.get("paths", {}))
    return document


def _reserve_concrete_names(paths: dict[str, Any]) -> None:
    for template, path_item in paths.items():
        head, _, last = template.rpartition("/")
        if not (last.startswith("{") and last.endswith("}")):
            continue
        taken = sorted(
            path.rpartition("/")[2]
            for path in paths
            if path.rpartition("/")[0] == head and "{" not in path.rpartition("/")[2]
        )
        if not taken:
            continue
        for operation in path_item.values():
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "path" and parameter.get("name") == last[1:-1]:
                    parameter.setdefault("schema", {})["not"] = {"enum": taken}


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
