"""plugyard's own descriptor document: the canonical model as JSON or YAML."""

from __future__ import annotations

from typing import Any

import jsonschema_rs

from plugyard.manifest.model import PluginDescriptor
from plugyard.manifest.reading import ReadContext

SCHEMA_ID = "https://plugyard.dev/schemas/plugin-descriptor.schema.json"


class CanonicalDialect:
    name = "canonical"
    keys = frozenset(("$schema", *PluginDescriptor.model_fields))

    def score(self, data: dict[str, Any]) -> int:
        return 100 if data.get("$schema") == SCHEMA_ID else 0

    def read(self, data: dict[str, Any], ctx: ReadContext) -> list[PluginDescriptor]:
        fields = {k: v for k, v in data.items() if k != "$schema"}
        pointers = {key: f"/{key}" for key in fields}
        built = ctx.build(fields, pointers)
        if built is None:
            return []
        for index, op in enumerate(built.operations):
            for key in ("parameters", "output_schema"):
                schema = getattr(op, key)
                if schema is not None and not jsonschema_rs.meta.is_valid(schema):
                    where = f"/operations/{index}/{key}"
                    ctx.error("manifest_invalid_schema", where, "not a valid JSON Schema")
        return [] if ctx.errors else [built]

    def write(self, plugin: PluginDescriptor) -> dict[str, Any]:
        return {"$schema": SCHEMA_ID, **plugin.to_data()}


DIALECT = CanonicalDialect()
