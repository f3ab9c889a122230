"""HomeClaw ``plugin.yaml``, ``POST /api/plugins/register`` bodies and the entries of
``config/external_plugins.json``: one plugin whose ``capabilities`` are its operations.

Backward compatibility follows the HomeClaw seed and what HomeClaw Core accepts:
``plugin_id`` (registration body) and ``id`` (plugin.yaml; Core adds it when it persists
a body) name the same plugin and must agree; ``name`` defaults to the id; ``type``
defaults to ``inline``, a built-in Python plugin; a parameter is required unless it says
``required: false``; a null parameter key (Core persists every unset one as null) means
the key is absent; ``capabilities: []`` (or none) means the plugin's ``run()`` is its
single entry, read as one operation ``run`` described by the plugin's description; the
legacy ``config.yml`` beside a built-in plugin gives the description and ``run``'s
parameters when plugin.yaml lacks them (see :mod:`.homeclaw_config` for the rest);
the legacy ``tools`` list and the ``ui`` links are kept in ``x``.
"""

from __future__ import annotations

from typing import Any

from plugyard.manifest.dialects.homeclaw_config import build_runtime, read_settings, write_settings
from plugyard.manifest.model import EMPTY_PARAMETERS, Operation, PluginDescriptor
from plugyard.manifest.params import list_to_schema, schema_to_list
from plugyard.manifest.pointer import pointer_join, put, split
from plugyard.manifest.reading import OVERLAY_KEY, ReadContext

RUN_OPERATION = "run"
_ROOT_KEYS = (
    "id", "plugin_id", "name", "description", "description_long", "type", "config",
    "capabilities", "source", "health_check_url", "tools", "ui", "examples",
)  # fmt: skip
_CAPABILITY_KEYS = (
    "id", "name", "description", "parameters", "output_description", "post_process",
    "post_process_prompt", "method", "path", "heavy", "examples",
)  # fmt: skip
_CAPABILITY_SIGNATURE = frozenset(
    {"parameters", "output_description", "post_process", "post_process_prompt", "method"}
)
_TYPES = ("inline", "http", "subprocess", "mcp")
_TYPE_SYNONYMS = {"python": "inline", "builtin": "inline", "built-in": "inline"}
_SOURCES = ("built-in", "external")
# Keys that belong to the other dialects (OLO, MRP-VM, Shu, canonical): never HomeClaw.
_FOREIGN = frozenset(
    {"plugin", "schemaVersion", "$schema", "plannerHints", "costClass", "protocolVersion",
     "entrypoints", "module", "op_auth", "allowed_feed_ops", "display_name"}
)  # fmt: skip
# Root keys kept in ``x`` by the reader, which the writer may put back where they were.
_KEPT = frozenset({"ui", "tools", "health_check_url"})


