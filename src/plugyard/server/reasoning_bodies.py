"""What the reasoning routes take and answer (docs/reasoning.md): request bodies that
FastAPI validates, and the response models OpenAPI documents (the schemathesis suite
holds the routes to them). Fields keep the MRP-VM spelling the records use."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field
from pydantic_core import PydanticCustomError

from plugyard.reasoning import labels
from plugyard.reasoning.limits import Limits

_LIMITS = Limits()
# What ``str.strip`` takes away, written out: JSON Schema's ``\s`` is another set.
_SPACE = "\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"

#: Text that is not all white space.
Said = Annotated[str, Field(min_length=1, pattern=f"[^{_SPACE}]")]
Prompt = Annotated[
    str, Field(min_length=1, max_length=_LIMITS.max_prompt_chars, pattern=f"[^{_SPACE}]")
]
#: A plugin id; one that names no plugin of the stage ends the request in a recorded failure.
PluginId = Annotated[str, Field(min_length=1, max_length=200)]
SessionId = Annotated[str, Field(min_length=1, max_length=64)]
#: A stage as DS027 names it, or a family's short name (``kb``, ``gs``, ``sd`` …).
Stage = Literal[
    "goal-solver",
    "gs",
    "gs-plugin",
    "kb",
    "kb-plugin",
    "mrp-plan-plugin",
    "plan",
    "planner",
    "sd",
    "sd-plugin",
    "seed",
    "seed-detector",
    "solver",
    "val",
    "val-plugin",
    "validation",
    "validator",
]
Choices = dict[Stage, PluginId]


def _integral(value: Any) -> Any:
    """``5.0`` is an integer, as JSON Schema counts one."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


#: Model calls a request may make, an integer as JSON Schema reads one.
Budget = Annotated[int, Field(ge=0, le=1_000), BeforeValidator(_integral)]


class _Body(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


def _label(name: str) -> str:
    """The reasoning service's own check, here so the pointer names the body's field."""
    why = labels.fault(name)
    if why is not None:
        raise PydanticCustomError("invalid_source_name", why)
    return name


#: A source's name: a label (no control character), never a path.
SourceName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=labels.MAX_NAME_CHARS,
        json_schema_extra={"pattern": labels.LABEL_PATTERN},
    ),
    AfterValidator(_label),
]


class SourceIn(_Body):
    name: SourceName
    text: Said


class ReasonBody(_Body):
    """One reasoning request. Who asks comes from the API key, never from here."""

    prompt: Prompt
    session: SessionId | None = Field(default=None, description="Continue this session.")
    sources: list[SourceIn] = Field(
        default_factory=list,
        max_length=_LIMITS.max_sources,
        description="Source documents staged for this turn.",
    )
    pins: Choices = Field(default_factory=dict, description="Run a stage with this plugin alone.")
    budget: Budget | None = Field(
        default=None, description="Model calls the request may make (default 4)."
    )


class SessionBody(_Body):
    kbId: PluginId | None = None
    kbName: Annotated[str, Field(max_length=200)] | None = None
    preferences: Choices = Field(default_factory=dict)


class UnitIn(_Body):
    text: Said
    title: Annotated[str, Field(max_length=500)] = ""
    sourceLink: Annotated[str, Field(max_length=1000)] = ""


class UnitsBody(_Body):
    units: list[UnitIn] = Field(min_length=1, max_length=500)


class PreferencesBody(_Body):
    preferences: Choices


class MountBody(_Body):
    kbId: PluginId
    kbName: Annotated[str, Field(max_length=200)] | None = None


class SaveBody(_Body):
    kbName: Annotated[str, Field(max_length=200)] | None = None


# ------------------------------------------------------------------------------ answers


class StageEntry(BaseModel):
    plannerPluginId: str
    stage: str
    pluginId: str
    status: str
    durationMs: float
    llmCalls: int
    sufficient: bool | None
    model: str | None
    modelRole: str | None


class RecordError(BaseModel):
    code: str
    message: str


class OutcomeRecord(BaseModel):
    """The DS027 planner outcome record of one request."""

    requestId: str
    sessionId: str | None
    plannerPluginId: str
    plannerAttempts: list[str]
    stages: list[StageEntry]
    finalStatus: Literal["success", "failure"]
    finalAnswerStatus: Literal["answered", "no-context"] | None
    frameDepth: int
    framePurpose: str | None
    error: RecordError | None
    recordedAt: str


class AnswerError(BaseModel):
    code: str
    message: str
    details: dict[str, Any]


class ReasonAnswer(BaseModel):
    requestId: str
    sessionId: str | None
    status: Literal["answered", "no-context", "failure"]
    answer: str | None
    responseDocument: dict[str, Any] | None
    citations: list[dict[str, Any]]
    llmCalls: int
    error: AnswerError | None
    record: OutcomeRecord
    trace: list[dict[str, Any]]


class SessionOut(BaseModel):
    id: str
    subject: str | None
    kbId: str | None
    kbName: str | None
    preferences: dict[str, str]
    workspaceStats: dict[str, int]
    conversation: list[dict[str, Any]]
    createdAt: str | None
    updatedAt: str | None
    staged: list[dict[str, Any]] | None = None
    committed: list[dict[str, Any]] | None = None


class SourceOut(BaseModel):
    id: str
    sessionId: str
    name: str
    sha256: str
    bytes: int
    unitCount: int
    createdAt: str | None
