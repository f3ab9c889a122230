"""HomeClaw runtime settings: the ``config`` mapping of plugin.yaml or a registration body,
merged with the legacy ``config.yml`` beside a built-in plugin, and split into the
canonical runtime, ``config``, ``tags`` and ``secrets``.

``config.yml`` is the operator's copy, so its keys win over plugin.yaml's ``config``. Its
legacy keys are not settings: ``id`` must agree with the plugin, ``description`` and the
plugin-level ``parameters`` are fallbacks the reader uses when plugin.yaml lacks them, and
``keywords`` are routing words, read as tags. A key that names a secret (``apiKey``,
``email_pass``, ``bridge_api_key`` …) is read as the *name* of a secret the plugin needs;
its value never enters the descriptor, which is indexed, stored and exported. Problems
found in ``config.yml`` are reported at ``/config/<key>``: that file *is* the plugin's
config in HomeClaw (``config: {config_file: config.yml}``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from plugyard.manifest.model import PluginDescriptor
from plugyard.manifest.pointer import pointer_join
from plugyard.manifest.reading import ReadContext

SIDECARS = ("config.yml", "config.yaml")
_SECRET_WORDS = frozenset(
    {"password", "passwd", "pass", "pwd", "secret", "token", "apikey", "credential",
     "credentials"}
)  # fmt: skip
_SECRET_PAIRS = frozenset(
    {("api", "key"), ("private", "key"), ("access", "key"), ("secret", "key")}
)
_MCP_TRANSPORTS = {"stdio": "stdio", "streamable-http": "streamable-http"}
_MCP_SYNONYMS = {"http": "streamable-http", "streamable_http": "streamable-http"}


def is_secret_key(key: str) -> bool:
    """Whether a settings key names a credential (``apiKey``, ``email_pass``, ``token``)."""
    snake = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", key).lower()
    tokens = [t for t in re.split(r"[^a-z0-9]+", snake) if t]
    if _SECRET_WORDS.intersection(tokens):
        return True
    return any(pair in _SECRET_PAIRS for pair in pairwise(tokens))


@dataclass
class Settings:
    """The settings of one plugin, with the legacy keys taken out."""

    values: dict[str, Any] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)
    tags: tuple[str, ...] = ()
    description: str | None = None
    parameters: list[Any] = field(default_factory=list)


def read_settings(
    data: dict[str, Any], ctx: ReadContext, plugin_id: str | None, *, sidecar: bool
) -> Settings:
    """The plugin's settings: plugin.yaml ``config`` overlaid by ``config.yml``."""
    values = dict(ctx.mapping(data.get("config"), "/config") or {})
    if sidecar:
        values.update(_sidecar(values, ctx))
    out = Settings()
    legacy_id = ctx.text(values.pop("id", None), "/config/id")
    if legacy_id is not None and plugin_id is not None and legacy_id != plugin_id:
        ctx.warn("conflicting_field", "/config/id", f"config id {legacy_id!r} is not the plugin's")
    out.description = ctx.text(values.pop("description", None), "/config/description")
    out.parameters = ctx.items(values.pop("parameters", None), "/config/parameters")
    out.tags = ctx.strings(values.pop("keywords", None), "/config/keywords")
    for key in [k for k in values if is_secret_key(k)]:
        value = values.pop(key)
        out.secrets.append(key)
        if value not in (None, ""):
            ctx.warn(
                "secret_in_config",
                pointer_join("/config", key),
                f"'{key}' holds a secret; its value is left out, put it in the secret store",
            )
    out.values = values
    return out


def _sidecar(inline: dict[str, Any], ctx: ReadContext) -> dict[str, Any]:
    sidecars: dict[str, Any] = getattr(ctx, "sidecars", None) or {}
    named = inline.get("config_file")
    for name in ((named,) if isinstance(named, str) else ()) + SIDECARS:
        if name not in sidecars:
            continue
        found = sidecars[name]
        if isinstance(found, dict):
            return found
        if found is not None:
            ctx.warn("ignored_sidecar", "/config/config_file", f"{name} is not a mapping")
        return {}
    return {}


