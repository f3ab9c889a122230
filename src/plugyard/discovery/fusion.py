"""Combining the retrieval channels, and splitting multi-intent queries.

Reciprocal-rank fusion throws away how far apart scores are and lost on both
development sets (DISCOVERY_LAB.md). Each channel is put on a common scale (z-score
over the catalog, per query) and the channels are combined convexly.

Which channels, at which weights, was chosen on two development sets at once, tuned
on one half of each one's queries and checked on the other ("Round 4"): MetaTool, where
the dense channel leads, and Seal-Tools, where BM25 leads and multi-tool requests are
long. One blend for every query had to trade one set against the other; the query's
length separates them. A short request (one intent, its words paraphrased) is best
served mostly by the dense channel; a long one (several requests, naming what they
need) by keywords, which add up per intent where one dense vector blurs them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from plugyard.llm.stated import USER_JSON_TRIES, json_spans

Scores = NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class Blend:
    """Weights of the z-scored channels: the document vector (mean of the per-field
    cosines), per-field BM25 summed, and BM25 over the whole text as one field."""

    dense: float
    keywords: float
    keywords_whole: float = 0.0

    def fuse(self, dense_z: Scores, keywords_z: Scores, whole_z: Scores) -> Scores:
        out = self.dense * dense_z + self.keywords * keywords_z
        if self.keywords_whole:
            out = out + self.keywords_whole * whole_z
        return out.astype(np.float32)


@dataclass(frozen=True, slots=True)
class Policy:
    """Which blend a query gets: `long` above `long_query` content words."""

    short: Blend
    long: Blend
    long_query: int

    def blend_for(self, content_words: int) -> Blend:
        return self.long if content_words > self.long_query else self.short

    def remembers(self, content_words: int) -> bool:
        """Whether the memory channel speaks for a query this long. A long message is
        most often several requests at once, and it resembles other long messages more
        than any one tool's requests: on Seal-Tools, lifting the tools of the nearest
        remembered combinations pushed the right ones out of the top 5."""
        return content_words <= self.long_query


SHORT = Blend(dense=0.8, keywords=0.1, keywords_whole=0.1)
LONG = Blend(dense=0.4, keywords=0.3, keywords_whole=0.3)
LONG_QUERY = 25
DEFAULT = Policy(SHORT, LONG, LONG_QUERY)

#: Weight of the memory channel, added to the cold fused score above. Per tool: the
#: mean of the top-3 cosines between the query and the requests that tool answered,
#: z-scored over the tools that have any, negative z clipped to 0, and 0 for tools
#: with none. Clipping lets memory lift a tool but never push one down below the tools
#: nobody asked about (on Seal-Tools, where few tools have memory, unclipped z cost
#: 0.08 of multi-tool COMP@5). The lab's tuning halves peak at 0.4 with MetaTool still
#: rising towards 0.6 (DISCOVERY_LAB.md); the product's end-to-end figures
#: (RESULTS.md, "Discovery that learns") were measured at 0.5, the value kept.
MEMORY_WEIGHT = 0.5


def zscore(scores: NDArray[np.floating], mean: float, std: float) -> Scores:
    """Standardise; a channel with no spread (e.g. no query word matched)
    carries no ranking information and becomes all zeros."""
    if std <= 1e-9:
        return np.zeros(scores.shape, dtype=np.float32)
    return ((scores - mean) / std).astype(np.float32)


def minmax(scores: NDArray[np.floating]) -> Scores:
    lo, hi = float(scores.min(initial=0.0)), float(scores.max(initial=0.0))
    if hi - lo <= 1e-9:
        return np.zeros(scores.shape, dtype=np.float32)
    return ((scores - lo) / (hi - lo)).astype(np.float32)


def rrf(rankings: Sequence[NDArray[np.int64]], n: int, k: int = 60) -> Scores:
    """Reciprocal-rank fusion over full rankings (kept as the baseline)."""
    out = np.zeros(n, dtype=np.float32)
    for order in rankings:
        out[order] += 1.0 / (k + 1 + np.arange(len(order), dtype=np.float32))
    return out


# Joints that separate requests in one sentence, plus sentence ends.
_JOINT = re.compile(
    r"\s*(?:[;?!.]\s+|,?\s+and\s+(?:also\s+)?|,?\s+as well as\s+|,?\s+also\s+"
    r"|,?\s+plus\s+|,?\s+then\s+)",
    re.IGNORECASE,
)
_FILLER = frozenset(
    """
    a about an any are be can could do does for how i in is it me my of on please some
    that the this to what with would you your
    """.split()  # noqa: SIM905
)


#: A word or a number: "What is 2 to the power of 10" is a request of its own.
_CONTENT = re.compile(r"[a-z]+|\d+(?:\.\d+)?")
#: A quoted text: the request's data, whose "and" or full stop joins nothing.
_QUOTED = re.compile(r'"[^"]*"|“[^”]*”')
#: An address (a link, an e-mail): one value, whose letters are no words of a request
#: ("see a.com and http://b.org" does not end in a request "http b org").
_ADDRESS = re.compile(r"\b(?:https?://|www\.)\S+|\S+@\S+\.\w+", re.IGNORECASE)


def without_data(query: str) -> str:
    """``query`` with what it works on named by its kind rather than its content: a JSON
    object written as the word "JSON", each text it quotes as the word "text". The
    content says little of what the request asks for (the "3 March 2024" of 'What dates
    are mentioned in "The launch moved from 3 March 2024"' is no time-zone request), the
    kind a lot
    ('Take the first element of {"xs": [9, 8, 7]} using xs[0]' asks a JSON query). A
    request quoted whole, or one that is nothing but its data, is kept as it is."""
    # The objects first: their keys and strings are quoted too.
    pieces, at = [], 0
    for start, end, value in json_spans(query, tries=USER_JSON_TRIES):
        if isinstance(value, dict) and value:
            pieces += [query[at:start], "JSON"]
            at = end
    named = "".join([*pieces, query[at:]])
    whole = (len(named) - len(named.lstrip()), len(named.rstrip()))

    def kind(text: str) -> Callable[[re.Match[str]], str]:
        return lambda m: m.group() if m.span() == whole else m.group()[0] + text + m.group()[-1]

    asked = _QUOTED.sub(kind(""), named).replace("JSON", "")
    return _QUOTED.sub(kind("text"), named) if _CONTENT.search(asked.lower()) else query


def decompose(query: str) -> list[str]:
    """Sub-requests of a multi-intent query, or [] when it is one request.

    A part must keep two content words (a number counts, an address counts once), so
    "salt and pepper" is not split, nor "see a.com and http://b.org", and one outside its
    quotes, so a quoted text after a question is no request of its own; a joint inside
    quoted text splits nothing: in 'Find the links in "see a.com and b.org"' the quote
    is what the request works on (a request quoted whole is split as if it were not).
    """
    # A request written whole between quotes is the request, not data inside it.
    whole = (len(query) - len(query.lstrip()), len(query.rstrip()))
    quoted = [m.span() for m in _QUOTED.finditer(query) if m.span() != whole]
    cuts = [
        m.span() for m in _JOINT.finditer(query) if not any(a < m.start() < b for a, b in quoted)
    ]
    edges = [0, *(edge for cut in cuts for edge in cut), len(query)]
    pieces = (query[edges[i] : edges[i + 1]] for i in range(0, len(edges), 2))
    parts = [p.strip() for p in pieces if p and p.strip()]
    parts = [p for p in parts if _asks(p)]
    return parts if len(parts) >= 2 else []


def _asks(part: str) -> bool:
    """A part asks something: two content words, one of them outside its quotes (a part
    that is only a quoted text is what another part works on: the '"slides: …,
    recording at https://…"' after "any links in this message?" asked for no recording)."""

    def content(text: str) -> int:
        words = _CONTENT.findall(_ADDRESS.sub(" value ", text).lower())
        return sum(w not in _FILLER for w in words)

    return content(part) >= 2 and content(_QUOTED.sub(" ", part)) >= 1


def mean(views: Sequence[Scores]) -> Scores:
    """Per document, the mean of the scores of several views of one request."""
    out: Scores = np.mean(np.stack(views), axis=0).astype(np.float32)
    return out


def combine_parts(full: Scores, parts: Sequence[Scores]) -> Scores:
    """Half the whole query, half its best-matching part, per document: each
    intent can lift its own tool without the whole query losing its say."""
    if not parts:
        return full
    best: Scores = np.max(np.stack(parts), axis=0)
    return (0.5 * full + 0.5 * best).astype(np.float32)
