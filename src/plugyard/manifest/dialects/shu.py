"""Shu ``manifest.yaml`` / ``manifest.py`` (``PLUGIN_MANIFEST = {...}``): Python plugins
with the host capabilities, secrets and auth they ask for.

Backward compatibility follows what real Shu plugins write as well as the contract:

- The code is named by ``module`` (what Shu's loader reads) or by the contract's
  ``entrypoints`` map. Each ``entrypoints`` entry is one plugin whose id is the entry key;
  ``name`` then names the package and is kept in ``x`` when it differs. With both keys,
  ``entrypoints`` wins and ``module`` is kept in ``x``. The writer uses the form the source
  used (a kept ``/entrypoints/<id>`` entry marks it) and ``module`` otherwise. Neither key
  gives a descriptor-only plugin (``no_entrypoint`` warning).
- The display name is ``display_name``, else ``title`` (Shu's loader accepts it), else
  ``label``; the id stands in when none is given.
- Declaring ``kb`` implies ``cursor``: the canonical host capabilities list it, and the
  writer drops it again when it trails a ``kb``. Capabilities outside the contract and the
  SDK are kept with an ``unknown_host_capability`` warning.
- Names Shu's loader refuses (``mcp-`` prefix, ``int``, a ``:``) are read with a
  ``reserved_name`` warning, so that plugins of other hosts still round-trip.
- ``default_feed_op`` must be one of a non-empty ``allowed_feed_ops``.
- ``origins`` (the contract's MAY: "the loader MAY register these for API/UI
  enumeration"; Shu's own loader ignores the key) is a list of labels, kept in order
  without repeats; what the plugin writes is still stored as ``plugin:<id>``.
- Operations live in the plugin class, so the manifest gives one ``execute`` operation;
  op names it mentions become ``examples`` of an ``op`` parameter, not an ``enum``: the
  class may define more ops than the manifest names.
"""

from __future__ import annotations

from typing import Any

from plugyard.manifest.dialects.shu_auth import (
    nested_home,
    read_identities,
    read_op_auth,
    write_identities,
    write_op_auth,
)
from plugyard.manifest.model import (
    EMPTY_PARAMETERS,
    HOST_CAPABILITIES,
    NoRuntime,
    PluginDescriptor,
    PythonRuntime,
)
from plugyard.manifest.pointer import pointer_join, put, split
from plugyard.manifest.reading import OVERLAY_KEY, ReadContext

OPERATION_ID = "execute"
NO_ENTRYPOINT = "the Shu manifest names no module or entrypoints"
_ROOT_KEYS = (
    "name", "version", "description", "display_name", "title", "label", "module",
    "entrypoints", "capabilities", "secrets", "default_feed_op", "allowed_feed_ops",
    "chat_callable_ops", "op_auth", "required_identities", "origins",
)  # fmt: skip
_DISPLAY_KEYS = ("display_name", "title", "label")
#: The SDK's template lists these beside the contract's capabilities.
_KNOWN_CAPABILITIES = HOST_CAPABILITIES | {"log", "utils"}
#: Keys no Shu manifest has but other dialects are recognised by.
_FOREIGN = frozenset({"$schema", "plugin_id", "health_check_url", "plannerHints"})
#: Root keys an ``x`` entry must not be written back under: they would read as another
#: dialect's document, or are the overlay itself.
_NOT_X_HOMES = _FOREIGN | {"plugin", "id", "type", "command", "protocolVersion", OVERLAY_KEY}
_MARKS = {
    "entrypoints": 5, "op_auth": 4, "default_feed_op": 3, "allowed_feed_ops": 3,
    "required_identities": 3, "chat_callable_ops": 3,
}  # fmt: skip


