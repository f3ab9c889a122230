"""The offered tools as discovery ranks them for a request, and for each of its parts.

Each tool is read as a document of its name's words and its description, and ranked by
``DiscoveryService.rank`` — the yard's embedder and hybrid index, as for the catalog.
What the ranking says reaches the model's decision (``llm/calls.respond``) as a
:class:`Favoured`:

- **the first tool.** For a client's own tools, the first one is favoured: on BFCL's
  tuning halves it was right for 24 of 25 multiple and 22 of 25 live_multiple requests,
  the 0.5B model's own choice for 20 and 13 (bench/labs/BFCL_LAB.md). It overrules a
  choice of none only when it clears the embedder's relevance floor: a client offers
  its tools whatever the request.
- **the parts' tools.** A request of several parts ("… and then …") is split where
  discovery splits a multi-intent query; a part whose first tool is relevant to it, and
  nearer to it than the whole request is by :data:`PART_LEAD` (cosine), has a call of
  that tool asked for beside the model's choice. A small model writes one call for most
  requests that need several functions.

The yard's own operations are not ranked here: retrieval has ranked them already (its
first is favoured, loop.py), and the two rankings are not on one scale. A request's
parts are retrieved for instead (:func:`yard_parts`): each part is searched alone, and
when the parts point to two plugins or more, each part's first operation is offered,
the first part's favoured, and a call of each asked for. The lead over the whole
request that a client's tool needs does not serve here: the bundled plugins'
descriptions are long, so a part is seldom 0.05 nearer an operation than the whole
request is, and retrieval of the whole request often leaves the second need's
operation out altogether (bench/labs/ASK_LAB.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from plugyard.discovery.documents import Document
from plugyard.discovery.engine import Match as Hit
from plugyard.discovery.fusion import decompose
from plugyard.discovery.query import CanSee
from plugyard.routing.choice import Candidate
from plugyard.routing.retrieve import Search, retrieve

#: Discovery's ranking of documents outside the catalog (``DiscoveryService.rank``).
Rank = Callable[[str, Sequence[Document]], Sequence[Hit]]

#: How much nearer (cosine) a part of a request must be to a tool than the whole
#: request is, for the part to ask for a call of its own: the smallest lead that planned
#: no second function for any of 80 single-function BFCL requests (multiple,
#: live_multiple), while finding 17 of 40 parallel_multiple plans
#: (bench/labs/BFCL_LAB.md, "The functions of a request of several parts").
PART_LEAD = 0.05
#: At most this many parts are ranked (one query embedding each), so a huge message
#: costs bounded time; the longest BFCL request measured has 53.
MAX_PARTS = 64


@dataclass(frozen=True, slots=True)
class Favoured:
    """The tool a ranking puts first for a request; the model's choice of another needs
    a clear lead over it, and so does its choice of none when ``over_none`` (the
    ranking found the tool relevant to the request). ``parts``: the tools the
    request's separate parts point to."""

    name: str
    over_none: bool = True
    parts: tuple[str, ...] = ()


def first(rank: Rank, query: str, tools: Sequence[Mapping[str, Any]]) -> Favoured | None:
    """The tool ``query`` points to among ``tools`` (OpenAI tool definitions), with the
    tools its parts point to; ``None`` when nothing is ranked."""
    documents = _documents(tools)
    hits = rank(query, documents)
    if not hits:
        return None
    return Favoured(hits[0].doc_id, over_none=hits[0].relevant,
                    parts=_parts(rank, query, documents, hits))  # fmt: skip


def _parts(rank: Rank, query: str, documents: Sequence[Document],
           hits: Sequence[Hit]) -> tuple[str, ...]:  # fmt: skip
    whole = {hit.doc_id: hit.cosine for hit in hits}
    found: list[str] = []
    for part in decompose(query)[:MAX_PARTS] if len(documents) > 1 else ():
        ranked = rank(part, documents)
        if ranked and ranked[0].relevant \
                and ranked[0].cosine - whole.get(ranked[0].doc_id, 0.0) >= PART_LEAD:  # fmt: skip
            found.append(ranked[0].doc_id)
    return tuple(dict.fromkeys(found))


def _documents(tools: Sequence[Mapping[str, Any]]) -> list[Document]:
    documents = []
    for tool in tools:
        function = tool.get("function", {})
        name = str(function.get("name", "")) if isinstance(function, Mapping) else ""
        if name:
            words = re.sub(r"[_.\-]+", " ", name).strip()
            documents.append(Document(name, words, str(function.get("description") or "")))
    return documents


def yard_parts(search: Search, query: str, can_see: CanSee) -> tuple[Candidate, ...]:
    """The operations a request of several needs points to ("Convert 5 km to miles and
    tell me the time in Tokyo"): each part searched for alone with the caller's rights,
    its first operation kept when no earlier part's is of the same plugin. One need per
    plugin, so a request split where it is still one need ("My call is at 10:00 in
    Chicago; what time is that in Tokyo?") plans nothing: at least two plugins, or
    nothing."""
    plugins: set[str] = set()
    out: list[Candidate] = []
    for part in decompose(query)[:MAX_PARTS]:
        first = retrieve(search, part, 1, can_see)
        if first and first[0].plugin_id not in plugins:
            plugins.add(first[0].plugin_id)
            out.append(first[0])
    return tuple(out) if len(out) > 1 else ()
