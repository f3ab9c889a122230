"""plugyard's own descriptor document: the canonical model as JSON or YAML."""

from __future__ import annotations

from typing import Any

from plugyard.manifest.model import PluginDescriptor
from plugyard.manifest.reading import ReadContext

SCHEMA_ID = "https://plugyard.dev/schemas/plugin-descriptor.schema.json"


class CanonicalDialect:
    name = "canonical"

    def score(self, data: dict[str, Any]) -> int:
        return 100 if data.get("$schema") == SCHEMA_ID else 0

    def read(self, data: dict[str, Any], ctx: ReadContext) -> list[PluginDescriptor]:
        fields = {k: v for k, v in data.items() if k != "$schema"}
        pointers = {key: f"/{key}" for key in fields}
        built = ctx.build(fields, pointers)
        return [built] if built else []

    def write(self, plugin: PluginDescriptor) -> dict[str, Any]:
        return {"$schema": SCHEMA_ID, **plugin.to_data()}


DIALECT = CanonicalDialect()