class ShuDialect:
    name = "shu"
    keys = frozenset(_ROOT_KEYS)

    def score(self, data: dict[str, Any]) -> int:
        capabilities = data.get("capabilities")
        kind = data.get("type")
        if (
            isinstance(data.get("plugin"), dict)
            or _FOREIGN & data.keys()
            or (isinstance(capabilities, list) and any(isinstance(c, dict) for c in capabilities))
            or (isinstance(kind, str) and kind.endswith("-plugin"))
            or {"command", "protocolVersion"} <= data.keys()
        ):
            return 0
        module = data.get("module")
        strong = sum(weight for key, weight in _MARKS.items() if key in data)
        strong += 5 if isinstance(module, str) and ":" in module else 0
        if not strong and ("id" in data or "type" in data):
            return 0  # every other dialect has an id or a type; Shu has neither
        weak = (
            isinstance(module, str)
            + 2 * isinstance(capabilities, list)
            + ("display_name" in data)
            + isinstance(data.get("secrets"), list)
            + isinstance(data.get("name"), str)
        )
        return strong + weak

    def read(self, data: dict[str, Any], ctx: ReadContext) -> list[PluginDescriptor]:
        ctx.unknown(data, _ROOT_KEYS, "")
        name = ctx.required_text(data, "name", "")
        display, display_at = _display(data, ctx)
        module = ctx.text(data.get("module"), "/module")
        entries = _entries(data.get("entrypoints"), ctx)
        if "chat_callable_ops" in data:
            ctx.keep("/chat_callable_ops", data["chat_callable_ops"])
        chat_ops = ctx.strings(data.get("chat_callable_ops"), "/chat_callable_ops")
        default_op = ctx.text(data.get("default_feed_op"), "/default_feed_op")
        allowed = ctx.strings(data.get("allowed_feed_ops"), "/allowed_feed_ops")
        if default_op and allowed and default_op not in allowed:
            ctx.error(
                "manifest_invalid_value", "/default_feed_op",
                f"{default_op!r} is not one of allowed_feed_ops",
            )  # fmt: skip
        op_auth = read_op_auth(data.get("op_auth"), ctx)
        shared: dict[str, Any] = {
            "version": ctx.text(data.get("version"), "/version"),
            "description": ctx.text(data.get("description"), "/description"),
            "host_capabilities": _capabilities(data.get("capabilities"), ctx),
            "secrets": ctx.strings(data.get("secrets"), "/secrets"),
            "op_auth": op_auth,
            "required_identities": read_identities(data.get("required_identities"), ctx),
            "default_feed_op": default_op,
            "allowed_feed_ops": allowed,
            "origins": tuple(dict.fromkeys(ctx.strings(data.get("origins"), "/origins"))),
            "operations": [_execute(default_op, allowed, chat_ops, op_auth)],
        }
        pointers = {
            "name": display_at, "version": "/version", "description": "/description",
            "host_capabilities": "/capabilities", "secrets": "/secrets", "op_auth": "/op_auth",
            "required_identities": "/required_identities", "default_feed_op": "/default_feed_op",
            "allowed_feed_ops": "/allowed_feed_ops", "origins": "/origins",
        }  # fmt: skip
        if entries and module is not None:
            ctx.keep("/module", data["module"])
            if module not in {target for _, target, _ in entries}:
                ctx.warn("ignored_field", "/module", "entrypoints name the code; module kept in x")
        if not entries and module is None and name is not None:
            ctx.warn("no_entrypoint", "/module", "no module or entrypoints: descriptor only")
        if ctx.errors or name is None:
            return []
        common = dict(ctx.x)
        out: list[PluginDescriptor] = []
        for plugin_id, target, at in entries or [(name, module, "/name")]:
            # x is per plugin here: each entry remembers its own entrypoint (the writer's
            # cue to write ``entrypoints``) and the package name when it is not its id.
            ctx.x = dict(common)
            if entries:
                ctx.keep(at, target)
                if plugin_id != name:
                    ctx.keep("/name", data["name"])
            _reserved(plugin_id, at, ctx)
            fields = {
                **shared,
                "id": plugin_id,
                "name": display or plugin_id,
                "runtime": PythonRuntime(entrypoint=target)
                if target
                else NoRuntime(reason=NO_ENTRYPOINT),
            }
            where = {**pointers, "id": at, "runtime": at if entries else "/module"}
            built = ctx.build(fields, where, data.get(OVERLAY_KEY), f"/{OVERLAY_KEY}")
            if built:
                out.append(built)
        ctx.x = common
        return out if not ctx.errors else []

    def write(self, plugin: PluginDescriptor) -> dict[str, Any]:
        runtime = plugin.runtime
        target = runtime.entrypoint if isinstance(runtime, PythonRuntime) else None
        entry_form = target is not None and any(p.startswith("/entrypoints/") for p in plugin.x)
        doc: dict[str, Any] = {
            "name": plugin.x.get("/name", plugin.id) if entry_form else plugin.id
        }
        if plugin.name != plugin.id or "/title" in plugin.x or "/label" in plugin.x:
            doc["display_name"] = plugin.name
        if plugin.version:
            doc["version"] = plugin.version
        if plugin.description:
            doc["description"] = plugin.description
        if target is not None:
            if entry_form:
                doc["entrypoints"] = {plugin.id: target}
            else:
                doc["module"] = target
        # Always written, even empty as in real manifests: it is what marks the document
        # as Shu when a plugin of another dialect has nothing else Shu-specific.
        doc["capabilities"] = _written_capabilities(plugin.host_capabilities)
        if plugin.secrets:
            doc["secrets"] = list(plugin.secrets)
        allowed = plugin.allowed_feed_ops
        if plugin.default_feed_op and (not allowed or plugin.default_feed_op in allowed):
            doc["default_feed_op"] = plugin.default_feed_op
        if allowed:
            doc["allowed_feed_ops"] = list(allowed)
        if plugin.required_identities:
            doc["required_identities"] = write_identities(plugin.required_identities)
        if plugin.op_auth:
            doc["op_auth"] = write_op_auth(plugin.op_auth)
        if plugin.origins:
            doc["origins"] = list(plugin.origins)
        for pointer, value in plugin.x.items():
            if _has_home(doc, pointer, value):
                put(doc, pointer, value)
        return doc


