"""What a search asks and what it answers: the query checks, filters and matches.

Bad input is refused with ``invalid_query`` and a message that names the fault; a
query that is merely long is cut, not refused (see :data:`MAX_QUERY_CHARS`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from plugyard.errors import PlugyardError
from plugyard.manifest.model import FAMILIES
from plugyard.registry.model import RegisteredPlugin

#: Longer queries are cut to this many characters (at a word boundary). The embedder
#: reads at most 256 tokens, about this much English text, so the cut loses nothing the
#: dense channel would use, and it bounds the keyword channel's work.
MAX_QUERY_CHARS = 1000
MAX_K = 100

#: ``can_see(plugin_id, operation)``: may the caller see (and so call) it? ``operation``
#: is ``None`` for the plugin as a whole.
CanSee = Callable[[str, str | None], bool]


class QueryError(PlugyardError):
    """A search the service cannot answer as asked: empty or non-text query, ``k`` out
    of range, an unknown family in a filter."""

    default_code = "invalid_query"


def allow_all(plugin_id: str, operation: str | None) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class Filters:
    """Which plugins a search may return.

    ``family``: one family or several. ``capability``: plugins an OLO pipeline may
    place under that capability (stage plugins that list it or ``ALL``). Unavailable
    plugins are left out unless ``include_unavailable``. ``can_see`` is the caller's
    rights; the default allows everything (governance fills it in).
    """

    family: str | tuple[str, ...] | None = None
    capability: str | None = None
    include_unavailable: bool = False
    can_see: CanSee = allow_all
    #: Only matches above the relevance floor (``Match.relevant``): an empty answer then
    #: means "nothing relevant", not "the first k, however far".
    relevant_only: bool = False

    def families(self) -> frozenset[str] | None:
        if self.family is None:
            return None
        wanted = (self.family,) if isinstance(self.family, str) else tuple(self.family)
        unknown = [f for f in wanted if f not in FAMILIES]
        if unknown or not wanted:
            raise QueryError(
                f"unknown family {unknown[0] if unknown else ''!r} in the filter; "
                f"one of {', '.join(FAMILIES)}"
            )
        return frozenset(wanted)

    def admits(self, plugin: RegisteredPlugin, families: frozenset[str] | None) -> bool:
        """The plugin-level conditions (everything but the caller's rights)."""
        if not self.include_unavailable and not plugin.available:
            return False
        if families is not None and plugin.family not in families:
            return False
        return self.capability is None or plugin.descriptor.placement.allows(self.capability)


@dataclass(frozen=True, slots=True)
class Match:
    """One plugin found: its best operation when an operation entry matched (or when
    it has just one the caller may call), the fused score and why it matched."""

    plugin: RegisteredPlugin
    operation: str | None
    score: float
    why: str
    relevant: bool = True

    @property
    def plugin_id(self) -> str:
        return self.plugin.id

    def to_dict(self) -> dict[str, Any]:
        d = self.plugin.descriptor
        return {
            "plugin": d.id,
            "operation": self.operation,
            "score": round(self.score, 4),
            "why": self.why,
            "relevant": self.relevant,
            "name": d.name,
            "family": d.family,
            "description": d.description,
            "available": self.plugin.available,
        }


class Matches(list[Match]):
    """A search's matches, best first, and the ``search_id`` a call or feedback names
    to say which of them answered (docs/discovery.md)."""

    def __init__(self, matches: list[Match] = [], *, search_id: str = "") -> None:  # noqa: B006
        super().__init__(matches)
        self.search_id = search_id


def check_query(query: object) -> str:
    """The query as searched: stripped, and cut at :data:`MAX_QUERY_CHARS`."""
    if not isinstance(query, str):
        raise QueryError(f"the query must be text, not {type(query).__name__}")
    text = query.strip()
    if not text:
        raise QueryError("the query is empty")
    if len(text) > MAX_QUERY_CHARS:
        cut = text[:MAX_QUERY_CHARS]
        space = cut.rfind(" ")
        text = (cut[:space] if space > MAX_QUERY_CHARS // 2 else cut).rstrip()
    return text


def check_k(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, int):
        raise QueryError(f"k must be an integer, not {type(k).__name__}")
    if not 1 <= k <= MAX_K:
        raise QueryError(f"k must be between 1 and {MAX_K}, not {k}")
    return k
