"""Response bodies: pydantic models that document what the routes answer (OpenAPI).

The routes write JSON with msgspec; the models describe exactly what they write, and
the schemathesis test holds the two together. Request bodies are in inputs.py.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict  # pydantic reads it on Python 3.11


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class ErrorMessage(BaseModel):
    error: str = Field(
        description="The plugyard error code (docs/errors.md): what a client branches on.",
        examples=["plugin_not_found"],
    )
    message: str = Field(description="What went wrong, for a person.")


_HTTP_CODE = Field(
    description="`HTTP_<status>`: the response's status, as the Shu contract writes it.",
    pattern=r"^HTTP_[0-9]{3}$",
    examples=["HTTP_404"],
)
_ERROR_ID = Field(
    description="Logged with every 5xx, so an operator can find what a client saw.",
    pattern=r"^ERR-[0-9a-f]{16}$",
    examples=["ERR-5f0c2a9e1b7d4c3a"],
)


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


class ErrorDetails(TypedDict, total=False):
    """What the error carries, as the code that gave it says: each fault of a malformed
    request with its JSON pointer (`errors`), a document's problems (`problems`), a
    package's `reason` or `findings` … An execute that reached the executor adds its
    `request_id` and `result`, the call's whole result envelope."""

    request_id: str
    result: ResultEnvelope


class ErrorBody(BaseModel):
    code: str = _HTTP_CODE
    message: ErrorMessage
    details: ErrorDetails
    error_id: str = _ERROR_ID


class ErrorEnvelope(BaseModel):
    """The Shu error envelope: every 4xx and 5xx of every route."""

    error: ErrorBody


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
    plugin_id: str | None = Field(
        description="The plugin registered, as HomeClaw answers (null for a batch)."
    )
    registered: bool = Field(description="HomeClaw's flag: true once stored.")
    plugin_ids: list[str]
    changes: list[RegistryChange]


class Unregistration(BaseModel):
    plugin_id: str
    removed: bool


class SearchMatch(_Open):
    plugin: str
    operation: str | None
    score: float
    why: str
    relevant: bool


class SearchReply(BaseModel):
    query: str
    #: Name it in a call (``search_id`` in the execute body) or a feedback to say which
    #: match answered (docs/discovery.md).
    search_id: str
    matches: list[SearchMatch]


class FeedbackReply(BaseModel):
    recorded: bool
    reason: str


class RememberedRequest(BaseModel):
    id: int
    operation: str | None
    subject: str
    query: str
    created_at: float


class MemoryReply(BaseModel):
    plugin_id: str
    remembered: list[RememberedRequest]


class MemoryPurge(BaseModel):
    plugin_id: str
    purged: int


class ToolsReply(BaseModel):
    query: str
    format: str
    tools: list[dict[str, Any]]


class Probe(BaseModel):
    status: str
    plugins: int | None = None
    revision: str | None = None


class AskError(BaseModel):
    code: str
    message: str
    details: dict[str, Any]


class AskStep(_Open):
    """One step of a routed request (docs/routing.md, "The trace")."""

    step: int
    retrieved: list[dict[str, Any]]
    choice: dict[str, Any] | None
    status: str
    llm_calls: int
    tokens: int
    ms: float


class AskReply(BaseModel):
    """How a routed request ended (docs/routing.md, "Statuses and codes"): every ending,
    a model that is down included, is an answer."""

    status: Literal["answered", "none", "pending_approval", "pending_confirmation",
                    "needs_input", "error", "step_limit", "planned"]  # fmt: skip
    text: str
    data: Any = None
    request_id: str
    cost: dict[str, float] = Field(
        description="`llm_calls`, `tokens`, `duration_ms` (of the model calls), `tool_calls`."
    )
    steps: list[AskStep]
    error: AskError | None = Field(default=None, description="When `status` is `error`.")
    pending: dict[str, Any] | None = Field(
        default=None, description="`action_id`, `receipt`, … of an action waiting for approval."
    )
    limit: str | None = Field(default=None, description="`max_steps` or `max_tokens`.")
