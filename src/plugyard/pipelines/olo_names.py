"""Telling an OLO engine config from a plugyard pipeline document, and OLO's names.

An OLO config is recognised by its engine-level keys (``capabilityOrder``, the
deployment sections, an allow-list ``plugins``) or by a pipeline section's own keys
(``rootByCapability``, ``defaultTimeoutSeconds``, capability blocks with ``groups``).
A plugyard document has none of them: its capabilities hold ``flow``.
"""

from __future__ import annotations

from typing import Any

#: OLO's predefined capabilities in their canonical order (its ui-reference, §1).
CANONICAL_ORDER = (
    "ACCESS", "PRE_CONTEXT_SETUP", "PLANNER", "PLAN_EXECUTOR", "EXECUTION_CONTROLLER",
    "ITERATIVE_BLOCK", "MODEL", "RETRIEVAL", "RETRIEVE", "TOOL", "MCP", "MEMORY",
    "REFLECTION", "SUB_OBSERVABILITY", "SUB_CUSTOM", "ITERATIVE_BLOCK_END", "FILTER",
    "POST_PROCESS", "EVALUATION", "EVALUATE", "FEEDBACK", "FEEDBACK_CAPTURE", "LEARNING",
    "DATASET_BUILD", "TRAIN_TRIGGER", "MODEL_REGISTRY", "OBSERVABILITY", "CUSTOM",
)  # fmt: skip
ENGINE_KEYS = frozenset(
    {"capabilityOrder", "stageOrder", "capabilityPlugins", "stagePlugins", "mergePolicies",
     "defaultForkPlugin", "defaultJoinPlugin", "configVersion", "enabledFeatures", "worker",
     "temporal", "activity", "redis", "database", "dynamicPlugins", "dynamicPluginJars",
     "pluginRepoPackagePrefix", "queueTopology"}
)  # fmt: skip
SECTION_KEYS = frozenset(
    {"root", "rootByCapability", "rootByStage", "defaultTimeoutSeconds",
     "defaultAsyncCompletionPolicy", "defaultMaxGroupDepth", "mergePolicy", "capabilityPlugins",
     "stagePlugins"}
)  # fmt: skip
COMPLETION = {
    "ALL": "all", "ALL_SETTLED": "all", "FIRST_SUCCESS": "first_success",
    "FIRST_FAILURE": "first_failure",
}  # fmt: skip
IGNORED_NODE_KEYS = frozenset(
    {"retryPolicy", "scheduleToStartSeconds", "scheduleToCloseSeconds", "maxDepth",
     "mergePolicy", "label"}
)  # fmt: skip
GROUP_KEYS = frozenset(
    {"type", "executionMode", "children", "condition", "iterator", "forkPlugin", "joinPlugin",
     "asyncCompletionPolicy", "asyncOutputMergePolicy", "timeoutSeconds", "thenChildren",
     "thenGroup", "elseChildren", "elseGroup", "elseifBranches"}
)  # fmt: skip
PLUGIN_KEYS = frozenset({"type", "name", "pluginType", "timeoutSeconds"})


def is_olo(data: Any) -> bool:
    """Whether ``data`` is an OLO engine config (or one OLO pipeline section)."""
    if not isinstance(data, dict):
        return False
    if ENGINE_KEYS & data.keys() or isinstance(data.get("plugins"), list):
        return True
    if SECTION_KEYS & data.keys():
        return True
    pipelines = data.get("pipelines")
    if isinstance(pipelines, dict):
        return any(isinstance(s, dict) and _is_section(s) for s in pipelines.values())
    return False


def _is_section(section: dict[str, Any]) -> bool:
    if SECTION_KEYS & section.keys():
        return True
    blocks = section.get("capabilities", section.get("stages"))
    return isinstance(blocks, list) and any(
        isinstance(b, dict) and ("groups" in b or "stage" in b) for b in blocks
    )
