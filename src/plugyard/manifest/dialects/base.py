"""The shape every manifest dialect implements."""

from __future__ import annotations

from typing import Any, Protocol

from plugyard.manifest.model import PluginDescriptor
from plugyard.manifest.reading import ReadContext


class Dialect(Protocol):
    """A manifest format: recognised from its data, read into and written from the
    canonical descriptor."""

    name: str
    #: The top-level keys this dialect knows (for hints when no dialect matches).
    keys: frozenset[str]

    def score(self, data: dict[str, Any]) -> int:
        """How strongly ``data`` looks like this dialect; 0 means not at all."""
        ...

    def read(self, data: dict[str, Any], ctx: ReadContext) -> list[PluginDescriptor]:
        """The plugins ``data`` declares; faults go to ``ctx``."""
        ...

    def write(self, plugin: PluginDescriptor) -> dict[str, Any]:
        """``plugin`` as this dialect's document (before the lossless overlay)."""
        ...
