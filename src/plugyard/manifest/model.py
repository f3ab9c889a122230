"""The canonical plugin descriptor: one model that holds every field of every seed.

Readers turn each manifest dialect into a :class:`PluginDescriptor`; exporters turn it
into other formats. Field names follow the vocabulary of DESIGN.md: *operation* (a
callable), *placement* (where it may stand in a pipeline), *host capability* (a service
the host lends), *family* (its typed contract) and *runtime* (where its code runs).

Fields a dialect carries that this model does not know are never dropped: they are kept
in ``x``, keyed by their JSON pointer in the source document, and reported as warnings.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator

Family = Literal["tool", "sd", "kb", "gs", "val", "plan"]
FAMILIES: tuple[Family, ...] = ("tool", "sd", "kb", "gs", "val", "plan")
Effect = Literal["read", "write", "destructive"]
Role = Literal["CAPABILITY_STAGE", "CONDITION", "ITERATOR", "FORK", "JOIN"]
ROLES: tuple[Role, ...] = ("CAPABILITY_STAGE", "CONDITION", "ITERATOR", "FORK", "JOIN")
CostClass = Literal["cheap", "moderate", "expensive"]
SecretScope = Literal["user", "system", "system_or_user"]
OperationKind = Literal["call", "action"]

#: Names this model's validation: the digest of its JSON schema (a test holds it to the
#: schema; change it too when a validator changes what the model accepts). A stored
#: descriptor written under this stamp was validated by this model when it was written.
DESCRIPTOR_STAMP = "f5f7e0848e196ae0"

#: The placement capability that puts a plugin under every capability section.
ALL_CAPABILITIES = "ALL"
#: The OLO engine's capability names, in pipeline order (custom names are allowed too).
PIPELINE_CAPABILITIES = ("ACCESS", "MEMORY", "RETRIEVAL", "MODEL", "CACHING", "TOOL")

#: Host capabilities of the Shu contract plus the ones DESIGN.md adds.
HOST_CAPABILITIES: frozenset[str] = frozenset(
    {
        "cache", "identity", "secrets", "http", "auth", "kb", "rate_limit", "scheduler",
        "storage", "cursor", "logger", "audit", "query", "ocr", "log", "utils",
    }
)  # fmt: skip

#: An object JSON Schema that accepts any object: the parameters of an operation that
#: declares none.
EMPTY_PARAMETERS: dict[str, JsonValue] = {"type": "object", "properties": {}}

#: A request a user might make that an operation (or the plugin) answers, written by
#: the plugin's author: discovery remembers it as if a caller had made it
#: (docs/discovery.md). Bounded so a manifest cannot flood the memory channel.
ExampleText = Annotated[str, Field(min_length=1, max_length=500)]
MAX_EXAMPLES = 20
Examples = Annotated[tuple[ExampleText, ...], Field(max_length=MAX_EXAMPLES)]

Identifier = Annotated[
    str,
    Field(min_length=1, max_length=200, pattern=r"^[^\s\x00-\x1f\x7f]+$"),
]


class _Model(BaseModel):
    """Frozen, strict, and closed: unknown input fields belong in ``x``, not here."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class PlannerHints(_Model):
    """DS003 planner priors used before learned outcomes exist."""

    expected_latency_ms: float | None = None
    expected_llm_calls: float | None = None
    relative_cost: float | None = None
    supported_acts: tuple[str, ...] = ()
    topic_tags: tuple[str, ...] = ()
    preferred_depth: str | None = None
    fallback_role: str | None = None
    confidence_when_matched: float | None = None


class Operation(_Model):
    """One callable of a plugin."""

    id: Identifier
    name: str | None = None
    description: str = ""
    kind: OperationKind = "call"
    parameters: dict[str, JsonValue] = Field(default_factory=lambda: dict(EMPTY_PARAMETERS))
    output_schema: dict[str, JsonValue] | None = None
    output_description: str | None = None
    examples: Examples = ()
    effect: Effect = "read"
    requires_approval: bool = False
    idempotent: bool = False
    #: Worth a machine of its own: runs on the execution backend's cluster when there is
    #: one (docs/scaling.md#ray), in process otherwise.
    heavy: bool = False
    streaming: bool = False
    required_scopes: tuple[str, ...] = ()
    post_process: bool = False
    post_process_prompt: str | None = None
    http_method: str | None = None
    http_path: str | None = None

    @field_validator("http_method")
    @classmethod
    def _upper_method(cls, value: str | None) -> str | None:
        return value.upper() if value is not None else None


class Placement(_Model):
    """Where a plugin may stand in an OLO pipeline.

    An empty ``capabilities`` tuple means *Undefined*; ``ALL`` means every capability.
    """

    capabilities: tuple[str, ...] = ()
    role: Role = "CAPABILITY_STAGE"
    only_inside_group: bool = False

    @property
    def undefined(self) -> bool:
        return not self.capabilities

    def allows(self, capability: str) -> bool:
        """Whether a stage plugin may stand under ``capability``."""
        return self.role == "CAPABILITY_STAGE" and (
            ALL_CAPABILITIES in self.capabilities or capability in self.capabilities
        )


