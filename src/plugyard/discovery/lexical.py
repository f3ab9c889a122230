"""Field-wise BM25 over a mutable set of documents.

One BM25 index per field, scores summed unweighted: on the DEV split that
beat BM25 over one concatenated text (recall@5 0.645 vs 0.604) and no field
weighting helped further, so there is nothing to tune. English stemming
(PyStemmer) is worth 5 points of recall@5 over none.

The scoring is bm25s's "lucene" variant, and tests check it against bm25s,
but the index is our own: bm25s cannot update in place and rebuilding it
for 10k plugins took ~0.4 s, four times the budget for re-indexing one
changed plugin. Here postings are per term, so a change costs the changed
document's terms, and idf/avgdl are read at query time so scores stay exact.
"""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np
from numpy.typing import NDArray

from plugyard.discovery.documents import FIELDS, Document

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD = re.compile(r"[^\W_]{2,}")
# English function words only: content words, even common ones such as
# "find" or "get", are left to idf.
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how if in
    into is it its itself just me more most my myself no nor not now of off on once only
    or other our ours ourselves out over own same she should so some such than that the
    their theirs them themselves then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would
    you your yours yourself yourselves i
    """.split()  # noqa: SIM905
)


_VIEW_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


def content_word_count(text: str) -> int:
    """How many words of `text` are not English function words: the query length the
    fusion weights depend on (fusion.Policy)."""
    return sum(w.lower() not in STOPWORDS for w in _VIEW_WORD.findall(text))


def content_words(text: str) -> str:
    """The text without English function words, for a second query embedding.

    Chatty requests ("Could you please tell me if there is ...") put most of
    their tokens into words that say nothing about the tool; embedding this
    view beside the query and adding the two vectors leans the query towards
    its content (DISCOVERY_LAB.md). Returns "" when nothing is left or
    nothing was removed, since then the view adds no information.
    """
    words = _VIEW_WORD.findall(text)
    kept = [w for w in words if w.lower() not in STOPWORDS]
    if not kept or len(kept) == len(words):
        return ""
    return " ".join(kept)


class Tokeniser:
    """Lower-case words, identifiers split (getWeather, city_name), stemmed, "%" read
    as "percent"."""

    def __init__(self, stem: bool = True) -> None:
        self._stemmer = None
        if stem:
            import Stemmer  # type: ignore[import-not-found,unused-ignore]

            self._stemmer = Stemmer.Stemmer("english")
        self._memo: dict[str, str] = {}

    def __call__(self, text: str) -> list[str]:
        # "20%" says "percent" with a sign that the word pattern drops.
        text = _CAMEL.sub(" ", text).replace("%", " percent ")
        words = [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]
        if self._stemmer is None:
            return words
        out = []
        for w in words:
            stem = self._memo.get(w)
            if stem is None:
                stem = self._stemmer.stemWord(w)
                if len(self._memo) < 500_000:
                    self._memo[w] = stem
            out.append(stem)
        return out


class _FieldIndex:
    """Postings of one field; rows are dense 0..n-1 and shared by all fields."""

    def __init__(self) -> None:
        self.postings: dict[str, dict[int, int]] = {}
        self.rows: list[Counter[str]] = []
        self.lengths: list[int] = []
        self.total = 0
        self._arrays: dict[str, tuple[NDArray[np.int64], NDArray[np.float32]]] = {}
        self._len_array: NDArray[np.float32] | None = None

    def _unpost(self, row: int) -> None:
        for term in self.rows[row]:
            plist = self.postings[term]
            del plist[row]
            if not plist:
                del self.postings[term]
            self._arrays.pop(term, None)
        self.total -= self.lengths[row]

    def _post(self, row: int, counts: Counter[str], length: int) -> None:
        for term, tf in counts.items():
            self.postings.setdefault(term, {})[row] = tf
            self._arrays.pop(term, None)
        self.rows[row] = counts
        self.lengths[row] = length
        self.total += length
        self._len_array = None

    def set_row(self, row: int, tokens: list[str]) -> None:
        if row == len(self.rows):
            self.rows.append(Counter())
            self.lengths.append(0)
        else:
            self._unpost(row)
        self._post(row, Counter(tokens), len(tokens))

    def swap_delete(self, row: int) -> None:
        """Remove `row` by moving the last row into it."""
        last = len(self.rows) - 1
        self._unpost(row)
        if row != last:
            counts, length = self.rows[last], self.lengths[last]
            self._unpost(last)
            self._post(row, counts, length)
        self.rows.pop()
        self.lengths.pop()
        self._len_array = None

    def add_scores(self, terms: list[str], k1: float, b: float, out: NDArray[np.float32]) -> None:
        n = len(self.rows)
        if n == 0 or self.total == 0:
            return
        if self._len_array is None:
            self._len_array = np.asarray(self.lengths, dtype=np.float32)
        norm = k1 * (1.0 - b + b * self._len_array / (self.total / n))
        for term in terms:
            plist = self.postings.get(term)
            if not plist:
                continue
            cached = self._arrays.get(term)
            if cached is None:
                cached = (
                    np.fromiter(plist.keys(), dtype=np.int64, count=len(plist)),
                    np.fromiter(plist.values(), dtype=np.float32, count=len(plist)),
                )
                self._arrays[term] = cached
            rows, tf = cached
            df = len(plist)
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            out[rows] += np.float32(idf) * tf / (tf + norm[rows])


class FieldedBM25:
    """BM25 per field, summed, and BM25 over the whole text as one field (a second
    channel, `both_scores`); documents are addressed by row number."""

    def __init__(self, k1: float = 1.5, b: float = 0.75, stem: bool = True) -> None:
        self.k1 = k1
        self.b = b
        self.tokenise = Tokeniser(stem)
        self._fields = {f: _FieldIndex() for f in FIELDS}
        self._whole = _FieldIndex()

    def __len__(self) -> int:
        return len(self._fields[FIELDS[0]].rows)

    def set_row(self, row: int, doc: Document) -> None:
        """Index `doc` at `row`; `row == len(self)` appends."""
        if not 0 <= row <= len(self):
            raise IndexError(row)
        # An absent field borrows the next shorter one. Scores are summed
        # over fields, so without this a plugin with no long description
        # is outscored by any that has one (recall@1 0.576 -> 0.601 on DEV).
        tokens = {text: self.tokenise(text) for text in doc.fields().values()}
        for f, text in doc.filled_fields().items():
            self._fields[f].set_row(row, tokens[text])
        # The whole text as written (fields, not borrowed copies) under one length norm.
        self._whole.set_row(row, [t for text in doc.fields().values() for t in tokens[text]])

    def swap_delete(self, row: int) -> None:
        for index in self._fields.values():
            index.swap_delete(row)
        self._whole.swap_delete(row)

    def scores(self, query: str) -> NDArray[np.float32]:
        """BM25 score of every row for `query`, summed over fields."""
        out = np.zeros(len(self), dtype=np.float32)
        terms = self.tokenise(query)
        for index in self._fields.values():
            index.add_scores(terms, self.k1, self.b, out)
        return out

    def both_scores(self, query: str) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """(per-field BM25 summed, BM25 of the whole text) of every row for `query`."""
        fielded = np.zeros(len(self), dtype=np.float32)
        whole = np.zeros(len(self), dtype=np.float32)
        terms = self.tokenise(query)
        for index in self._fields.values():
            index.add_scores(terms, self.k1, self.b, fielded)
        self._whole.add_scores(terms, self.k1, self.b, whole)
        return fielded, whole

    def matched_terms(self, row: int, query: str) -> list[str]:
        """Query terms (stemmed) that occur in the document: the 'why'."""
        seen: list[str] = []
        for term in self.tokenise(query):
            if term not in seen and any(term in ix.rows[row] for ix in self._fields.values()):
                seen.append(term)
        return seen
