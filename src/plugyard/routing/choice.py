"""What the loop offers and what the model chose: a candidate operation the caller may
call, and a call of one with its arguments (loop.py). The model's answer is read back
against the tools offered (offer.py): a name outside them is never called."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plugyard.manifest.model import Operation, PluginDescriptor


@dataclass(frozen=True, slots=True)
class Candidate:
    """An operation the caller may call, as offered to the model."""

    plugin_id: str
    operation: Operation
    score: float
    description: str = ""
    name: str = ""  # the plugin's name for people, when it has one
    #: The plugin's descriptor, for exporting the operation as a tool definition.
    descriptor: PluginDescriptor | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.plugin_id, self.operation.id)


@dataclass(frozen=True, slots=True)
class Choice:
    """A call the model chose: a candidate and its arguments (grounded, once act.py
    has seen them)."""

    candidate: Candidate
    arguments: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "plugin": self.candidate.plugin_id,
            "operation": self.candidate.operation.id,
            "arguments": dict(self.arguments),
        }