class HomeClawDialect:
    name = "homeclaw"
    keys = frozenset(_ROOT_KEYS)

    def score(self, data: dict[str, Any]) -> int:
        kind = data.get("type")
        if _FOREIGN & data.keys() or (isinstance(kind, str) and kind.endswith("-plugin")):
            return 0
        points = 0
        capabilities = data.get("capabilities")
        if isinstance(capabilities, list) and all(isinstance(c, dict) for c in capabilities):
            points += 3 if capabilities else 1
            if any(_CAPABILITY_SIGNATURE & c.keys() for c in capabilities):
                points += 3
        points += 4 if "plugin_id" in data else 0
        points += sum(2 for key in ("health_check_url", "description_long", "ui") if key in data)
        if isinstance(kind, str) and kind.lower() in _TYPES:
            points += 2
        return points + 1 if points and "id" in data else points

    def read(self, data: dict[str, Any], ctx: ReadContext) -> list[PluginDescriptor]:
        ctx.unknown(data, _ROOT_KEYS, "")
        registration = "plugin_id" in data
        plugin_id, id_pointer = _identity(data, ctx)
        kind = _kind(data, ctx)
        settings = read_settings(data, ctx, plugin_id, sidecar=not registration)

        description = ctx.text(data.get("description"), "/description")
        if not description and settings.description:
            ctx.warn("legacy_field", "/config/description", "description read from config.yml")
            description = settings.description
        if not description:
            ctx.warn("missing_description", "/description", "no description to route by")

        health = ctx.text(data.get("health_check_url"), "/health_check_url")
        if kind in ("http", "mcp"):
            if health is None and registration:
                # HomeClaw's Core refuses such a body too (seed §3.1).
                ctx.error(
                    "manifest_missing_field",
                    "/health_check_url",
                    "an external registration must give health_check_url",
                )
        elif health is not None:
            ctx.keep("/health_check_url", data["health_check_url"])
            ctx.warn("ignored_field", "/health_check_url", f"a {kind} plugin is not checked")
            health = None
        runtime, config = build_runtime(kind, settings, health, ctx)

        source = ctx.text(data.get("source"), "/source")
        if source is None:
            source = "built-in" if kind == "inline" else "external"
        elif source not in _SOURCES:
            ctx.error("manifest_invalid_value", "/source", f"one of {', '.join(_SOURCES)}")

        tools = data.get("tools")
        if tools not in (None, []):
            ctx.keep("/tools", tools)
            ctx.warn("legacy_field", "/tools", "legacy tools kept in x; capabilities are read")
        if ctx.mapping(data.get("ui"), "/ui") is not None:
            ctx.keep("/ui", data["ui"])

        fields: dict[str, Any] = {
            "id": plugin_id,
            "name": ctx.text(data.get("name"), "/name") or plugin_id,
            "description": description,
            "description_long": ctx.text(data.get("description_long"), "/description_long"),
            "examples": ctx.strings(data.get("examples"), "/examples") or None,
            "tags": settings.tags,
            "operations": _operations(data, ctx, description or "", settings.parameters),
            "runtime": runtime,
            "source": source,
            "config": config,
            "secrets": settings.secrets,
        }
        pointers = {
            "id": id_pointer, "name": "/name", "description": "/description",
            "description_long": "/description_long", "tags": "/config/keywords",
            "examples": "/examples",
            "operations": "/capabilities", "runtime": "/config", "source": "/source",
            "config": "/config", "secrets": "/config",
        }  # fmt: skip
        built = ctx.build(fields, pointers, data.get(OVERLAY_KEY), f"/{OVERLAY_KEY}")
        return [built] if built else []

    def write(self, plugin: PluginDescriptor) -> dict[str, Any]:
        kind, config = write_settings(plugin)
        health = getattr(plugin.runtime, "health_check_url", None)
        # A registration body (plugin_id) must carry health_check_url; a plugin.yaml need not.
        registration = plugin.source == "external" and health is not None
        doc: dict[str, Any] = {"plugin_id" if registration else "id": plugin.id,
                               "name": plugin.name}  # fmt: skip
        if plugin.description:
            doc["description"] = plugin.description
        if plugin.description_long is not None:
            doc["description_long"] = plugin.description_long
        if plugin.examples:
            doc["examples"] = list(plugin.examples)
        if plugin.source is not None and plugin.source != _inferred_source(kind or "inline"):
            doc["source"] = plugin.source
        if health is not None:
            doc["health_check_url"] = health
        if kind is not None:
            doc["type"] = kind
        if config:
            doc["config"] = config
        doc["capabilities"] = _write_capabilities(plugin)
        for pointer, value in plugin.x.items():
            if _writable(pointer, doc):
                put(doc, pointer, value)
        return doc


def _identity(data: dict[str, Any], ctx: ReadContext) -> tuple[str | None, str]:
    if "plugin_id" not in data:
        return ctx.required_text(data, "id", ""), "/id"
    plugin_id = ctx.required_text(data, "plugin_id", "")
    if "id" in data:
        same = ctx.text(data["id"], "/id")
        if same is not None and plugin_id is not None and same != plugin_id:
            ctx.error("manifest_invalid_value", "/id", f"{same!r} is not plugin_id {plugin_id!r}")
    return plugin_id, "/plugin_id"


def _kind(data: dict[str, Any], ctx: ReadContext) -> str:
    text = ctx.text(data.get("type"), "/type")
    if text is None:
        return "inline"
    lowered = text.strip().lower()
    if lowered in _TYPES:
        if lowered != text:
            ctx.warn("coerced_case", "/type", f"{text!r} read as {lowered!r}")
        return lowered
    if lowered in _TYPE_SYNONYMS:
        ctx.warn("type_synonym", "/type", f"{text!r} read as {_TYPE_SYNONYMS[lowered]!r}")
        return _TYPE_SYNONYMS[lowered]
    ctx.error("manifest_invalid_value", "/type", f"one of {', '.join(_TYPES)}")
    return "inline"


def _inferred_source(kind: str) -> str:
    return "built-in" if kind == "inline" else "external"


