"""Knowledge units (KUs): the background evidence every family call receives.

A unit travels to plugins as DS003's structured item ``{title, sourceLink, text}`` —
never as compacted Markdown — plus what the seed detector said about it (``id``,
``role``, ``topic``, ``phaseScopes`` …). Inside plugyard it is a frozen :class:`Unit`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: A unit longer than this is cut: one unit is a paragraph-sized idea, not a document.
MAX_UNIT_CHARS = 8_000
_OWN = frozenset({"title", "sourceLink", "text"})
#: Where a unit's text may be: DS003's ``text``, or an SOP KU's ``claim`` or ``procedure``.
_TEXT_KEYS = ("text", "claim", "procedure")
#: Phase scopes (DS027 "PhaseScopes") that make a unit guidance for a phase rather than
#: evidence for the goal solver.
GUIDANCE_SCOPES = {
    "mrp-plan-plugin": "planner",
    "gs-plugin": "goalSolver",
    "frame": "decomposition",
    "val-plugin": "validation",
    "sd-plugin": "seedRouting",
}


@dataclass(frozen=True, slots=True)
class Unit:
    text: str
    title: str = ""
    source_link: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        found = self.meta.get("id")
        return found if isinstance(found, str) else ""

    def phases(self) -> tuple[str, ...]:
        """The guidance phases this unit is scoped to (none: it is evidence)."""
        scopes = self.meta.get("phaseScopes")
        if not isinstance(scopes, list | tuple):
            return ()
        return tuple(dict.fromkeys(GUIDANCE_SCOPES[s] for s in scopes if s in GUIDANCE_SCOPES))

    def to_dict(self) -> dict[str, Any]:
        return {**self.meta, "title": self.title, "sourceLink": self.source_link, "text": self.text}

    @classmethod
    def of(cls, data: Any) -> Unit | None:
        """A unit from a plugin's or a client's mapping; ``None`` when it carries no text."""
        if isinstance(data, Unit):
            return data
        if not isinstance(data, Mapping):
            return None
        key = next(
            (k for k in _TEXT_KEYS if isinstance(data.get(k), str) and data[k].strip()), None
        )
        if key is None:
            return None
        text = str(data[key])
        title = data.get("title") or data.get("topic") or ""
        link = data.get("sourceLink") or data.get("sourceId") or ""
        meta = {
            str(k): v
            for k, v in data.items()
            if k not in _OWN and k != key and isinstance(k, str) and _plain(v) and k != "score"
        }
        return cls(
            text.strip()[:MAX_UNIT_CHARS],
            str(title)[:500] if isinstance(title, str) else "",
            str(link)[:1000] if isinstance(link, str) else "",
            meta,
        )


def units_of(items: Any, limit: int | None = None) -> tuple[Unit, ...]:
    """The units among ``items`` (anything that is not a unit is dropped), at most ``limit``."""
    if not isinstance(items, list | tuple):
        return ()
    found = [u for u in (Unit.of(item) for item in items) if u is not None]
    return tuple(found if limit is None else found[:limit])


def dicts(units: Iterable[Unit]) -> list[dict[str, Any]]:
    return [unit.to_dict() for unit in units]


def merged(*groups: Iterable[Unit], limit: int | None = None) -> tuple[Unit, ...]:
    """The units of every group, first occurrence kept (same text and source: same unit)."""
    seen: set[tuple[str, str]] = set()
    out: list[Unit] = []
    for group in groups:
        for unit in group:
            key = (unit.text, unit.source_link)
            if key not in seen:
                seen.add(key)
                out.append(unit)
    return tuple(out if limit is None else out[:limit])


def _plain(value: Any) -> bool:
    """JSON scalars and lists of them: what a unit's metadata may carry."""
    if value is None or isinstance(value, str | int | float | bool):
        return True
    return isinstance(value, list | tuple) and all(
        v is None or isinstance(v, str | int | float | bool) for v in value
    )
