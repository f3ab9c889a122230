"""KB retrieval in the plan's ``kbPluginOrder`` (DS003, DS027).

Each KB plugin answers its status object: ``success`` with ``sufficient: true`` stops the
stage; ``success`` without it, ``insufficient``, ``no-context`` and ``unsupported``
continue to the next plugin (what they found is kept); a failure or a budget skip is
recorded and the stage goes on. The evidence is what the plugins selected, ahead of the
units the turn itself brought. KUs a plugin resolves as guidance for a phase (or all of
them, in a strategy-guidance frame) become that phase's guidance.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plugyard.reasoning.stages import StageRunner
from plugyard.reasoning.task import MAX_EVIDENCE, Task
from plugyard.reasoning.trace import Frame
from plugyard.reasoning.units import Unit, merged, units_of

_UNIT_KEYS = ("units", "evidence", "evidenceKUs", "kus", "context")
_GUIDANCE_KEYS = ("guidance", "guidanceKUs")
_CONTINUE = frozenset({"success", "insufficient", "no-context", "unsupported"})


@dataclass(frozen=True, slots=True)
class Retrieved:
    evidence: tuple[Unit, ...] = ()
    guidance: tuple[Unit, ...] = ()
    sufficient: bool = False


async def retrieve(
    run: StageRunner,
    order: tuple[str, ...],
    task: Task,
    frame: Frame,
    *,
    planner: str,
    purpose: str = "task-evidence",
    limit: int = 8,
) -> Retrieved:
    found: list[Unit] = []
    guidance: list[Unit] = []
    for plugin_id in order[:limit]:
        payload = task.payload(purpose=purpose, frameDepth=frame.depth)
        call = await run.run("kb", plugin_id, "retrieve", payload, planner=planner, frame=frame)
        if call.status not in _CONTINUE:
            continue  # a failure or a budget skip: recorded, and the next plugin tries
        units, scoped = _resolved(call.data)
        trace = call.data.get("retrievalTrace")
        said = trace.get("purpose") if isinstance(trace, Mapping) else None
        if "strategy-guidance" in (purpose, said):
            guidance.extend(units)
        else:
            found.extend(units)
        guidance.extend(scoped)
        if call.status == "success" and call.data.get("sufficient") is True:
            return Retrieved(_evidence(found, task), tuple(guidance), True)
    return Retrieved(_evidence(found, task), tuple(guidance), False)


def _resolved(data: Mapping[str, Any]) -> tuple[tuple[Unit, ...], tuple[Unit, ...]]:
    evidence: list[Unit] = []
    guidance: list[Unit] = []
    intents = data.get("resolvedIntents")
    for item in intents if isinstance(intents, list) else ():
        if not isinstance(item, Mapping):
            continue
        for key in _UNIT_KEYS:
            evidence.extend(units_of(item.get(key)))
        for key in _GUIDANCE_KEYS:
            guidance.extend(units_of(item.get(key)))
    return tuple(evidence), tuple(guidance)


def _evidence(found: list[Unit], task: Task) -> tuple[Unit, ...]:
    return merged(found, task.units, limit=MAX_EVIDENCE)