class PythonRuntime(_Model):
    """In-process code. ``entrypoint`` is ``pkg.mod:Attr`` or dotted ``pkg.mod.Attr``;
    ``None`` means the functions of the plugin folder's own module."""

    kind: Literal["python"] = "python"
    entrypoint: str | None = None


class SubprocessRuntime(_Model):
    """A wrapper speaking newline-delimited JSON on stdin/stdout."""

    kind: Literal["subprocess"] = "subprocess"
    command: str
    args: tuple[str, ...] = ()
    protocol_version: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None


class HttpRuntime(_Model):
    """An external plugin called by method and path relative to ``base_url``."""

    kind: Literal["http"] = "http"
    base_url: str
    health_check_url: str | None = None
    timeout_s: float | None = None
    config: dict[str, JsonValue] = Field(default_factory=dict)
    #: What travels: ``params`` posts the bare parameters and reads any JSON back;
    #: ``homeclaw`` posts HomeClaw's ``PluginRequest`` and reads its ``PluginResult``
    #: (what HomeClaw's own external plugins speak; the HomeClaw dialect sets it).
    envelope: Literal["params", "homeclaw"] = "params"


class McpRuntime(_Model):
    """An MCP server whose tools are the plugin's operations."""

    kind: Literal["mcp"] = "mcp"
    transport: Literal["stdio", "streamable-http"] = "stdio"
    command: str | None = None
    args: tuple[str, ...] = ()
    url: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    health_check_url: str | None = None
    config: dict[str, JsonValue] = Field(default_factory=dict)


class NoRuntime(_Model):
    """Descriptor only: listed, searchable and placeable, but not callable."""

    kind: Literal["none"] = "none"
    reason: str | None = None


Runtime = Annotated[
    PythonRuntime | SubprocessRuntime | HttpRuntime | McpRuntime | NoRuntime,
    Field(discriminator="kind"),
]


class SecretRequirement(_Model):
    allowed_scope: SecretScope = "system_or_user"


class OpAuth(_Model):
    """Per-operation auth declaration of the Shu contract (AUTH-REF-001)."""

    provider: str | None = None
    mode: str | None = None
    scopes: tuple[str, ...] = ()
    subject_hint: str | None = None
    secrets: dict[str, SecretRequirement] = Field(default_factory=dict)


class IdentityRequirement(_Model):
    provider: str
    mode: str | None = None
    scopes: tuple[str, ...] = ()
    optional: bool = False


class PluginDescriptor(_Model):
    """The canonical plugin descriptor."""

    # identity
    id: Identifier
    name: str
    version: str | None = None
    description: str = ""
    description_long: str | None = None
    license: str | None = None
    tags: tuple[str, ...] = ()
    examples: Examples = ()
    icons: dict[str, str] = Field(default_factory=dict)
    knowledge: str | None = None  # MRP plugin.kus.md text

    # family and DS003 common fields
    family: Family = "tool"
    cost_class: CostClass | None = None
    uses_llm: bool | None = None
    model_roles: tuple[str, ...] = ()
    max_llm_calls: int | None = Field(default=None, ge=0)
    timeout_ms: int | None = Field(default=None, gt=0)
    planner_hints: PlannerHints | None = None
    provides: tuple[str, ...] = ()
    accepts: tuple[str, ...] = ()

    operations: tuple[Operation, ...] = ()
    placement: Placement = Field(default_factory=Placement)
    runtime: Runtime = Field(default_factory=NoRuntime)
    source: Literal["built-in", "external"] | None = None
    config: dict[str, JsonValue] = Field(default_factory=dict)

    # governance (Shu)
    host_capabilities: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()
    op_auth: dict[str, OpAuth] = Field(default_factory=dict)
    required_identities: tuple[IdentityRequirement, ...] = ()
    permissions: tuple[str, ...] = ()
    default_feed_op: str | None = None
    allowed_feed_ops: tuple[str, ...] = ()
    #: Shu's manifest ``origins``: labels of what the plugin writes, listed for the API
    #: and the console to enumerate; what is stored keeps ``source_type = "plugin:<id>"``.
    origins: tuple[str, ...] = ()

    # unknown fields of the source document, keyed by JSON pointer
    x: dict[str, JsonValue] = Field(default_factory=dict)

    def operation(self, operation_id: str) -> Operation | None:
        for op in self.operations:
            if op.id == operation_id:
                return op
        return None

    def to_data(self) -> dict[str, Any]:
        """Plain JSON data, without defaults, in field order."""
        data = self.model_dump(mode="json", exclude_defaults=True)
        if "runtime" in data:
            # The discriminator is a default too, but a reader cannot do without it.
            data["runtime"] = {"kind": self.runtime.kind, **data["runtime"]}
        return data


def descriptor_json_schema() -> dict[str, Any]:
    """The JSON Schema of the canonical descriptor (committed under ``schemas/``)."""
    schema = PluginDescriptor.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    # A canonical document names its schema; the model itself has no such field.
    schema["properties"] = {"$schema": {"type": "string"}, **schema["properties"]}
    schema["$id"] = "https://plugyard.dev/schemas/plugin-descriptor.schema.json"
    return schema
