"""The field tables of the MRP-VM dialect and the checks that need no canonical home:
detection, the kept type-specific keys, the description rule and which ``x`` entries a
written document may carry."""

from __future__ import annotations

import re
from typing import Any

from plugyard.manifest.families import CONTRACTS, FAMILY_OF_TYPE
from plugyard.manifest.pointer import split
from plugyard.manifest.reading import OVERLAY_KEY, ReadContext

#: DS003 ``plannerHints`` keys and their canonical spelling.
HINT_FIELDS = {
    "expectedLatencyMs": "expected_latency_ms", "expectedLLMCalls": "expected_llm_calls",
    "relativeCost": "relative_cost", "supportedActs": "supported_acts",
    "topicTags": "topic_tags", "preferredDepth": "preferred_depth",
    "fallbackRole": "fallback_role", "confidenceWhenMatched": "confidence_when_matched",
}  # fmt: skip
SINGULAR_ROLES = ("modelRole", "ingestModelRole")
#: Keys that make a document a DS016 wrapper manifest rather than a built-in descriptor.
WRAPPER_SIGNS = ("command", "args", "protocolVersion")
#: The fields only MRP-VM's wrapper manager reads (to pick a helper), so a wrapper that
#: writes them is written for it: a DS016 process, not one speaking plugyard's protocol.
DS016_SIGNS = ("priority", "exclusive", "capabilities", "keywords")
#: ``convention`` (a plugyard key beside a wrapper's own): how the process is spoken to.
CONVENTIONS = ("ds016", "plugyard")
#: A built-in with ``index.mjs`` beside it runs in plugyard's Node host for MRP-VM plugins;
#: the subprocess runtime resolves this argument to the host script's path.
NODE_HOST = "plugyard:mrp-host"
NODE_MODULE = "index.mjs"

# Read into canonical fields.
_MAPPED = (
    "id", "type", "name", "version", "description", "costClass", "usesLLM", "modelRoles",
    "maxLLMCalls", "tags", "timeoutMs", "plannerHints", "provides", "accepts", "command",
    "args", "protocolVersion", "capabilities", "keywords",
)  # fmt: skip
# Known, checked, and kept in ``x`` as written: the canonical model has no place for them.
_KEPT_TEXT = (
    "profileId", "responseRendererId", "seedBundleGeneratorId", "contextNormalizerId",
    "plannerStyle",
)  # fmt: skip
_LEGACY_TEXT = ("modeId", "strategyId")
_KEPT_OTHER = ("dependencyChecks", "promptFiles", "priority", "exclusive", "maxInputSizeBytes")
# Read by the reader itself, and kept in ``x`` too.
_KEPT = (
    *_KEPT_TEXT, *_LEGACY_TEXT, *_KEPT_OTHER, *SINGULAR_ROLES, "knowledgeUnitsFile", "timeout",
    "convention",
)  # fmt: skip
KNOWN_KEYS = frozenset((*_MAPPED, *_KEPT))

# Keys of the other dialects and of MRP-VM's own catalog (config/plugins.json), which
# declares no descriptor: a document with any of them is not an MRP-VM descriptor.
_FOREIGN = frozenset(
    {
        "plugin", "schemaVersion", "$schema", "entrypoints", "module", "op_auth", "plugin_id",
        "health_check_url", "description_long", "config", "builtins", "defaultPlannerPlugin",
        "plannerFallbackOrder", "wrappersDir", "required_identities", "default_feed_op",
        "allowed_feed_ops", "chat_callable_ops", "display_name", "ui", "tools",
    }
)  # fmt: skip
_RUNTIME_TYPES = frozenset({"http", "subprocess", "mcp", "python", "builtin", "built-in", "inline"})
_SIGNS = frozenset(
    {
        "usesLLM", "maxLLMCalls", "modelRoles", "modelRole", "ingestModelRole", "timeoutMs",
        "provides", "accepts", "profileId", "responseRendererId", "seedBundleGeneratorId",
        "contextNormalizerId", "plannerStyle", "modeId", "strategyId", "maxInputSizeBytes",
    }
)  # fmt: skip


def score(data: dict[str, Any]) -> int:
    if _FOREIGN & data.keys():
        return 0
    capabilities = data.get("capabilities")
    if isinstance(capabilities, list) and any(isinstance(c, dict) for c in capabilities):
        return 0  # HomeClaw operations
    kind = data.get("type")
    points = 0
    if isinstance(kind, str):
        if kind in _RUNTIME_TYPES:
            return 0
        if kind in FAMILY_OF_TYPE or kind.endswith("-plugin"):
            points += 6
        elif kind in CONTRACTS:
            points += 3
        elif kind == "tool":
            points += 2
    if isinstance(data.get("plannerHints"), dict):
        points += 3
    if "knowledgeUnitsFile" in data:
        points += 3
    if "costClass" in data:
        points += 2
    if ("id" in data or "name" in data) and ("command" in data or "protocolVersion" in data):
        points += 3
    return points + len(_SIGNS & data.keys()) if points else 0


def keep_typed(data: dict[str, Any], ctx: ReadContext) -> None:
    """Check the kept keys' types and keep them in ``x`` as written."""
    for key in (*_KEPT_TEXT, *_LEGACY_TEXT, *_KEPT_OTHER):
        value = data.get(key)
        if value is None:
            continue
        here = f"/{key}"
        if key in _LEGACY_TEXT:
            ctx.warn("legacy_field", here, f"'{key}' is superseded by the type-specific ids")
        if key == "dependencyChecks":
            ctx.items(value, here)
        elif key == "promptFiles":
            ctx.mapping(value, here)
        elif key == "exclusive":
            ctx.boolean(value, here)
        elif key in {"priority", "maxInputSizeBytes"}:
            number = ctx.integer(value, here)
            if key == "maxInputSizeBytes" and number is not None and number <= 0:
                ctx.error("manifest_invalid_value", here, "must be a positive byte count")
        else:
            ctx.text(value, here)
        ctx.keep(here, value)


_ABBREVIATIONS = re.compile(r"\b(?:e\.g|i\.e|etc|vs|cf)\.", re.IGNORECASE)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")


def sentences(text: str) -> int:
    """How many sentences ``text`` holds, by terminal punctuation (a heuristic)."""
    body = _ABBREVIATIONS.sub("_", text.strip())
    return len([part for part in _SENTENCE_BREAK.split(body) if part.strip()])


def check_description(description: str, ctx: ReadContext) -> None:
    count = sentences(description)
    if not 1 <= count <= 3:
        ctx.warn(
            "description_sentences",
            "/description",
            f"DS003 asks for a 1-3 sentence description; found {count}",
        )


def writable(pointer: str, doc: dict[str, Any]) -> bool:
    """Whether an ``x`` entry can go back into a written document as the reader kept it.

    Entries another dialect kept (``/plugin/...``, ``/capabilities/0/...``) would change
    what the document means or which dialect it is; the overlay carries those instead.
    """
    try:
        tokens = split(pointer)
    except ValueError:
        return False
    if not tokens or tokens[0] in _FOREIGN or tokens[0] == OVERLAY_KEY:
        return False
    head = tokens[0]
    if len(tokens) == 1:
        return head in _KEPT or head not in KNOWN_KEYS
    if head == "plannerHints":
        return len(tokens) == 2 and tokens[1] not in HINT_FIELDS and head in doc
    return head not in KNOWN_KEYS