def _present(entries: list[Any]) -> list[Any]:
    """Parameter entries without their null keys: Core persists unset keys as null."""
    return [
        {k: v for k, v in e.items() if v is not None} if isinstance(e, dict) else e for e in entries
    ]


def _operations(
    data: dict[str, Any], ctx: ReadContext, description: str, legacy: list[Any]
) -> list[dict[str, Any]]:
    capabilities = ctx.items(data.get("capabilities"), "/capabilities")
    if not capabilities:
        parameters: dict[str, Any] = dict(EMPTY_PARAMETERS)
        if legacy:
            ctx.warn("legacy_field", "/config/parameters", "read as the parameters of run()")
            parameters = list_to_schema(
                _present(legacy), ctx, "/config/parameters", required_default=True
            )
        return [{"id": RUN_OPERATION, "description": description, "parameters": parameters}]
    if legacy:
        ctx.warn("ignored_field", "/config/parameters", "plugin-level parameters superseded")
    operations: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, capability in enumerate(capabilities):
        here = pointer_join("/capabilities", index)
        if not isinstance(capability, dict):
            ctx.error("manifest_invalid_value", here, "a capability must be a mapping")
            continue
        ctx.unknown(capability, _CAPABILITY_KEYS, here)
        op_id = ctx.required_text(capability, "id", here)
        if op_id is not None and op_id in seen:
            ctx.error("manifest_duplicate_key", f"{here}/id", f"capability {op_id!r} again")
        seen.add(op_id or "")
        op_description = ctx.text(capability.get("description"), f"{here}/description")
        if not op_description:
            ctx.warn("missing_description", f"{here}/description", "no description to route by")
        entries = ctx.items(capability.get("parameters"), f"{here}/parameters")
        operations.append(
            {
                "id": op_id,
                "name": ctx.text(capability.get("name"), f"{here}/name"),
                "description": op_description or "",
                "parameters": list_to_schema(
                    _present(entries), ctx, f"{here}/parameters", required_default=True
                ),
                "output_description": ctx.text(
                    capability.get("output_description"), f"{here}/output_description"
                ),
                "post_process": bool(
                    ctx.boolean(capability.get("post_process"), f"{here}/post_process")
                ),
                "post_process_prompt": ctx.text(
                    capability.get("post_process_prompt"), f"{here}/post_process_prompt"
                ),
                "http_method": ctx.text(capability.get("method"), f"{here}/method"),
                "http_path": ctx.text(capability.get("path"), f"{here}/path"),
                "heavy": bool(ctx.boolean(capability.get("heavy"), f"{here}/heavy")),
                "examples": ctx.strings(capability.get("examples"), f"{here}/examples"),
            }
        )
    return operations


def _write_capabilities(plugin: PluginDescriptor) -> list[dict[str, Any]]:
    if plugin.operations == (Operation(id=RUN_OPERATION, description=plugin.description),):
        return []
    out: list[dict[str, Any]] = []
    for op in plugin.operations:
        entry: dict[str, Any] = {"id": op.id}
        if op.name is not None:
            entry["name"] = op.name
        if op.description:
            entry["description"] = op.description
        entry["parameters"] = schema_to_list(op.parameters, required_default=True)
        optional = {
            "output_description": op.output_description,
            "post_process": op.post_process or None,
            "post_process_prompt": op.post_process_prompt,
            "method": op.http_method,
            "path": op.http_path,
            "heavy": op.heavy or None,
            "examples": list(op.examples) or None,
        }
        entry.update({key: value for key, value in optional.items() if value is not None})
        out.append(entry)
    return out


def _writable(pointer: str, doc: dict[str, Any]) -> bool:
    """Whether an ``x`` entry goes back where this reader would find it again. Entries
    from other dialects (``/plugin/…``) would make the document theirs: the overlay
    carries those instead."""
    tokens = split(pointer)
    if len(tokens) == 1:
        key = tokens[0]
        if key in _KEPT:
            return key not in doc
        return key not in _ROOT_KEYS and key not in _FOREIGN and key != OVERLAY_KEY
    capabilities = doc.get("capabilities")
    return (
        len(tokens) == 3
        and tokens[0] == "capabilities"
        and tokens[1].isdigit()
        and isinstance(capabilities, list)
        and int(tokens[1]) < len(capabilities)
        and tokens[2] not in _CAPABILITY_KEYS
    )


DIALECT = HomeClawDialect()
