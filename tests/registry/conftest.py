"""Registry tests: plugins built in code, and stores on SQLite and PostgreSQL.

The PostgreSQL half follows the store suite's rule: it fails on CI when the server is
unreachable and is skipped elsewhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plugyard.manifest.model import Operation, PluginDescriptor
from plugyard.registry.model import RegisteredPlugin, SourceKind

FIXTURES = Path(__file__).parent / "fixtures"


def descriptor(plugin_id: str, **fields: Any) -> PluginDescriptor:
    data: dict[str, Any] = {
        "id": plugin_id,
        "name": plugin_id.replace("-", " ").title(),
        "version": "1.0.0",
        "description": f"The {plugin_id} plugin.",
        "operations": (Operation(id="run", description="Run it."),),
    }
    data.update(fields)
    return PluginDescriptor.model_validate(data, strict=False)


def plugin(
    plugin_id: str,
    *,
    source: SourceKind = "folder",
    location: str | None = None,
    **fields: Any,
) -> RegisteredPlugin:
    where = location if location is not None else f"/plugins/tool/{plugin_id}"
    return RegisteredPlugin.of(
        descriptor(plugin_id, **fields),
        source,
        location=where if source != "external" else None,
        manifest_path=f"{where}/plugin.yaml" if source != "external" else None,
        dialect="olo" if source != "external" else "homeclaw",
    )
