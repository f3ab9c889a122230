"""The pipeline document as written: pydantic models at the edge (YAML or JSON).

A document is one pipeline — ordered capabilities, each a flow of nodes — plus,
optionally, named pipelines that its nodes may call (``pipeline: NAME``). A node is a
plugin stage, a group, or such a reference; a bare string is a plugin id. Shape faults
come from these models; everything that needs the registry (placement, roles, unknown
plugins) is judged afterwards by :mod:`plugyard.pipelines.validate`, so every fault of
a document is reported in one pass. docs/pipelines.md documents each field.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    JsonValue,
    Tag,
)

OnError = Literal["stop", "skip", "fallback"]
GroupOnError = Literal["stop", "skip"]
Mode = Literal["SYNC", "ASYNC"]
Completion = Literal["all", "first_success", "first_failure"]

#: The longest a pipeline may be given to run (one day).
MAX_TIMEOUT_MS = 86_400_000

PluginId = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[^\s\x00-\x1f\x7f]+$")]
Name = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")]
Key = Annotated[str, Field(min_length=1, max_length=200)]
Timeout = Annotated[int, Field(gt=0, le=MAX_TIMEOUT_MS)]


def _upper(value: Any) -> Any:
    return value.upper() if isinstance(value, str) else value


class _Model(BaseModel):
    """Frozen, strict and closed: an unknown field is a fault, not silently dropped."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class CallModel(_Model):
    """One plugin call: a stage, a group's control plugin, or a fallback.

    ``input`` maps parameter names to context paths; ``params`` are constants (an input
    mapping overrides a constant of the same name). ``output`` says where the result
    goes: omitted merges an object result into the context, a string stores it under
    that key, a mapping picks fields (``{key: path}``; key ``$`` merges).
    """

    plugin: PluginId
    id: Key | None = None
    operation: Key | None = None
    params: dict[str, JsonValue] = Field(default_factory=dict)
    input: dict[str, str] = Field(default_factory=dict)
    output: (
        Annotated[
            Annotated[Key, Tag("<key>")] | Annotated[dict[str, str], Tag("<pick>")],
            Discriminator(lambda v: "<key>" if isinstance(v, str) else "<pick>"),
        ]
        | None
    ) = None
    on_error: OnError | None = None
    fallback: PluginId | None = None
    timeout_ms: Timeout | None = None
    #: What an imported document said that plugyard keeps but does not act on.
    meta: dict[str, JsonValue] = Field(default_factory=dict)


def _slot_tag(value: Any) -> str:
    if isinstance(value, str):
        return "<name>"
    return "<many>" if isinstance(value, list) else "<call>"


Slot = Annotated[
    Annotated[PluginId, Tag("<name>")]
    | Annotated[CallModel, Tag("<call>")]
    | Annotated[
        list[Annotated[PluginId | CallModel, Field(union_mode="left_to_right")]], Tag("<many>")
    ],
    Discriminator(_slot_tag),
]


class GroupModel(_Model):
    """Children run in order (SYNC) or as concurrent branches (ASYNC, fork → join)."""

    id: Key | None = None
    mode: Annotated[Mode, BeforeValidator(_upper)] = "SYNC"
    condition: Slot | None = None
    iterator: Slot | None = None
    fork: Slot | None = None
    join: Slot | None = None
    children: list[Node] = Field(default_factory=list)
    else_: list[Node] = Field(default_factory=list, alias="else")
    completion: Completion = "all"
    timeout_ms: Timeout | None = None
    on_error: GroupOnError | None = None
    item_key: Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")] = "item"
    #: Where an iterating group puts the list of what each iteration wrote.
    output: Key | None = None
    meta: dict[str, JsonValue] = Field(default_factory=dict)


class PipelineRefModel(_Model):
    """Runs another pipeline of the same document, in place, on the same context."""

    pipeline: Name
    id: Key | None = None


def _node_tag(value: Any) -> str:
    # The tags are bracketed so that they never read as a key of the document when an
    # error's location is turned back into a JSON pointer.
    if isinstance(value, str):
        return "<name>"
    if isinstance(value, dict):
        if "plugin" in value:
            return "<plugin>"
        return "<pipeline>" if "pipeline" in value else "<group>"
    if isinstance(value, CallModel):
        return "<plugin>"
    return "<pipeline>" if isinstance(value, PipelineRefModel) else "<group>"


Node = Annotated[
    Annotated[PluginId, Tag("<name>")]
    | Annotated[CallModel, Tag("<plugin>")]
    | Annotated[GroupModel, Tag("<group>")]
    | Annotated[PipelineRefModel, Tag("<pipeline>")],
    Discriminator(_node_tag),
]


class CapabilityModel(_Model):
    """One capability of the pipeline and the flow of nodes that runs under it."""

    capability: Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[^\s]+$")]
    flow: list[Node] = Field(default_factory=list)


class PipelineModel(_Model):
    name: Name | None = None
    description: str = ""
    timeout_ms: Timeout | None = None
    on_error: OnError = "stop"
    fallback: PluginId | None = None
    capabilities: list[CapabilityModel] = Field(default_factory=list)
    meta: dict[str, JsonValue] = Field(default_factory=dict)


class DocumentModel(PipelineModel):
    """The top-level pipeline (when it has capabilities) and the named ones.

    ``entry`` names the pipeline a run starts with; without it a run starts with the
    top-level pipeline, else the one named ``default``, else the only one.
    """

    capabilities: list[CapabilityModel] | None = None  # type: ignore[assignment]
    pipelines: dict[Name, PipelineModel] = Field(default_factory=dict)
    entry: Name | None = None


GroupModel.model_rebuild()
DocumentModel.model_rebuild()
