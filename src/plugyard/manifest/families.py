"""The typed family contracts of MRP-VM (DS027): what a plugin of each family answers.

A family plugin does not declare its operations: its ``type`` names a contract, and the
contract fixes the operations, their parameters and the status objects they return. The
schemas here are that contract in JSON Schema (2020-12), so the executor validates a
family call like any other call.

The schemas require only what a caller or a plugin always has (``prompt``; ``status``):
DS027 lets inputs grow ("additional fields MAY be added later") and a plugin that fails
still returns a status object, so extra fields are allowed and the other fields are
typed but optional. Names inside the payloads keep the MRP spelling (``sourceLink``,
``llmCalls``) because plugins written for MRP-VM read and write them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import JsonValue

from plugyard.manifest.model import Effect, Family, Operation

# --------------------------------------------------------------------------- statuses

SD_STATUSES = ("success", "unsupported", "error")
KB_RETRIEVE_STATUSES = ("success", "insufficient", "error")
KB_HOOK_STATUSES = ("accepted", "skipped", "error")
GS_STATUSES = ("success", "no-context", "error", "needs-decomposition")
VAL_STATUSES = ("accepted", "rejected")
#: Every status a family operation may return (the family statuses of a call result).
FAMILY_STATUSES: frozenset[str] = frozenset(
    SD_STATUSES + KB_RETRIEVE_STATUSES + KB_HOOK_STATUSES + GS_STATUSES + VAL_STATUSES
)
_WEAK = ("unsupported", "insufficient", "no-context")
#: Weak non-terminal outcomes (DS003): the stage continues or another planner is tried.
WEAK_STATUSES: frozenset[str] = frozenset(_WEAK)
#: The status of one stage in the planner outcome record; ``skipped-budget`` is the core's.
STAGE_STATUSES = (
    "success", "insufficient", "error", "unsupported", "skipped-budget", "accepted",
    "rejected", "needs-decomposition",
)  # fmt: skip
STAGES = ("seed-detector", "kb", "goal-solver", "validation")
FRAME_PURPOSES = ("strategy-guidance", "subtask-decomposition")
RETRIEVAL_PURPOSES = ("task-evidence", "strategy-guidance", "mixed")
SESSION_EVENT_TYPES = ("session-created", "kb-loaded", "kb-saved", "kb-forked", "session-kus-added")
SESSION_EVENT_SCOPES = ("current-turn", "committed-session")
GUIDANCE_PHASES = ("planner", "goalSolver", "decomposition", "validation", "seedRouting")

# --------------------------------------------------------------------------- schemas


def _obj(properties: dict[str, Any], *required: str) -> dict[str, JsonValue]:
    schema: dict[str, JsonValue] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


def _nullable(kind: str) -> dict[str, JsonValue]:
    return {"type": [kind, "null"]}


def _choice(values: tuple[str, ...], *, nullable: bool = False) -> dict[str, JsonValue]:
    return {"enum": [*values, None] if nullable else list(values)}


_STRING = {"type": "string"}
_STRINGS = {"type": "array", "items": _STRING}
_OBJECTS = {"type": "array", "items": {"type": "object"}}
_COUNT = {"type": "integer", "minimum": 0}
_ERROR = {
    "anyOf": [{"type": "null"}, _obj({"code": _STRING, "message": _STRING}, "code", "message")]
}
_LLM_METADATA = _obj({"llmCalls": _COUNT, "model": _nullable("string")})

#: One Knowledge Unit of background evidence (DS003 structured payload).
KNOWLEDGE_UNIT_SCHEMA = _obj({"title": _STRING, "sourceLink": _STRING, "text": _STRING}, "text")
_STRUCTURED_PROPERTIES = {
    "prompt": _STRING,
    "context": {"type": "array", "items": KNOWLEDGE_UNIT_SCHEMA},
}
#: The structured payload every family call receives instead of compacted Markdown.
STRUCTURED_INPUT_SCHEMA = _obj(_STRUCTURED_PROPERTIES, "prompt")
SOURCE_TEXT_SCHEMA = _obj(
    {"sourceId": _STRING, "sourceName": _STRING, "text": _STRING, "units": _OBJECTS}, "text"
)
SESSION_EVENT_SCHEMA = _obj(
    {
        "eventType": _choice(SESSION_EVENT_TYPES),
        "sessionId": _STRING,
        "kbId": _nullable("string"),
        "kbName": _nullable("string"),
        "requestedKbId": _nullable("string"),
        "previousKbId": _nullable("string"),
        "previousKbName": _nullable("string"),
        "repositoryMeta": _nullable("object"),
        "workspaceStats": {"type": "object"},
        "snapshot": _nullable("object"),
        "units": _OBJECTS,
        "scope": _choice(SESSION_EVENT_SCOPES, nullable=True),
        "reason": _nullable("string"),
    },
    "eventType",
    "sessionId",
)
PLANNER_INPUT_SCHEMA = _obj(
    {
        **_STRUCTURED_PROPERTIES,
        "intents": _OBJECTS,
        "decomposedIntents": _OBJECTS,
        "contextProfiles": _OBJECTS,
        "currentTurnUnits": _OBJECTS,
        "kb": _obj({"kbId": _nullable("string"), "kbName": _nullable("string")}),
        "strategyGuidance": _OBJECTS,
        "phaseGuidance": _obj(dict.fromkeys(GUIDANCE_PHASES, _OBJECTS)),
        "pins": {"type": "object", "additionalProperties": _STRING},
        "sessionPreferences": {"type": "object"},
    }
)
PLANNER_OUTCOME_SCHEMA = _obj(
    {
        "requestId": _STRING,
        "sessionId": _nullable("string"),
        "plannerPluginId": _STRING,
        "plannerAttempts": _STRINGS,
        "stages": {
            "type": "array",
            "items": _obj(
                {
                    "plannerPluginId": _STRING,
                    "stage": _choice(STAGES),
                    "pluginId": _STRING,
                    "status": _choice(STAGE_STATUSES),
                    "durationMs": {"type": "number", "minimum": 0},
                    "llmCalls": _COUNT,
                    "sufficient": _nullable("boolean"),
                    "model": _nullable("string"),
                    "modelRole": _nullable("string"),
                },
                "stage",
                "pluginId",
                "status",
            ),
        },
        "finalStatus": _choice(("success", "failure")),
        "finalAnswerStatus": _choice(("answered", "no-context"), nullable=True),
        "frameDepth": _COUNT,
        "framePurpose": _choice(FRAME_PURPOSES, nullable=True),
    },
    "plannerPluginId",
    "stages",
    "finalStatus",
)


def _status(statuses: tuple[str, ...], **properties: Any) -> dict[str, JsonValue]:
    return _obj({"status": _choice(statuses), **properties, "error": _ERROR}, "status")


def _stage(statuses: tuple[str, ...]) -> tuple[str, ...]:
    """A stage operation's statuses: DS027's own, plus the weak outcomes DS003 lets any
    plugin answer so that the core continues the stage ("Plugins MAY return weak
    non-terminal outcomes")."""
    return tuple(dict.fromkeys((*statuses, *_WEAK)))


# --------------------------------------------------------------------------- contracts


@dataclass(frozen=True)
class OperationContract:
    """One method of a family: ``id`` in snake_case, ``method`` as MRP-VM spells it."""

    id: str
    method: str
    description: str
    parameters: dict[str, JsonValue]
    output_schema: dict[str, JsonValue]
    statuses: tuple[str, ...] = ()
    effect: Effect = "read"

    def operation(self) -> Operation:
        return Operation(
            id=self.id,
            name=self.method,
            description=self.description,
            parameters=self.parameters,
            output_schema=self.output_schema,
            effect=self.effect,
        )


@dataclass(frozen=True)
class FamilyContract:
    family: Family
    mrp_type: str
    stage: str | None
    planner_hints_required: bool
    operations: tuple[OperationContract, ...]


_SD = FamilyContract("sd", "sd-plugin", "seed-detector", True, (
    OperationContract(
        "detect_seeds", "detectSeeds",
        "Detect the task seeds (intentCNL) and the current-turn knowledge units "
        "(currentTurnContextCNL) of a request in one pass.",
        STRUCTURED_INPUT_SCHEMA,
        _status(
            _stage(SD_STATUSES), intentCNL=_nullable("string"),
            currentTurnContextCNL=_nullable("string"), metadata=_LLM_METADATA,
        ),
        _stage(SD_STATUSES),
    ),
    OperationContract(
        "normalize_persistent_context", "normalizePersistentContext",
        "Normalize source text into grouped knowledge units (contextCNL) for KB ingest.",
        STRUCTURED_INPUT_SCHEMA,
        _status(SD_STATUSES, contextCNL=_nullable("string"), metadata={"type": "object"}),
        SD_STATUSES,
    ),
))  # fmt: skip
_KB = FamilyContract("kb", "kb-plugin", "kb", True, (
    OperationContract(
        "retrieve", "retrieve",
        "Retrieve the knowledge units relevant to the task, at the right abstraction level.",
        STRUCTURED_INPUT_SCHEMA,
        _status(
            _stage(KB_RETRIEVE_STATUSES),
            resolvedIntents={"anyOf": [{"type": "null"}, _OBJECTS]},
            sufficient={"type": "boolean"},
            retrievalTrace=_obj({
                "purpose": _choice(RETRIEVAL_PURPOSES), "kuLevelsUsed": _STRINGS,
                "totalKUsConsidered": _COUNT, "selectedKUCount": _COUNT,
            }),
        ),
        _stage(KB_RETRIEVE_STATUSES),
    ),
    OperationContract(
        "on_source_text", "onSourceText",
        "Offer uploaded source text and its units so the plugin may build private indices.",
        SOURCE_TEXT_SCHEMA,
        _status(KB_HOOK_STATUSES, artifacts=_OBJECTS),
        KB_HOOK_STATUSES,
        "write",
    ),
    OperationContract(
        "on_session_event", "onSessionEvent",
        "Notify the plugin of a session lifecycle event (session created, KB loaded, saved "
        "or forked, session units added).",
        SESSION_EVENT_SCHEMA,
        _status(KB_HOOK_STATUSES),
        KB_HOOK_STATUSES,
        "write",
    ),
))  # fmt: skip
_GS = FamilyContract("gs", "gs-plugin", "goal-solver", True, (
    OperationContract(
        "solve", "solve",
        "Answer the task from the evidence, or ask for decomposition when it is too broad.",
        STRUCTURED_INPUT_SCHEMA,
        _status(
            _stage(GS_STATUSES), responseMarkdown=_nullable("string"),
            responseDocument=_nullable("object"), metadata=_LLM_METADATA,
        ),
        _stage(GS_STATUSES),
    ),
))  # fmt: skip
_VAL = FamilyContract("val", "val-plugin", "validation", False, (
    OperationContract(
        "validate", "validate",
        "Accept or reject a goal solver's answer; a rejection makes the planner backtrack.",
        STRUCTURED_INPUT_SCHEMA,
        _status(
            _stage(VAL_STATUSES), verdict=_choice(VAL_STATUSES), reason=_STRING,
            metadata=_LLM_METADATA,
        ),
        _stage(VAL_STATUSES),
    ),
))  # fmt: skip
_PLAN = FamilyContract("plan", "mrp-plan-plugin", None, False, (
    OperationContract(
        "build_plan", "buildPlan",
        "Order the KB and goal-solver plugins for a request and decide whether to decompose.",
        PLANNER_INPUT_SCHEMA,
        _obj(
            {
                "plannerPluginId": _STRING, "kbPluginOrder": _STRINGS,
                "goalSolverOrder": _STRINGS, "decompose": {"type": "boolean"},
                "framePurpose": _choice(FRAME_PURPOSES, nullable=True), "notes": _STRINGS,
            },
            "kbPluginOrder", "goalSolverOrder",
        ),
    ),
    OperationContract(
        "record_outcome", "recordOutcome",
        "Record the outcome of a run so the planner can learn its priors.",
        PLANNER_OUTCOME_SCHEMA,
        {"type": "null"},
        effect="write",
    ),
))  # fmt: skip

#: The contract of every MRP-VM family; ``tool`` has none.
CONTRACTS: dict[Family, FamilyContract] = {c.family: c for c in (_SD, _KB, _GS, _VAL, _PLAN)}
#: MRP-VM ``type`` → family, and back.
FAMILY_OF_TYPE: dict[str, Family] = {c.mrp_type: c.family for c in CONTRACTS.values()}
TYPE_OF_FAMILY: dict[Family, str] = {c.family: c.mrp_type for c in CONTRACTS.values()}


_BY_NAME: dict[str, FamilyContract] = {str(k): v for k, v in CONTRACTS.items()}


def contract(family: str) -> FamilyContract | None:
    return _BY_NAME.get(family)


@cache
def family_operations(family: str) -> tuple[Operation, ...]:
    """The operations a plugin of ``family`` implements (none for ``tool``)."""
    found = contract(family)
    return tuple(op.operation() for op in found.operations) if found else ()
