"""The catalog page's data: the OLO palette of what the viewer may see, filtered and paged.

Grouping is :func:`plugyard.manifest.palette.palette` — the one implementation of the
OLO rules (``ALL`` under every section, *Undefined*, control components by role) — and
only the plugins on the page shown are turned into cards. The grouping of what one
subject sees under one set of filters is kept (:class:`CatalogMemo`) until the registry
or the policy changes, so paging through ten thousand plugins costs a slice and a few
dozen cards per page (bench/RESULTS.md, "Console").
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from plugyard.discovery.query import CanSee
from plugyard.manifest.model import PluginDescriptor
from plugyard.manifest.palette import Palette, palette
from plugyard.registry.model import RegisteredPlugin

#: Cards per section on the overview; a section opened alone pages by PAGE_SIZE.
PER_SECTION = 12
PAGE_SIZE = 60
Runtime = Literal["python", "subprocess", "http", "mcp", "none"]
Health = Literal["available", "unavailable"]


class CatalogQuery(BaseModel):
    """The catalog's query string, read strictly at the edge (``invalid_request``)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    family: Literal["tool", "sd", "kb", "gs", "val", "plan"] | None = None
    runtime: Runtime | None = None
    health: Health | None = None
    trust: Literal["trusted", "untrusted"] | None = None
    section: str | None = Field(default=None, max_length=100)
    page: int = Field(default=1, ge=1, le=100_000)
    q: str | None = Field(default=None, max_length=1000)

    @property
    def filters(self) -> tuple[str | None, ...]:
        return (self.family, self.runtime, self.health, self.trust)

    def keeps(self, plugin: RegisteredPlugin) -> bool:
        d = plugin.descriptor
        if self.family is not None and d.family != self.family:
            return False
        if self.runtime is not None and d.runtime.kind != self.runtime:
            return False
        if self.trust is not None and plugin.trust != self.trust:
            return False
        return self.health is None or plugin.available == (self.health == "available")

    def link(self, **changes: Any) -> str:
        """This query with ``changes``, as a URL of the catalog."""
        values = self.model_dump(exclude_none=True) | changes
        if values.get("page") == 1:
            values.pop("page")
        pairs = [f"{k}={_quote(str(v))}" for k, v in values.items() if v not in (None, "")]
        return "/?" + "&".join(pairs) if pairs else "/"


def _quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")


def card(plugin: RegisteredPlugin) -> dict[str, Any]:
    """What one catalog card shows."""
    d = plugin.descriptor
    return {
        "id": d.id,
        "name": d.name,
        "version": d.version,
        "description": d.description,
        "family": d.family,
        "runtime": d.runtime.kind,
        "trust": plugin.trust,
        "available": plugin.available,
        "unavailable_reason": plugin.unavailable_reason,
        "role": d.placement.role,
        "capabilities": list(d.placement.capabilities),
        "only_inside_group": d.placement.only_inside_group,
    }


@dataclass(frozen=True, slots=True)
class Section:
    """One section of the page: a capability (or *Undefined*) or a control role."""

    name: str
    kind: Literal["capability", "control"]
    total: int
    cards: tuple[dict[str, Any], ...]
    page: int
    pages: int


Grouped = tuple[dict[str, RegisteredPlugin], Palette[PluginDescriptor]]
MEMO_SIZE = 64


class CatalogMemo:
    """Groupings by (registry generation, viewer and filters), newest kept.

    ``changed`` is what the registry calls on every change (``Registry.subscribe``):
    the generation moves on and every kept grouping is stale at once. The caller puts
    the policy's version in the key, so a new policy is a new grouping too."""

    def __init__(self, size: int = MEMO_SIZE) -> None:
        self._size = size
        self._kept: OrderedDict[Hashable, Grouped] = OrderedDict()
        self._generation = 0
        self._lock = threading.Lock()

    def changed(self, *_: object) -> None:
        with self._lock:
            self._generation += 1
            self._kept.clear()

    def grouped(self, key: Hashable, build: Callable[[], Grouped]) -> Grouped:
        with self._lock:
            full = (self._generation, key)
            found = self._kept.get(full)
            if found is not None:
                self._kept.move_to_end(full)
                return found
        made = build()  # outside the lock: two first requests may both build, harmlessly
        with self._lock:
            if full[0] == self._generation:
                self._kept[full] = made
                while len(self._kept) > self._size:
                    self._kept.popitem(last=False)
        return made


def group(
    plugins: Sequence[RegisteredPlugin], can_see: CanSee, visible: Any, query: CatalogQuery
) -> Grouped:
    by_id = {p.id: p for p in plugins if query.keeps(p) and visible(p, can_see)}
    return by_id, palette(p.descriptor for p in by_id.values())


def catalog(grouped: Grouped, query: CatalogQuery) -> tuple[Section, ...]:
    """The sections of the page ``query`` asks for (one section when it names one)."""
    by_id, view = grouped
    groups: list[tuple[str, Literal["capability", "control"], tuple[PluginDescriptor, ...]]] = [
        (name, "capability", members) for name, members in view.sections
    ]
    groups.extend((role, "control", members) for role, members in view.control)
    if query.section is not None:
        groups = [g for g in groups if g[0] == query.section]
    size = PAGE_SIZE if query.section is not None else PER_SECTION
    page = query.page if query.section is not None else 1
    out = []
    for name, kind, members in groups:
        pages = max(1, -(-len(members) // size))
        start = (min(page, pages) - 1) * size
        shown = tuple(card(by_id[d.id]) for d in members[start : start + size])
        out.append(Section(name, kind, len(members), shown, min(page, pages), pages))
    return tuple(out)
