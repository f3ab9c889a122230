"""OLO lab: the engine configs of OLO's repositories, checked as OLO's engine loads them.

The plugins are OLO's own (the ``@OloPlugin`` classes of its plugins repository), each
turned into the ``plugin.yaml`` OLO's annotation processor writes for it and read by
plugyard's OLO manifest dialect. Every engine config (``template/*.json`` of the
Configuration repository, ``config/*.json`` of the Worker's) is then validated in
engine mode against them. A config loads when it has no fault; its warnings are
counted. Java code is not run: OLO plugins are JVM classes, which plugyard cannot host.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from plugyard.errors import ManifestError
from plugyard.manifest.load import load_text
from plugyard.pipelines.validate import validate
from plugyard.registry.model import RegisteredPlugin

_ANNOTATION = re.compile(r"@OloPlugin\((.*?)\)\s*public\s+(?:final\s+)?class\s+(\w+)", re.S)
_PACKAGE = re.compile(r"^package\s+([\w.]+);", re.M)
_STRING = r'"((?:[^"\\]|\\.)*)"'


def _field(body: str, name: str) -> str | None:
    found = re.search(rf"\b{name}\s*=\s*{_STRING}", body)
    return found.group(1) if found else None


def _strings(body: str, name: str) -> list[str]:
    found = re.search(rf"\b{name}\s*=\s*\{{([^}}]*)\}}", body)
    if found:
        return re.findall(_STRING, found.group(1))
    single = _field(body, name)
    return [single] if single is not None else []


def _params(body: str, kind: str) -> list[dict[str, Any]]:
    out = []
    for item in re.finditer(rf"@OloPlugin\.{kind}\((.*?)\)", body, re.S):
        text = item.group(1)
        entry: dict[str, Any] = {"name": _field(text, "name"), "type": _field(text, "type")}
        if kind == "Input":
            entry["required"] = "required = true" in text
        entry["description"] = _field(text, "description") or ""
        out.append(entry)
    return out


def manifests(plugins_checkout: Path) -> list[tuple[str, str]]:
    """``(class file, plugin.yaml text)`` for every ``@OloPlugin`` class, in the layout
    OLO's annotation processor writes (nested ``plugin:``; capability CUSTOM by default)."""
    out = []
    for path in sorted(plugins_checkout.rglob("*.java")):
        text = path.read_text(encoding="utf-8", errors="replace")
        found = _ANNOTATION.search(text)
        package = _PACKAGE.search(text)
        if found is None or package is None:
            continue
        body, simple = found.group(1), found.group(2)
        class_name = f"{package.group(1)}.{simple}"
        plugin: dict[str, Any] = {
            "id": _field(body, "id"),
            "name": class_name,
            "displayName": _field(body, "name") or simple,
            "version": _field(body, "version") or "1.0.0",
            "description": _field(body, "description") or "",
            "license": _field(body, "license") or "Apache-2.0",
            "capability": _strings(body, "capability") or ["CUSTOM"],
            "className": class_name,
            "scope": {
                "role": _field(body, "scopeRole") or "CAPABILITY_STAGE",
                "capabilities": _strings(body, "scopeCapabilities") or None,
            },
            "inputs": _params(body, "Input"),
            "outputs": _params(body, "Output"),
        }
        document = {"schemaVersion": "1.0", "plugin": plugin}
        out.append((str(path.relative_to(plugins_checkout)), yaml.safe_dump(document)))
    return out


class _Catalog:
    def __init__(self, plugins: list[RegisteredPlugin]) -> None:
        self.plugins = {p.id: p for p in plugins}

    def find(self, plugin_id: str) -> RegisteredPlugin | None:
        return self.plugins.get(plugin_id)

    def list(self, family: str | None = None) -> tuple[RegisteredPlugin, ...]:
        return tuple(self.plugins.values())


def configs(checkouts: list[Path]) -> list[Path]:
    found: list[Path] = []
    for checkout in checkouts:
        for folder in ("template", "config"):
            found.extend(sorted((checkout / folder).glob("*.json")))
    return found


def run(
    checkout: Path, plugins: Path | None = None, more: list[Path] | None = None
) -> dict[str, Any]:
    """``checkout``: the Configuration repository; ``plugins``: the plugins repository;
    ``more``: further checkouts holding engine configs (the Worker's ``config/``)."""
    registered: list[RegisteredPlugin] = []
    failures: list[str] = []
    declared = manifests(plugins) if plugins else []
    for where, text in declared:
        try:
            document = load_text(text, path=where)
        except ManifestError as exc:
            failures.append(f"plugin {where}: {exc.problems[0].code} {exc.problems[0].message}")
            continue
        registered.extend(RegisteredPlugin.of(d, "folder") for d in document.plugins)
    catalog = _Catalog(registered)
    files = configs([checkout, *(more or [])])
    loaded = strict = 0
    warnings: Counter[str] = Counter()
    rows = []
    for path in files:
        report = validate(path.read_bytes(), catalog, "auto")
        strict += validate(path.read_bytes(), catalog, "strict").ok
        name = f"{path.parent.name}/{path.name}"  # template/: Configuration, config/: Worker
        rows.append((name, report.ok, len(report.warnings)))
        if report.ok:
            loaded += 1
            warnings.update(w.code for w in report.warnings)
        else:
            codes = Counter(f.code for f in report.faults)
            first = report.faults[0]
            summary = ", ".join(f"{c}×{n}" for c, n in sorted(codes.items()))
            failures.append(f"{name}: {summary}; first: {first.pointer}: {first.message}")
    return {
        "system": "OLO",
        "counts": {
            "plugins declared (@OloPlugin)": len(declared),
            "plugins registered": len(registered),
            "engine configs": len(files),
            "configs loading strictly": strict,
            "configs loading in engine mode": loaded,
            "warnings on loading configs": sum(warnings.values()),
        },
        "warnings": dict(warnings),
        "rows": rows,
        "failures": failures,
    }
