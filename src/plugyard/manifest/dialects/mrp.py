"""MRP-VM descriptors: a built-in ``plugin.json`` (DS003/DS027) or a wrapper
``manifest.json`` (DS016); the JavaScript descriptor literal of ``index.mjs`` reads the same.

The ``type`` names the family (``kb-plugin`` → ``kb``) and the family names the operations
(see :mod:`plugyard.manifest.families`), so operations are never written. Backward
compatibility follows the seeds and the shipped manifests:

- a wrapper (``command``, ``args`` or ``protocolVersion`` present) may give only the legacy
  ``name`` for its id, and without ``type`` is a helper ``gs-plugin``; it must say
  ``protocolVersion: 1``, as real MRP-VM refuses any other;
- the short family names (``kb``) and plugyard's ``tool`` are read with a warning; any
  other ``type`` is ``unsupported_type``;
- ``plannerHints`` is required for ``sd``/``kb``/``gs`` built-ins; a wrapper without it
  loads with a warning, since DS016 wrappers are helpers outside the planner's registry;
- the singular ``modelRole``/``ingestModelRole`` join ``modelRoles`` and stay in ``x``;
  the wrapper spellings ``keywords``, ``capabilities`` and ``timeout`` are the tags,
  ``provides`` and ``timeoutMs`` of a built-in;
- legacy ``modeId``/``strategyId`` are kept with a warning; a description that is not
  1–3 sentences is a warning, never a failure.
"""

from __future__ import annotations

from typing import Any

from plugyard.manifest.dialects.mrp_fields import (
    CONVENTIONS,
    DS016_SIGNS,
    HINT_FIELDS,
    KNOWN_KEYS,
    NODE_HOST,
    NODE_MODULE,
    SINGULAR_ROLES,
    WRAPPER_SIGNS,
    check_description,
    keep_typed,
    score,
    writable,
)
from plugyard.manifest.families import FAMILY_OF_TYPE, TYPE_OF_FAMILY, contract, family_operations
from plugyard.manifest.model import PluginDescriptor, PythonRuntime, SubprocessRuntime
from plugyard.manifest.pointer import pointer_join, put
from plugyard.manifest.reading import OVERLAY_KEY, ReadContext

KNOWLEDGE_FILE = "plugin.kus.md"
PROTOCOL_VERSION = 1
_HINT_KEPT = ("evidenceStyle",)


