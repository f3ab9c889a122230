"""Write a descriptor back as a manifest of any dialect, losslessly.

A dialect cannot express every canonical field (OLO has one operation, Shu none in its
manifest). The writer emits what the dialect can say; whatever the dialect's reader would
not give back is stored under ``x-plugyard`` at the document's top level, so that
dialect → canonical → dialect → canonical returns the same descriptor.
"""

from __future__ import annotations

from typing import Any

from plugyard.errors import ExportError
from plugyard.manifest.dialects import BY_NAME
from plugyard.manifest.model import PluginDescriptor
from plugyard.manifest.reading import OVERLAY_KEY, ReadContext

DIALECT_NAMES = tuple(sorted(BY_NAME))


def to_dialect(plugin: PluginDescriptor, dialect: str) -> dict[str, Any]:
    """``plugin`` as a document of ``dialect``."""
    try:
        writer = BY_NAME[dialect]
    except KeyError:
        raise ExportError(f"unknown dialect {dialect!r}; one of {DIALECT_NAMES}") from None
    document = writer.write(plugin)
    ctx = ReadContext()
    back = writer.read(document, ctx)
    wanted = plugin.model_dump(mode="json")
    if len(back) == 1 and not ctx.errors:
        got = back[0].model_dump(mode="json")
        overlay = {key: value for key, value in wanted.items() if got.get(key) != value}
    else:
        overlay = plugin.to_data()
    if overlay:
        document[OVERLAY_KEY] = overlay
    return document
