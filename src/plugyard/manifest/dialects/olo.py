"""OLO ``plugin.yaml``: one stage plugin with its placement (capabilities and scope).

Backward compatibility follows the OLO seed: a singular ``capability`` is a list of one;
an omitted, empty or null capability means *Undefined*; a legacy ``scope.capabilities``
stands in for ``plugin.capability`` when that is absent or empty; ``scope`` and
``scope.role`` default to a ``CAPABILITY_STAGE`` that may stand outside groups.

OLO's annotation processor writes ``name`` as the Java class and the display name as
``displayName``; the canonical name is the display name and the class name is kept. Its
multi-plugin files (``plugins:`` lists) put the fields beside an empty ``plugin:`` key
instead of under it; that flat form is read like the nested one.
"""

from __future__ import annotations

from typing import Any

from plugyard.manifest.model import (
    ALL_CAPABILITIES,
    PIPELINE_CAPABILITIES,
    ROLES,
    Operation,
    PluginDescriptor,
    PythonRuntime,
)
from plugyard.manifest.nearest import nearest
from plugyard.manifest.params import list_to_schema, schema_to_list
from plugyard.manifest.pointer import pointer_join, put
from plugyard.manifest.reading import OVERLAY_KEY, ReadContext

OPERATION_ID = "execute"
_ROOT_KEYS = ("schemaVersion", "plugin")
_PLUGIN_KEYS = (
    "id", "name", "version", "description", "license", "capability", "className", "scope",
    "inputs", "outputs", "icons", "displayName",
)  # fmt: skip
# Known OLO fields with no canonical home: kept in ``x`` without a warning.
_KEPT_KEYS = ("type", "pluginType", "sampleInput", "sampleInputDescription", "author", "website")
_FLAT = "/plugin"  # the x marker of the flat multi-plugin form
_SCOPE_KEYS = ("role", "capabilities", "onlyInsideGroup")
_SIGNATURE = frozenset({"capability", "className", "scope", "inputs", "outputs", "icons"})


