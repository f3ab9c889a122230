"""OLO engine configuration → a plugyard pipeline document.

OLO (Open LLM Orchestrator) keeps its pipelines in an engine config: ``capabilityOrder``
(legacy ``stageOrder``) and ``pipelines{name: section}``, each section a capability
map (``root`` / ``rootByCapability``) or a ``capabilities`` list of groups. This reader
maps what has a plugyard meaning and says what it refuses (``olo_unsupported``) or
ignores (warning ``olo_ignored``); docs/pipelines.md has the table. Every node it emits
remembers the pointer it came from, so faults found later name the OLO document's place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from plugyard.errors import Problem
from plugyard.manifest.pointer import pointer_join
from plugyard.pipelines.olo_names import (
    CANONICAL_ORDER,
    COMPLETION,
    GROUP_KEYS,
    IGNORED_NODE_KEYS,
    PLUGIN_KEYS,
    SECTION_KEYS,
)


@dataclass
class Converted:
    """The plugyard document data, and where each of its parts came from."""

    data: dict[str, Any]
    origins: dict[str, str] = field(default_factory=dict)
    faults: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)


def read_olo(data: dict[str, Any], *, engine: bool = False) -> Converted:
    """Map an OLO engine config; faults point into the OLO document.

    ``engine`` reads it as OLO's engine does: a capability-map key missing from
    ``capabilityOrder`` runs after the ordered ones, by name (a warning, not a fault).
    """
    return _Reader(data, engine).read()


class _Reader:
    def __init__(self, data: dict[str, Any], engine: bool = False) -> None:
        self.source = data
        self.engine = engine
        self.out = Converted({"pipelines": {}})
        order = data.get("capabilityOrder", data.get("stageOrder"))
        self.custom = _mapping(data.get("capabilities"))
        if isinstance(order, list) and all(isinstance(c, str) for c in order):
            self.order: tuple[str, ...] = tuple(order)
            self.loops(order, "/capabilityOrder" if "capabilityOrder" in data else "/stageOrder")
        else:
            if order is not None:
                key = "/capabilityOrder" if "capabilityOrder" in data else "/stageOrder"
                self.fault("invalid_value", key, "a list of capability names")
            self.order = CANONICAL_ORDER + tuple(c for c in self.custom if c not in CANONICAL_ORDER)
        self.engine_plugins = _mapping(data.get("capabilityPlugins", data.get("stagePlugins")))
        self.fork = data.get("defaultForkPlugin")
        self.join = data.get("defaultJoinPlugin")
        allow = data.get("plugins")
        self.allow = set(allow) if isinstance(allow, list) and allow else None
        self.plugins: dict[str, Any] = dict(self.engine_plugins)
        self.completion: str | None = "all"

    def fault(self, code: str, pointer: str, message: str) -> None:
        self.out.faults.append(Problem(code, pointer, message))

    def loops(self, order: list[str], key: str) -> None:
        """OLO chains ``capabilityOrder`` into its execution graph (each capability to
        the next); a capability named twice closes a loop, and OLO's engine refuses the
        config ("ExecutionGraph has a cycle")."""
        seen: dict[str, int] = {}
        for index, name in enumerate(order):
            if name in seen:
                loop = " → ".join([*order[seen[name] : index], name])
                self.fault("capability_cycle", f"{key}/{index}", f"the capabilities loop: {loop}")
                return
            seen[name] = index

    def ignored(self, pointer: str, message: str) -> None:
        self.out.warnings.append(Problem("olo_ignored", pointer, message))

    def read(self) -> Converted:
        sections = self.source.get("pipelines")
        if sections is None and SECTION_KEYS & self.source.keys():
            self.section(self.source, "", "/pipelines/default", "default")
        elif not isinstance(sections, dict) or not sections:
            self.fault("missing_field", "", "an OLO engine config needs 'pipelines'")
        else:
            for name, section in sections.items():
                src = pointer_join("/pipelines", name)
                if not isinstance(section, dict):
                    self.fault("invalid_value", src, "a pipeline section is an object")
                    continue
                self.section(section, src, src, name)
        return self.out

    # ------------------------------------------------------------------ sections

    def section(self, section: dict[str, Any], src: str, dst: str, name: str) -> None:
        self.out.origins[dst] = src
        pipeline: dict[str, Any] = {"capabilities": []}
        seconds = section.get("defaultTimeoutSeconds")
        if isinstance(seconds, int) and not isinstance(seconds, bool) and seconds > 0:
            pipeline["timeout_ms"] = seconds * 1000
        for key in ("defaultMaxGroupDepth", "mergePolicy"):
            if key in section:
                self.ignored(f"{src}/{key}", f"{key} has no plugyard meaning")
        self.completion = COMPLETION.get(str(section.get("defaultAsyncCompletionPolicy", "ALL")))
        section_plugins = section.get("capabilityPlugins", section.get("stagePlugins"))
        self.plugins = {**self.engine_plugins, **_mapping(section_plugins)}
        self.out.data["pipelines"][name] = pipeline
        # OLO's deserializer: ``capabilities`` else the legacy ``stages``; then
        # ``rootByCapability`` (legacy ``rootByStage``), else ``root``.
        blocks_key = "capabilities" if "capabilities" in section else "stages"
        blocks = section.get(blocks_key)
        root_key = next(
            (k for k in ("rootByCapability", "rootByStage", "root") if k in section), "root"
        )
        root = section.get(root_key)
        if isinstance(blocks, list) and blocks:
            for index, block in enumerate(blocks):
                self.block(block, f"{src}/{blocks_key}/{index}", pipeline, dst)
        elif isinstance(root, dict) and "type" in root:
            self.fault(
                "olo_unsupported",
                f"{src}/{root_key}",
                "a single root tree names no capability; use rootByCapability",
            )
        elif isinstance(root, dict):
            self.capability_map(root, f"{src}/{root_key}", pipeline, dst)
        else:
            self.fault("missing_field", src, "a section needs rootByCapability or capabilities")

    def capability_map(
        self, root: dict[str, Any], src: str, pipeline: dict[str, Any], dst: str
    ) -> None:
        ordered = [c for c in self.order if c in root]
        rest = sorted(c for c in root if c not in self.order)
        for name in rest:
            if self.engine:
                self.out.warnings.append(
                    Problem(
                        "unordered_capability",
                        pointer_join(src, name),
                        f"{name!r} is not in capabilityOrder; OLO's engine runs it after "
                        "the ordered capabilities, by name",
                    )
                )
            else:
                self.fault(
                    "unordered_capability",
                    pointer_join(src, name),
                    f"{name!r} is not in capabilityOrder (engine mode runs it last)",
                )
        for name in dict.fromkeys([*ordered, *(rest if self.engine else [])]):
            here = pointer_join(src, name)
            at = f"{dst}/capabilities/{len(pipeline['capabilities'])}"
            self.out.origins[at] = here
            flow = self.top_level(root[name], here, f"{at}/flow", [])
            pipeline["capabilities"].append({"capability": name, "flow": flow})

    def block(self, block: Any, src: str, pipeline: dict[str, Any], dst: str) -> None:
        name = block.get("capability", block.get("stage")) if isinstance(block, dict) else None
        if not isinstance(name, str):
            self.fault("missing_field", src, "a capability block needs 'capability'")
            return
        at = f"{dst}/capabilities/{len(pipeline['capabilities'])}"
        self.out.origins[at] = src
        flow: list[Any] = []
        groups = block.get("groups")
        for index, group in enumerate(groups if isinstance(groups, list) else []):
            self.top_level(group, f"{src}/groups/{index}", f"{at}/flow", flow)
        pipeline["capabilities"].append({"capability": name, "flow": flow})

    def top_level(self, node: Any, src: str, dst: str, flow: list[Any]) -> list[Any]:
        """A capability's own group: when it only lists children, they are the flow."""
        plain = (
            isinstance(node, dict)
            and not _is_plugin(node)
            and str(node.get("executionMode", "SYNC")).upper() == "SYNC"
            and not ({"condition", "iterator", "timeoutSeconds"} & node.keys())
        )
        if plain:
            children = node.get("children")
            for index, child in enumerate(children if isinstance(children, list) else []):
                flow.append(self.node(child, f"{src}/children/{index}", f"{dst}/{len(flow)}"))
        else:
            flow.append(self.node(node, src, f"{dst}/{len(flow)}"))
        return flow

    # ------------------------------------------------------------------ nodes

    def node(self, node: Any, src: str, dst: str) -> Any:
        self.out.origins[dst] = src
        if isinstance(node, str):
            return self.name(node, src)
        if not isinstance(node, dict):
            self.fault("invalid_value", src, "a node is a plugin name or an object")
            return {"children": []}
        return self.plugin(node, src, dst) if _is_plugin(node) else self.group(node, src, dst)

    def name(self, name: str, src: str) -> str:
        """OLO resolution: a custom capability, then capabilityPlugins, then the name."""
        custom = self.custom.get(name)
        resolved = name
        if isinstance(custom, dict) and isinstance(custom.get("name"), str):
            resolved = custom["name"]
        elif isinstance(self.plugins.get(name), str):
            resolved = self.plugins[name]
        if self.allow is not None and not {name, resolved} & self.allow:
            self.fault("plugin_not_allowed", src, f"{resolved!r} is not in the 'plugins' list")
        return resolved

    def plugin(self, node: dict[str, Any], src: str, dst: str) -> Any:
        name = node.get("name")
        if not isinstance(name, str) or not name:
            self.fault("missing_field", src, "a PLUGIN node needs 'name'")
            return {"children": []}
        out: dict[str, Any] = {"plugin": self.name(name, f"{src}/name")}
        self.out.origins[f"{dst}/plugin"] = f"{src}/name"
        if isinstance(node.get("pluginType"), str):
            out["meta"] = {"pluginType": node["pluginType"]}
        self.timeout(node, src, dst, out)
        self.unknown(node, src, PLUGIN_KEYS)
        return out

    def group(self, node: dict[str, Any], src: str, dst: str) -> dict[str, Any]:
        mode = str(node.get("executionMode", "SYNC")).upper()
        out: dict[str, Any] = {"mode": mode}
        for key, slot in (("condition", "condition"), ("iterator", "iterator")):
            if isinstance(node.get(key), str):
                out[slot] = self.name(node[key], f"{src}/{key}")
                self.out.origins[f"{dst}/{slot}"] = f"{src}/{key}"
        for key, slot, default in (
            ("forkPlugin", "fork", self.fork),
            ("joinPlugin", "join", self.join),
        ):
            value = node.get(key, default if mode == "ASYNC" else None)
            if isinstance(value, str):
                out[slot] = self.name(value, f"{src}/{key}")
                self.out.origins[f"{dst}/{slot}"] = f"{src}/{key}" if key in node else src
        policy = node.get("asyncCompletionPolicy")
        completion = COMPLETION.get(str(policy)) if policy is not None else self.completion
        if completion is None:
            self.fault("invalid_value", f"{src}/asyncCompletionPolicy", f"unknown {policy!r}")
        elif completion != "all":
            out["completion"] = completion
        merge = node.get("asyncOutputMergePolicy")
        if merge not in (None, "LAST_WINS"):
            self.ignored(f"{src}/asyncOutputMergePolicy", "the join plugin reduces the branches")
        self.timeout(node, src, dst, out)
        out["children"] = self.branch(node, "then", src, f"{dst}/children")
        # elseif i becomes a group in the else of the one before it: else/0/else/0/…
        count = len(_list(node.get("elseifBranches")))
        otherwise = self.branch(node, "else", src, f"{dst}{'/else/0' * count}/else")
        for index in reversed(range(count)):
            nested = f"{dst}{'/else/0' * (index + 1)}"
            otherwise = [self.elseif(node, index, otherwise, src, nested)]
        if otherwise:
            out["else"] = otherwise
        self.unknown(node, src, GROUP_KEYS)
        return out

    def branch(self, node: dict[str, Any], which: str, src: str, dst: str) -> list[Any]:
        single, many = f"{which}Group", f"{which}Children"
        if isinstance(node.get(single), dict):
            return [self.node(node[single], f"{src}/{single}", f"{dst}/0")]
        key = many if many in node else ("children" if which == "then" else None)
        if key is None:
            return []
        items = _list(node.get(key))
        return [self.node(c, f"{src}/{key}/{i}", f"{dst}/{i}") for i, c in enumerate(items)]

    def elseif(
        self, node: dict[str, Any], index: int, otherwise: list[Any], src: str, dst: str
    ) -> dict[str, Any]:
        """``elseifBranches[i]`` becomes a group nested in the previous one's ``else``."""
        here = f"{src}/elseifBranches/{index}"
        self.out.origins[dst] = here
        branch = _list(node.get("elseifBranches"))[index]
        out: dict[str, Any] = {"mode": "SYNC", "else": otherwise}
        if not isinstance(branch, dict) or not isinstance(branch.get("condition"), str):
            self.fault("missing_field", here, "an elseif branch needs 'condition'")
            return out
        out["condition"] = self.name(branch["condition"], f"{here}/condition")
        if isinstance(branch.get("thenGroup"), dict):
            then = f"{here}/thenGroup"
            out["children"] = [self.node(branch["thenGroup"], then, f"{dst}/children/0")]
        else:
            items = _list(branch.get("then"))
            out["children"] = [
                self.node(c, f"{here}/then/{i}", f"{dst}/children/{i}") for i, c in enumerate(items)
            ]
        return out

    def timeout(self, node: dict[str, Any], src: str, dst: str, out: dict[str, Any]) -> None:
        seconds = node.get("timeoutSeconds")
        if isinstance(seconds, int) and not isinstance(seconds, bool) and seconds > 0:
            out["timeout_ms"] = seconds * 1000
            self.out.origins[f"{dst}/timeout_ms"] = f"{src}/timeoutSeconds"
        elif seconds is not None:
            self.fault("invalid_value", f"{src}/timeoutSeconds", "a positive whole number")

    def unknown(self, node: dict[str, Any], src: str, known: frozenset[str]) -> None:
        for key in node:
            if key in IGNORED_NODE_KEYS:
                self.ignored(pointer_join(src, key), f"{key} has no plugyard meaning")
            elif key not in known:
                self.ignored(pointer_join(src, key), f"unknown field {key!r}")


def _is_plugin(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    if isinstance(kind, str):
        return kind.upper() in {"PLUGIN", "STAGE"}
    return "name" in node and "children" not in node


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
