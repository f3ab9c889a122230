"""The ``parser`` and ``decomposer`` of the DS003 runtime context: what the core itself
uses to admit seed documents and to split tasks, lent to in-process plugins (``null``
for wrappers and in the source-text hook)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from plugyard.reasoning.frames import split
from plugyard.reasoning.sop import admit, admit_units
from plugyard.reasoning.task import Task
from plugyard.reasoning.units import dicts


class Parser:
    """Reads SOP Lang Control as the core does (raises ``ValueError`` when it cannot)."""

    def admit(self, intent_cnl: str | None, context_cnl: str | None = None) -> dict[str, Any]:
        found = admit(intent_cnl, context_cnl)
        return {"intents": [dict(i) for i in found.intents], "units": dicts(found.units)}

    def units(self, context_cnl: str | None) -> list[dict[str, Any]]:
        return dicts(admit_units(context_cnl))


class Decomposer:
    """Splits a task as the core does when a solver asks for decomposition."""

    def split(self, prompt: str, intents: Sequence[Mapping[str, Any]] = ()) -> list[str]:
        return split(Task(prompt, tuple(intents)))


HELPERS: Mapping[str, Any] = {"parser": Parser(), "decomposer": Decomposer()}