def _display(data: dict[str, Any], ctx: ReadContext) -> tuple[str | None, str]:
    chosen: tuple[str | None, str] | None = None
    for key in _DISPLAY_KEYS:
        if data.get(key) is None:
            continue
        text = ctx.text(data[key], f"/{key}")
        if chosen is None:
            chosen = (text, f"/{key}")
            continue
        ctx.keep(f"/{key}", data[key])
        if text != chosen[0]:
            ctx.warn("ignored_field", f"/{key}", f"{chosen[1][1:]} is the display name")
    return chosen or (None, "/display_name")


def _entries(value: Any, ctx: ReadContext) -> list[tuple[str, str | None, str]]:
    out: list[tuple[str, str | None, str]] = []
    for key, target in (ctx.mapping(value, "/entrypoints") or {}).items():
        here = pointer_join("/entrypoints", key)
        text = ctx.text(target, here)
        if text is None or not text.strip():
            ctx.error("manifest_invalid_value", here, "expected 'package.module:ClassName'")
        out.append((key, text, here))
    return out


def _capabilities(value: Any, ctx: ReadContext) -> list[str]:
    found = list(ctx.strings(value, "/capabilities"))
    for index, capability in enumerate(found):
        if capability not in _KNOWN_CAPABILITIES:
            ctx.warn(
                "unknown_host_capability", pointer_join("/capabilities", index),
                f"{capability!r} is not a known host capability; kept",
            )  # fmt: skip
    if "kb" in found and "cursor" not in found:
        found.append("cursor")
    return found


def _written_capabilities(capabilities: tuple[str, ...]) -> list[str]:
    head, last = list(capabilities[:-1]), capabilities[-1:]
    if last == ("cursor",) and "kb" in head and "cursor" not in head:
        return head  # the reader adds it back
    return list(capabilities)


def _execute(
    default_op: str | None, allowed: tuple[str, ...], chat: tuple[str, ...], auth: dict[str, Any]
) -> dict[str, Any]:
    names = list(dict.fromkeys([*([default_op] if default_op else []), *allowed, *chat, *auth]))
    if not names:
        return {"id": OPERATION_ID, "parameters": dict(EMPTY_PARAMETERS)}
    op = {"type": "string", "examples": names}
    return {"id": OPERATION_ID, "parameters": {"type": "object", "properties": {"op": op}}}


def _reserved(plugin_id: str, pointer: str, ctx: ReadContext) -> None:
    if plugin_id.startswith("mcp-") or plugin_id == "int" or ":" in plugin_id:
        ctx.warn("reserved_name", pointer, f"Shu's loader refuses the name {plugin_id!r}")


def _has_home(doc: dict[str, Any], pointer: str, value: Any) -> bool:
    """Whether an ``x`` entry can go back into ``doc`` and be read back as ``x`` again.

    Entries that cannot (another dialect's keys, or values a Shu key could not hold) stay
    out; the exporter's overlay carries them instead."""
    tokens = split(pointer)
    if len(tokens) != 1:
        return len(tokens) > 1 and nested_home(doc, pointer)
    key = tokens[0]
    if key in doc or key in _NOT_X_HOMES:
        return False
    if key == "chat_callable_ops":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if key in {"module", "title", "label"}:
        return isinstance(value, str)
    return key not in _ROOT_KEYS


DIALECT = ShuDialect()
