"""The KB plugins' hooks: source texts (``onSourceText``) and session events
(``onSessionEvent``), each offered to every enabled ``kb-plugin`` (DS003, DS027).

A source document is first normalised into knowledge units by a seed detector's
``normalizePersistentContext`` (the first that answers units; without one, the core
splits it into paragraphs), then the raw text and the units go to each KB plugin with
the hook context (``hookType: "source-text"``, ``kbRepositoryManager``, no parser or
decomposer). A session event goes out in DS027's canonical envelope. A plugin that
fails or refuses is traced and does not stop the others.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from plugyard.reasoning.catalog import members
from plugyard.reasoning.session import Session
from plugyard.reasoning.sop import SopError, admit_units
from plugyard.reasoning.stages import StageRunner
from plugyard.reasoning.units import MAX_UNIT_CHARS, Unit, dicts
from plugyard.runtimes.base import ErrorInfo

#: Units one source may become, and how many a session event carries.
MAX_SOURCE_UNITS = 2_000
MAX_EVENT_UNITS = 5_000
_PARAGRAPH = re.compile(r"\n\s*\n")


async def session_event(
    run: StageRunner,
    event: str,
    session: Session,
    *,
    units: Iterable[Unit] = (),
    scope: str | None = None,
    previous: Session | None = None,
    reason: str | None = None,
    snapshot: Mapping[str, Any] | None = None,
    requested_kb_id: str | None = None,
) -> None:
    """Tell every enabled KB plugin about ``event`` (DS027's canonical envelope)."""
    envelope = {
        "eventType": event,
        "sessionId": session.id,
        "kbId": session.kb_id,
        "kbName": session.kb_name,
        "requestedKbId": requested_kb_id,
        "previousKbId": previous.kb_id if previous else None,
        "previousKbName": previous.kb_name if previous else None,
        "repositoryMeta": None,
        "workspaceStats": session.stats(),
        "snapshot": dict(snapshot) if snapshot is not None else None,
        "units": dicts(list(units)[:MAX_EVENT_UNITS]),
        "scope": scope,
        "reason": reason,
    }
    for plugin in members(run.catalog, "kb"):
        await run.run(
            "kb", plugin.id, "on_session_event", envelope, kind="hook", hook="session-event"
        )


async def source_text(
    run: StageRunner, detectors: tuple[str, ...], name: str, text: str, source_id: str
) -> tuple[Unit, ...]:
    """Normalise a source into units and offer text and units to every KB plugin."""
    units = await normalize(run, detectors, name, text, source_id)
    offer = {"sourceId": source_id, "sourceName": name, "text": text, "units": dicts(units)}
    for plugin in members(run.catalog, "kb"):
        await run.run("kb", plugin.id, "on_source_text", offer, kind="hook", hook="source-text")
    return units


async def normalize(
    run: StageRunner, detectors: tuple[str, ...], name: str, text: str, source_id: str
) -> tuple[Unit, ...]:
    found: list[tuple[Unit, ...]] = []

    def judge(data: Mapping[str, Any]) -> ErrorInfo | None:
        try:
            units = admit_units(data.get("contextCNL"))
        except SopError as exc:
            return ErrorInfo("invalid_output", f"contextCNL: {exc}")
        if not units:
            return ErrorInfo("invalid_output", "contextCNL admits no unit")
        found.append(_sourced(units, name, source_id))
        return None

    payload = {
        "prompt": f"Normalize the source text {name!r} into knowledge units.",
        "context": [{"title": name, "sourceLink": source_id, "text": text}],
        "sourceId": source_id,
        "sourceName": name,
    }
    for detector in detectors:
        call = await run.run(
            "seed-detector",
            detector,
            "normalize_persistent_context",
            payload,
            kind="hook",
            hook="source-text",
            judge=judge,
        )
        if call.status == "success" and found:
            return found[-1][:MAX_SOURCE_UNITS]
    run.recorder.note("paragraphs", source=source_id, why="no seed detector normalised it")
    return paragraphs(text, name, source_id)


def paragraphs(text: str, name: str, source_id: str) -> tuple[Unit, ...]:
    """The core's own split when no detector normalises a source: one unit a paragraph."""
    parts = [p.strip() for p in _PARAGRAPH.split(text) if p.strip()]
    units = [
        Unit(part[:MAX_UNIT_CHARS], name, source_id, {"id": f"{source_id}::p{i:04d}"})
        for i, part in enumerate(parts[:MAX_SOURCE_UNITS])
    ]
    return tuple(units)


def _sourced(units: tuple[Unit, ...], name: str, source_id: str) -> tuple[Unit, ...]:
    """Units that do not say where they come from come from this source."""
    return tuple(Unit(u.text, u.title or name, u.source_link or source_id, u.meta) for u in units)