def build_runtime(
    kind: str, settings: Settings, health: str | None, ctx: ReadContext
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The canonical runtime for a HomeClaw ``type``, and the plugin config left over."""
    values = dict(settings.values)
    if kind == "inline":
        return {"kind": "python"}, values
    if kind == "http":
        timeout = ctx.number(values.pop("timeout_sec", None), "/config/timeout_sec")
        if timeout is not None and timeout <= 0:
            ctx.error("manifest_invalid_value", "/config/timeout_sec", "must be positive")
        runtime: dict[str, Any] = {
            "kind": "http",
            "base_url": _required(values, "base_url", ctx),
            "health_check_url": health,
            "timeout_s": timeout,
            "config": values,
            "envelope": "homeclaw",
        }
        return runtime, {}
    if kind == "subprocess":
        runtime = {
            "kind": "subprocess",
            "command": _required(values, "command", ctx),
            "args": ctx.strings(values.pop("args", None), "/config/args"),
            "env": _string_map(values.pop("env", None), "/config/env", ctx),
            "cwd": ctx.text(values.pop("cwd", None), "/config/cwd"),
            "protocol_version": ctx.text(
                values.pop("protocol_version", None), "/config/protocol_version"
            ),
        }
        return runtime, values
    command = ctx.text(values.pop("command", None), "/config/command")
    url = ctx.text(values.pop("url", None), "/config/url")
    runtime = {
        "kind": "mcp",
        "transport": _transport(values.pop("transport", None), command, url, ctx),
        "command": command,
        "args": ctx.strings(values.pop("args", None), "/config/args"),
        "url": url,
        "env": _string_map(values.pop("env", None), "/config/env", ctx),
        "health_check_url": health,
        "config": values,
    }
    return runtime, {}


def _required(values: dict[str, Any], key: str, ctx: ReadContext) -> str | None:
    value = ctx.text(values.pop(key, None), pointer_join("/config", key))
    if value is None or not value.strip():
        ctx.error("manifest_missing_field", pointer_join("/config", key), f"'{key}' is required")
        return None
    return value


def _string_map(value: Any, pointer: str, ctx: ReadContext) -> dict[str, str]:
    mapping = ctx.mapping(value, pointer) or {}
    out: dict[str, str] = {}
    for key, item in mapping.items():
        text = ctx.text(item, pointer_join(pointer, key))
        if text is not None:
            out[key] = text
    return out


def _transport(raw: Any, command: str | None, url: str | None, ctx: ReadContext) -> str:
    text = ctx.text(raw, "/config/transport")
    if text is None:
        return "streamable-http" if url and not command else "stdio"
    if text in _MCP_TRANSPORTS:
        return text
    if text.lower() in _MCP_SYNONYMS:
        meant = _MCP_SYNONYMS[text.lower()]
        ctx.warn("type_synonym", "/config/transport", f"{text!r} read as {meant!r}")
        return meant
    ctx.error("manifest_invalid_value", "/config/transport", f"unknown transport {text!r}")
    return "stdio"


def write_settings(plugin: PluginDescriptor) -> tuple[str | None, dict[str, Any]]:
    """The HomeClaw ``type`` and ``config`` that read back as ``plugin``'s runtime,
    config, tags and secret names (secrets are written as null: the value lives in the
    secret store)."""
    runtime = plugin.runtime
    config: dict[str, Any] = dict(plugin.config)
    kind: str | None
    if runtime.kind == "python":
        kind = "inline"
    elif runtime.kind == "http":
        kind = "http"
        config = {"base_url": runtime.base_url, **runtime.config}
        if runtime.timeout_s is not None:
            timeout = runtime.timeout_s
            config["timeout_sec"] = int(timeout) if timeout.is_integer() else timeout
    elif runtime.kind == "subprocess":
        kind = "subprocess"
        config["command"] = runtime.command
        _put_present(config, args=list(runtime.args), env=dict(runtime.env), cwd=runtime.cwd,
                     protocol_version=runtime.protocol_version)  # fmt: skip
    elif runtime.kind == "mcp":
        kind = "mcp"
        config = dict(runtime.config)
        _put_present(config, command=runtime.command, args=list(runtime.args), url=runtime.url,
                     env=dict(runtime.env))  # fmt: skip
        inferred = "streamable-http" if runtime.url and not runtime.command else "stdio"
        if runtime.transport != inferred:
            config["transport"] = runtime.transport
    else:
        kind = None
    if plugin.tags:
        config["keywords"] = list(plugin.tags)
    for name in plugin.secrets:
        if is_secret_key(name) and name not in config:
            config[name] = None
    return kind, config


def _put_present(config: dict[str, Any], **values: Any) -> None:
    config.update({key: value for key, value in values.items() if value})