class OloDialect:
    name = "olo"
    keys = frozenset((*_ROOT_KEYS, *_PLUGIN_KEYS, *_KEPT_KEYS, "scope"))

    def score(self, data: dict[str, Any]) -> int:
        plugin = data.get("plugin")
        if plugin is None and "plugin" in data and _SIGNATURE & data.keys():
            plugin = data  # the flat form
        if not isinstance(plugin, dict):
            return 0
        return 5 + len(_SIGNATURE & plugin.keys()) + (2 if "schemaVersion" in data else 0)

    def read(self, data: dict[str, Any], ctx: ReadContext) -> list[PluginDescriptor]:
        if data.get("plugin") is None and "plugin" in data:
            ctx.keep(_FLAT, None)
            ctx.warn("legacy_flat_plugin", "", "fields beside an empty 'plugin:' key")
            plugin, p = {k: v for k, v in data.items() if k != "plugin"}, ""
            ctx.unknown(plugin, (*_ROOT_KEYS, *_PLUGIN_KEYS, *_KEPT_KEYS), "")
        else:
            ctx.unknown(data, _ROOT_KEYS, "")
            plugin, p = ctx.mapping(data.get("plugin"), "/plugin") or {}, "/plugin"
            ctx.unknown(plugin, (*_PLUGIN_KEYS, *_KEPT_KEYS), p)
        if "schemaVersion" in data:
            ctx.keep("/schemaVersion", data["schemaVersion"])
        for key in _KEPT_KEYS:
            if key in plugin:
                ctx.keep(pointer_join(p, key), plugin[key])
        display = ctx.text(plugin.get("displayName"), f"{p}/displayName")
        if display is not None:
            ctx.keep(f"{p}/name", plugin.get("name"))
        scope = ctx.mapping(plugin.get("scope"), f"{p}/scope") or {}
        ctx.unknown(scope, _SCOPE_KEYS, f"{p}/scope")

        capabilities = ctx.strings(plugin.get("capability"), f"{p}/capability")
        legacy = ctx.strings(scope.get("capabilities"), f"{p}/scope/capabilities")
        if not capabilities:
            capabilities = legacy
        elif legacy and legacy != capabilities:
            ctx.keep(f"{p}/scope/capabilities", list(legacy))
            ctx.warn(
                "ignored_field",
                f"{p}/scope/capabilities",
                "plugin.capability is the source of truth; scope.capabilities kept in x",
            )

        if plugin.get("capability"):
            _check_capability_names(capabilities, plugin["capability"], f"{p}/capability", ctx)
        else:
            written = scope.get("capabilities")
            _check_capability_names(capabilities, written, f"{p}/scope/capabilities", ctx)

        role = ctx.text(scope.get("role"), f"{p}/scope/role") or "CAPABILITY_STAGE"
        if role.upper() in ROLES and role not in ROLES:
            ctx.warn("coerced_case", f"{p}/scope/role", f"{role!r} read as {role.upper()!r}")
            role = role.upper()
        if role not in ROLES:
            ctx.error("manifest_invalid_value", f"{p}/scope/role", f"unknown role {role!r}")

        inputs = ctx.items(plugin.get("inputs"), f"{p}/inputs")
        outputs = ctx.items(plugin.get("outputs"), f"{p}/outputs")
        parameters = list_to_schema(inputs, ctx, f"{p}/inputs", required_default=False)
        output_schema = None
        if outputs:
            output_schema = list_to_schema(outputs, ctx, f"{p}/outputs", required_default=False)

        class_name = ctx.text(plugin.get("className"), f"{p}/className")
        icons = ctx.mapping(plugin.get("icons"), f"{p}/icons") or {}
        fields: dict[str, Any] = {
            "id": ctx.required_text(plugin, "id", p),
            "name": display or ctx.text(plugin.get("name"), f"{p}/name") or plugin.get("id"),
            "version": ctx.text(plugin.get("version"), f"{p}/version"),
            "description": ctx.text(plugin.get("description"), f"{p}/description"),
            "license": ctx.text(plugin.get("license"), f"{p}/license"),
            "icons": {k: ctx.text(v, pointer_join(p, "icons", k)) for k, v in icons.items()},
            "placement": {
                "capabilities": capabilities,
                "role": role,
                "only_inside_group": ctx.boolean(
                    scope.get("onlyInsideGroup"), f"{p}/scope/onlyInsideGroup"
                )
                or False,
            },
            "operations": [
                Operation(id=OPERATION_ID, parameters=parameters, output_schema=output_schema)
            ],
            "runtime": PythonRuntime(entrypoint=class_name) if class_name else None,
        }
        pointers = {
            "id": f"{p}/id", "version": f"{p}/version",
            "name": f"{p}/displayName" if display else f"{p}/name",
            "description": f"{p}/description", "license": f"{p}/license", "icons": f"{p}/icons",
            "placement": f"{p}/scope", "runtime": f"{p}/className",
        }  # fmt: skip
        built = ctx.build(fields, pointers, data.get(OVERLAY_KEY), f"/{OVERLAY_KEY}")
        return [built] if built else []

    def write(self, plugin: PluginDescriptor) -> dict[str, Any]:
        body: dict[str, Any] = {"id": plugin.id, "name": plugin.name}
        for key in ("version", "description", "license"):
            value = getattr(plugin, key)
            if value:
                body[key] = value
        placement = plugin.placement
        if placement.capabilities:
            body["capability"] = list(placement.capabilities)
        if plugin.runtime.kind == "python" and plugin.runtime.entrypoint:
            body["className"] = plugin.runtime.entrypoint
        scope: dict[str, Any] = {}
        if placement.role != "CAPABILITY_STAGE":
            scope["role"] = placement.role
        if placement.only_inside_group:
            scope["onlyInsideGroup"] = True
        if scope:
            body["scope"] = scope
        if plugin.operations:
            op = plugin.operations[0]
            inputs = schema_to_list(op.parameters, required_default=False)
            if inputs:
                body["inputs"] = inputs
            if op.output_schema:
                body["outputs"] = schema_to_list(op.output_schema, required_default=False)
        if plugin.icons:
            body["icons"] = dict(plugin.icons)
        flat = _FLAT in plugin.x
        if ("/name" if flat else "/plugin/name") in plugin.x:
            # the canonical name is the display name; x holds the class-style name
            body["displayName"] = plugin.name
        doc: dict[str, Any] = {"plugin": body}
        if "/schemaVersion" in plugin.x:
            doc = {"schemaVersion": plugin.x["/schemaVersion"], **doc}
        if flat:
            doc = {"plugin": None, **{k: v for k, v in doc.items() if k != "plugin"}, **body}
        for pointer, value in plugin.x.items():
            if pointer not in {"/schemaVersion", _FLAT}:
                put(doc, pointer, value)
        return doc


def _check_capability_names(
    names: tuple[str, ...] | list[str], written: Any, where: str, ctx: ReadContext
) -> None:
    """Custom capability ids are allowed (the seed says so), but one that is not a
    configured name is worth a warning — ``MODLE`` would silently land under *Undefined*."""
    for index, name in enumerate(names):
        if name == ALL_CAPABILITIES or name in PIPELINE_CAPABILITIES:
            continue
        guess = nearest(name, PIPELINE_CAPABILITIES, cutoff=0.6)
        hint = f"did you mean {guess!r}?" if guess else "a custom capability?"
        pointer = pointer_join(where, index) if isinstance(written, list) else where
        ctx.warn(
            "unknown_capability",
            pointer,
            f"{name!r} is not a configured capability ({hint}); it is listed under "
            "Undefined until a pipeline names it",
        )


DIALECT = OloDialect()
