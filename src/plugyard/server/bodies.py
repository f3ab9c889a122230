"""Request and response bodies: pydantic models that document the API (OpenAPI), and
the fast readers the routes actually use.

The hot routes read and write JSON with msgspec and check the few fields by hand: the
models describe exactly what those readers accept and what the routes write, and the
schemathesis test holds the two together.
"""

from __future__ import annotations

from typing import Any

import msgspec
from fastapi import Request
from pydantic import BaseModel, ConfigDict, Field

from plugyard.errors import PlugyardError

_decode = msgspec.json.Decoder().decode


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class ErrorMessage(BaseModel):
    error: str = Field(description="The plugyard error code (docs/errors.md).")
    message: str


class ErrorBody(BaseModel):
    code: str = Field(description="`HTTP_<status>`.", examples=["HTTP_404"])
    message: ErrorMessage
    details: dict[str, Any]
    error_id: str = Field(examples=["ERR-5f0c2a9e1b7d4c3a"])


class ErrorEnvelope(BaseModel):
    """The Shu error envelope every refused request answers."""

    error: ErrorBody


class ResultError(BaseModel):
    code: str
    message: str
    details: dict[str, Any]


class ResultEnvelope(BaseModel):
    """The result envelope of a call (docs/calling.md)."""

    status: str = Field(examples=["success"])
    data: Any = None
    error: ResultError | None = None
    cost: dict[str, float]
    diagnostics: list[str] | None = None
    skips: list[dict[str, Any]] | None = None
    citations: list[dict[str, Any]] | None = None
    next_cursor: str | None = None
    plugin_id: str | None = None
    operation: str | None = None
    request_id: str | None = None
    payload_ref: str | None = None


class ExecuteBody(BaseModel):
    """The Shu execute request, with plugyard's optional members."""

    model_config = ConfigDict(extra="allow")

    parameters: dict[str, Any] = Field(default_factory=dict)
    user_context: dict[str, Any] = Field(default_factory=dict)
    operation: str | None = Field(
        default=None, description="Which operation; may be left out when there is one."
    )
    timeout_ms: int | None = Field(default=None, ge=1, le=3_600_000)
    debug: bool = False
    approval_receipt: str | None = Field(
        default=None,
        description="The receipt a `pending_approval` result handed out, once approved: "
        "the call runs if it is this exact request (send the `Idempotency-Key` header "
        "to make retries safe).",
    )


class Placement(BaseModel):
    capabilities: list[str]
    role: str
    only_inside_group: bool


class PluginSummary(BaseModel):
    id: str
    name: str
    family: str
    version: str | None
    description: str
    runtime: str
    source: str
    dialect: str | None
    available: bool
    unavailable_reason: str | None
    placement: Placement
    operations: list[str]


class PluginDetail(PluginSummary):
    descriptor: dict[str, Any]


class CapabilitySection(BaseModel):
    capability: str
    plugins: list[PluginSummary]


class RoleSection(BaseModel):
    role: str
    plugins: list[PluginSummary]


class Palette(BaseModel):
    """Plugins grouped as the OLO palette does."""

    sections: list[CapabilitySection]
    control: list[RoleSection]


class HealthReport(BaseModel):
    plugin_id: str
    available: bool
    unavailable_reason: str | None
    checked: bool = Field(description="Whether the plugin has a health check URL.")
    health: dict[str, Any] | None


class RegistryChange(BaseModel):
    kind: str
    plugin_id: str


class Registration(BaseModel):
    registered: list[str]
    changes: list[RegistryChange]


class Unregistration(BaseModel):
    plugin_id: str
    removed: bool


class SearchMatch(_Open):
    plugin: str
    operation: str | None
    score: float
    why: str


class SearchReply(BaseModel):
    query: str
    matches: list[SearchMatch]


class ToolsReply(BaseModel):
    query: str
    format: str
    tools: list[dict[str, Any]]


class Probe(BaseModel):
    status: str
    plugins: int | None = None
    revision: str | None = None


def _is_json(content_type: str) -> bool:
    kind = content_type.split(";", 1)[0].strip().lower()
    return kind == "application/json" or (
        kind.startswith("application/") and kind.endswith("+json")
    )


async def read_json(request: Request, *, empty: Any = None) -> Any:
    """The request body as JSON: ``unsupported_media_type`` unless it says JSON,
    ``invalid_request`` when it does not parse. An empty body is ``empty`` (when given)."""
    raw = await request.body()
    if not raw and empty is not None:
        return empty
    if not _is_json(request.headers.get("content-type", "")):
        raise PlugyardError("the body must be application/json", code="unsupported_media_type")
    try:
        return _decode(raw)
    except msgspec.DecodeError as exc:
        raise PlugyardError(f"the body is not JSON: {exc}", code="invalid_request") from None
    except RecursionError:
        raise PlugyardError("the body nests too deeply", code="invalid_request") from None


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """A model's JSON Schema for ``openapi_extra`` (no ``$defs``: the models are flat)."""
    return model.model_json_schema(ref_template="#/components/schemas/{model}")