class MrpDialect:
    name = "mrp"
    keys = KNOWN_KEYS

    def score(self, data: dict[str, Any]) -> int:
        return score(data)

    def read(self, data: dict[str, Any], ctx: ReadContext) -> list[PluginDescriptor]:
        ctx.unknown(data, KNOWN_KEYS, "")
        keep_typed(data, ctx)
        wrapper = any(key in data for key in WRAPPER_SIGNS)
        family = _family(data, ctx, wrapper)
        id_pointer = "/id"
        if wrapper and data.get("id") is None and data.get("name") is not None:
            id_pointer = "/name"
            ctx.warn("legacy_field", "/name", "wrapper without 'id': its 'name' is the id")
        ident = ctx.required_text(data, id_pointer[1:], "")
        name = ident if id_pointer == "/name" else ctx.text(data.get("name"), "/name") or ident
        description = ctx.text(data.get("description"), "/description") or ""
        check_description(description, ctx)

        roles = list(ctx.strings(data.get("modelRoles"), "/modelRoles"))
        for key in SINGULAR_ROLES:
            role = ctx.text(data.get(key), f"/{key}")
            if role is not None:
                ctx.keep(f"/{key}", data[key])
                roles.append(role)
        timeout_key = "timeoutMs" if data.get("timeoutMs") is not None else "timeout"
        if timeout_key == "timeoutMs" and data.get("timeout") is not None:
            ctx.keep("/timeout", data["timeout"])
            ctx.warn("ignored_field", "/timeout", "'timeoutMs' wins over 'timeout'; kept in x")
        kus = ctx.text(data.get("knowledgeUnitsFile"), "/knowledgeUnitsFile")
        if kus is not None:
            ctx.keep("/knowledgeUnitsFile", data["knowledgeUnitsFile"])
        sidecars = getattr(ctx, "sidecars", None) or {}
        knowledge = sidecars.get(kus or KNOWLEDGE_FILE)
        if wrapper:
            runtime: Any = _runtime(data, ctx)
        elif sidecars.get(NODE_MODULE):
            # MRP-VM's loader imports the index.mjs beside plugin.json; so does plugyard's
            # Node host, which speaks plugyard's protocol for it.
            runtime = SubprocessRuntime(
                command="node", args=(NODE_HOST, NODE_MODULE), protocol_version="1"
            )
        else:
            runtime = PythonRuntime()

        fields: dict[str, Any] = {
            "id": ident,
            "name": name,
            "version": ctx.text(data.get("version"), "/version"),
            "description": description,
            "tags": _merged(data, ctx, "tags", "keywords"),
            "knowledge": knowledge if isinstance(knowledge, str) else None,
            "family": family,
            "cost_class": ctx.text(data.get("costClass"), "/costClass"),
            "uses_llm": ctx.boolean(data.get("usesLLM"), "/usesLLM"),
            "model_roles": list(dict.fromkeys(roles)),
            "max_llm_calls": ctx.integer(data.get("maxLLMCalls"), "/maxLLMCalls"),
            "timeout_ms": ctx.integer(data.get(timeout_key), f"/{timeout_key}"),
            "planner_hints": _hints(data, ctx, family, wrapper),
            "provides": _merged(data, ctx, "provides", "capabilities"),
            "accepts": ctx.strings(data.get("accepts"), "/accepts"),
            "operations": family_operations(family) if family else (),
            "runtime": runtime,
            "source": "external" if wrapper else "built-in",
            "config": {"convention": _convention(data, ctx)} if wrapper else {},
        }
        pointers = {
            "id": id_pointer, "name": "/name", "version": "/version",
            "description": "/description", "tags": "/tags", "cost_class": "/costClass",
            "uses_llm": "/usesLLM", "model_roles": "/modelRoles", "max_llm_calls": "/maxLLMCalls",
            "timeout_ms": f"/{timeout_key}", "planner_hints": "/plannerHints",
            "provides": "/provides", "accepts": "/accepts", "runtime": "/command",
        }  # fmt: skip
        built = ctx.build(fields, pointers, data.get(OVERLAY_KEY), f"/{OVERLAY_KEY}")
        return [built] if built else []

    def write(self, plugin: PluginDescriptor) -> dict[str, Any]:
        runtime = plugin.runtime
        wrapper = (
            isinstance(runtime, SubprocessRuntime)
            and runtime.protocol_version == str(PROTOCOL_VERSION)
            and runtime.args[:1] != (NODE_HOST,)
        )
        doc: dict[str, Any] = {"id": plugin.id}
        if plugin.name != plugin.id:
            doc["name"] = plugin.name
        doc["type"] = TYPE_OF_FAMILY.get(plugin.family, plugin.family)
        if plugin.version is not None:
            doc["version"] = plugin.version
        if plugin.description:
            doc["description"] = plugin.description
        if plugin.cost_class is not None:
            doc["costClass"] = plugin.cost_class
        if plugin.uses_llm is not None:
            doc["usesLLM"] = plugin.uses_llm
        singular = [v for k in SINGULAR_ROLES if isinstance(v := plugin.x.get(f"/{k}"), str)]
        if list(plugin.model_roles) != list(dict.fromkeys(singular)):
            doc["modelRoles"] = list(plugin.model_roles)
        if plugin.max_llm_calls is not None:
            doc["maxLLMCalls"] = plugin.max_llm_calls
        if plugin.timeout_ms is not None:
            doc["timeout" if wrapper and "/timeout" not in plugin.x else "timeoutMs"] = (
                plugin.timeout_ms
            )
        for values, built_in, wrapped in (
            (plugin.tags, "tags", "keywords"),
            (plugin.provides, "provides", "capabilities"),
            (plugin.accepts, "accepts", "accepts"),
        ):
            if values:
                doc[wrapped if wrapper else built_in] = list(values)
        if plugin.planner_hints is not None:
            hints = plugin.planner_hints.model_dump(mode="json", exclude_defaults=True)
            doc["plannerHints"] = {
                camel: _plain(hints[snake])
                for camel, snake in HINT_FIELDS.items()
                if snake in hints
            }
        elif not wrapper and (found := contract(plugin.family)) and found.planner_hints_required:
            # The reader refuses a planner-facing built-in without hints; the overlay then
            # says there were none.
            doc["plannerHints"] = {}
        if wrapper and isinstance(runtime, SubprocessRuntime):
            doc["command"] = runtime.command
            if runtime.args:
                doc["args"] = list(runtime.args)
            doc["protocolVersion"] = PROTOCOL_VERSION
        for pointer, value in plugin.x.items():
            if writable(pointer, doc):
                put(doc, pointer, value)
        return doc


def _family(data: dict[str, Any], ctx: ReadContext, wrapper: bool) -> str | None:
    if data.get("type") is None:
        if wrapper:
            ctx.warn("implicit_type", "/type", "wrapper without 'type' is a helper gs-plugin")
            return "gs"
        ctx.error("manifest_missing_field", "/type", "'type' is required")
        return None
    kind = ctx.text(data["type"], "/type")
    if kind is None:
        return None
    if kind in FAMILY_OF_TYPE:
        return FAMILY_OF_TYPE[kind]
    short = contract(kind)
    if short is not None or kind == "tool":
        spelled = short.mrp_type if short else "no MRP-VM type"
        ctx.warn("type_synonym", "/type", f"{kind!r} read as a family name ({spelled})")
        return kind
    ctx.error("unsupported_type", "/type", f"unsupported plugin type {kind!r}")
    return None


def _merged(data: dict[str, Any], ctx: ReadContext, key: str, wrapper_key: str) -> list[str]:
    values = ctx.strings(data.get(key), f"/{key}")
    values += ctx.strings(data.get(wrapper_key), f"/{wrapper_key}")
    return list(dict.fromkeys(values))


def _hints(
    data: dict[str, Any], ctx: ReadContext, family: str | None, wrapper: bool
) -> dict[str, Any] | None:
    raw = ctx.mapping(data.get("plannerHints"), "/plannerHints")
    if raw is None:
        found = contract(family) if family else None
        if found and found.planner_hints_required and data.get("plannerHints") is None:
            message = f"'plannerHints' is required for a {family} plugin"
            if wrapper:
                ctx.warn("planner_hints_missing", "/plannerHints", message)
            else:
                ctx.error("manifest_missing_field", "/plannerHints", message)
        return None
    ctx.unknown(raw, (*HINT_FIELDS, *_HINT_KEPT), "/plannerHints")
    hints: dict[str, Any] = {}
    for camel, snake in HINT_FIELDS.items():
        here = pointer_join("/plannerHints", camel)
        value = raw.get(camel)
        if camel in {"supportedActs", "topicTags"}:
            hints[snake] = ctx.strings(value, here)
        elif camel in {"preferredDepth", "fallbackRole"}:
            hints[snake] = ctx.text(value, here)
        else:
            hints[snake] = ctx.number(value, here)
    for camel in _HINT_KEPT:
        if camel in raw:
            ctx.strings(raw[camel], pointer_join("/plannerHints", camel))
            ctx.keep(pointer_join("/plannerHints", camel), raw[camel])
    return {key: value for key, value in hints.items() if value is not None}


def _runtime(data: dict[str, Any], ctx: ReadContext) -> SubprocessRuntime | None:
    command = ctx.required_text(data, "command", "")
    args = ctx.strings(data.get("args"), "/args")
    version = data.get("protocolVersion")
    if version is None:
        ctx.error("manifest_missing_field", "/protocolVersion", "'protocolVersion' is required")
    elif isinstance(version, bool) or version != PROTOCOL_VERSION:
        ctx.error("manifest_invalid_value", "/protocolVersion", f"only protocol {PROTOCOL_VERSION}")
    if command is None or ctx.errors:
        return None
    return SubprocessRuntime(command=command, args=args, protocol_version=str(PROTOCOL_VERSION))


def _convention(data: dict[str, Any], ctx: ReadContext) -> str:
    """How the wrapper is spoken to: its ``convention``, else DS016 when it writes the
    fields only MRP-VM's wrapper manager reads, else plugyard's newline-JSON protocol."""
    said = data.get("convention")
    if said is not None:
        if said not in CONVENTIONS:
            ctx.error("manifest_invalid_value", "/convention", f"one of {list(CONVENTIONS)}")
            return "plugyard"
        return str(said)
    return "ds016" if any(key in data for key in DS016_SIGNS) else "plugyard"


def _plain(value: Any) -> Any:
    """A whole float as an int, as a hand-written manifest would say ``1800``."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


DIALECT = MrpDialect()
