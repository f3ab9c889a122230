"""Discovery lab: which retrieval channels to fuse, at which weights, measured on two
development sets at once and split by query (tune on one half, report the other).

    PYTHONPATH=src python bench/labs/discovery_lab.py \\
        --data ../shared/bench/metatool --data ../shared/bench/sealtools

Channels, each a (queries x tools) score matrix, z-scored per query over the catalog:

- ``dense_fields``: the engine's document vector (mean of the per-field vectors, absent
  fields borrowing) against the query vector plus its content-word view;
- ``dense_one``: one vector of the whole text (name, description, details joined);
- ``bm25_fields``: the engine's per-field BM25, summed;
- ``bm25_one``: BM25 over the whole text as one field;
- ``memory``: per tool, the mean of the top-3 cosines between the query and requests that
  tool answered before (taken from the tuning half: 3 per tool, or all of them), z-scored
  over the tools that have any, 0 for the others.

Each query set is split in two halves by a hash of the query text. Weights are searched
on a grid on the tuning half of both sets at once and the winner is printed with its
figures on the report half. Vectors are cached under ``--cache`` (a temporary directory by
default), so a second run costs only the BM25 and fusion work.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from plugyard.discovery import fusion
from plugyard.discovery.documents import Document, from_mapping
from plugyard.discovery.lexical import FieldedBM25, content_word_count, content_words
from plugyard.discovery.minilm import MiniLMEmbedder

Matrix = NDArray[np.float32]
CHANNELS = ("dense_fields", "dense_one", "bm25_fields", "bm25_one")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def half_of(text: str) -> int:
    """0 = tuning half, 1 = report half; stable across runs and machines."""
    return hashlib.sha256(("plugyard-lab-split:" + text).encode()).digest()[0] & 1


def whole_text(doc: Document) -> str:
    f = doc.fields()
    return ". ".join(t for t in (f["name"], f["description"], f["details"]) if t)


class CachedEmbedder:
    """Embeds a list of texts once; later runs read the vectors from ``cache``."""

    def __init__(self, cache: Path) -> None:
        self.cache = cache
        self._model: MiniLMEmbedder | None = None

    @property
    def model(self) -> MiniLMEmbedder:
        if self._model is None:
            self._model = MiniLMEmbedder()
        return self._model

    def __call__(self, texts: Sequence[str]) -> Matrix:
        key = hashlib.sha256(("\x00".join(texts) + self.model_id()).encode()).hexdigest()[:24]
        path = self.cache / f"{key}.npy"
        if path.is_file():
            return np.load(path)
        start = time.perf_counter()
        vectors = self.model.embed(list(texts))
        print(f"  embedded {len(texts)} texts in {time.perf_counter() - start:.1f} s", flush=True)
        self.cache.mkdir(parents=True, exist_ok=True)
        np.save(path, vectors)
        return vectors

    def model_id(self) -> str:
        return "minilm-int8"


@dataclass
class QuerySet:
    name: str
    relevant: list[frozenset[int]]
    half: NDArray[np.int64]
    multi: NDArray[np.bool_]
    words: NDArray[np.int64]  # content words of each query
    channels: dict[str, Matrix] = field(default_factory=dict)
    qvecs: Matrix | None = None
    texts: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    docs: Matrix | None = None  # the engine's document vectors
    qview: Matrix | None = None  # queries as the engine and memory embed them


def z_rows(scores: Matrix) -> Matrix:
    mean = scores.mean(axis=1, keepdims=True)
    std = scores.std(axis=1, keepdims=True)
    out = (scores - mean) / np.maximum(std, 1e-9)
    out[(std <= 1e-9)[:, 0]] = 0.0
    return out.astype(np.float32)


def load(data: Path, embed: CachedEmbedder) -> QuerySet:
    rows = read_jsonl(data / "plugins.jsonl")
    docs = [from_mapping(str(r["id"]), r) for r in rows]
    index = {d.doc_id: i for i, d in enumerate(docs)}
    single = read_jsonl(data / "queries.jsonl")
    multi = read_jsonl(data / "queries_multi.jsonl")
    items = single + multi
    texts = [q["query"] for q in items]
    print(f"{data.name}: {len(docs)} tools, {len(single)} + {len(multi)} queries", flush=True)

    # Document vectors exactly as the engine builds them (borrowing, duplicates weighted).
    field_texts = sorted({t for d in docs for t in d.filled_fields().values() if t})
    fvec = dict(zip(field_texts, embed(field_texts), strict=True))
    doc_fields = np.zeros((len(docs), 384), np.float32)
    for i, d in enumerate(docs):
        parts = [fvec[t] for t in d.filled_fields().values() if t]
        doc_fields[i] = np.mean(parts, axis=0)
    doc_one = embed([whole_text(d) for d in docs])

    qv = embed(texts)
    views = [content_words(t) for t in texts]
    view_idx = [i for i, v in enumerate(views) if v]
    vv = embed([views[i] for i in view_idx])
    q_with_view = qv.copy()
    q_with_view[view_idx] += vv
    q_with_view /= np.linalg.norm(q_with_view, axis=1, keepdims=True)

    bm_fields, bm_one = FieldedBM25(), FieldedBM25()
    for i, d in enumerate(docs):
        bm_fields.set_row(i, d)
        bm_one.set_row(i, Document(d.doc_id, name=whole_text(d)))
    qs = QuerySet(
        words=np.array([content_word_count(t) for t in texts]),
        name=data.name,
        relevant=[frozenset(index[r] for r in q["relevant"]) for q in items],
        half=np.array([half_of(t) for t in texts]),
        multi=np.array([i >= len(single) for i in range(len(items))]),
        qvecs=qv,
        texts=texts,
        tools=[d.doc_id for d in docs],
        docs=doc_fields,
        qview=q_with_view,
    )
    qs.channels["dense_fields"] = z_rows(q_with_view @ doc_fields.T)
    qs.channels["dense_one"] = z_rows(q_with_view @ doc_one.T)
    qs.channels["bm25_fields"] = z_rows(np.stack([bm_fields.scores(t) for t in texts]))
    qs.channels["bm25_one"] = z_rows(np.stack([bm_one.scores(t) for t in texts]))
    # Plain baselines: raw dense one-text cosine and BM25 one-text, without the view.
    qs.channels["rrf"] = rrf_matrix(qv @ doc_one.T, qs.channels["bm25_one"])
    return qs


def rrf_matrix(a: Matrix, b: Matrix, k: int = 60) -> Matrix:
    out = np.zeros(a.shape, np.float32)
    for m in (a, b):
        order = np.argsort(-m, axis=1, kind="stable")
        ranks = np.empty_like(order)
        np.put_along_axis(ranks, order, np.arange(m.shape[1])[None, :], axis=1)
        out += 1.0 / (k + 1 + ranks)
    return out


def memory_channel(qs: QuerySet, per_tool: int | None, clip: bool = False) -> Matrix:
    """Score every query against requests each tool answered in the tuning half (a
    multi-tool request is remembered by each of its tools; a query never remembers
    itself)."""
    assert qs.qvecs is not None
    n_tools = qs.channels["dense_fields"].shape[1]
    logged: dict[int, list[int]] = {}
    for i, rel in enumerate(qs.relevant):
        if qs.half[i] == 0:
            for tool in sorted(rel):
                logged.setdefault(tool, []).append(i)
    if per_tool is not None:
        logged = {t: ids[:per_tool] for t, ids in logged.items()}
    out = np.zeros((len(qs.relevant), n_tools), np.float32)
    has = np.zeros(n_tools, bool)
    for tool, ids in logged.items():
        sims = qs.qvecs @ qs.qvecs[ids].T
        sims[ids, np.arange(len(ids))] = -np.inf  # a query does not remember itself
        top = -np.sort(-sims, axis=1)[:, :3]
        finite = np.where(np.isfinite(top), top, np.nan)
        counts = np.isfinite(top).sum(axis=1)
        out[:, tool] = np.where(counts > 0, np.nansum(finite, axis=1) / np.maximum(counts, 1), 0)
        has[tool] = True
    z = np.zeros_like(out)
    if has.any():
        z[:, has] = z_rows(out[:, has])
    return np.maximum(z, 0.0) if clip else z


def hits(scores: Matrix, qs: QuerySet) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per query: share of its tools in the top 5, and whether all of them are."""
    top = np.argpartition(-scores, 5, axis=1)[:, :5]
    r5 = np.array(
        [len(r & set(t.tolist())) / len(r) for r, t in zip(qs.relevant, top, strict=True)]
    )
    comp = np.array([float(r <= set(t.tolist())) for r, t in zip(qs.relevant, top, strict=True)])
    return r5, comp


def figures_of(
    r5: NDArray[np.float64], comp: NDArray[np.float64], qs: QuerySet, half: int
) -> dict[str, float]:
    rows = qs.half == half
    return {
        "r5": float(r5[rows & ~qs.multi].mean()),
        "r5m": float(r5[rows & qs.multi].mean()),
        "comp5": float(comp[rows & qs.multi].mean()),
    }


def gains(r5: NDArray[np.float64], comp: NDArray[np.float64], qs: QuerySet) -> NDArray[np.float64]:
    """Each tuning query's share of the objective (mean over sets of single-tool R@5 and
    multi-tool COMP@5): summing it over any subset of queries is that subset's part."""
    tune = qs.half == 0
    single, multi = tune & ~qs.multi, tune & qs.multi
    out = np.zeros(len(r5))
    out[single] = r5[single] / single.sum()
    out[multi] = comp[multi] / multi.sum()
    return out


def blend(qs: QuerySet, weights: dict[str, float]) -> Matrix:
    out = np.zeros(qs.channels["dense_fields"].shape, np.float32)
    for name, w in weights.items():
        if w:
            out += w * qs.channels[name]
    return out


def shipped(qs: QuerySet) -> Matrix:
    """The product's cold fusion (fusion.DEFAULT) on the lab's channels."""
    policy = fusion.DEFAULT
    short, long = (
        {"dense_fields": b.dense, "bm25_fields": b.keywords, "bm25_one": b.keywords_whole}
        for b in (policy.short, policy.long)
    )
    pick = (qs.words > policy.long_query)[:, None]
    return np.where(pick, blend(qs, long), blend(qs, short))


def objective(figures: dict[str, dict[str, float]]) -> float:
    """Single-tool R@5 and multi-tool COMP@5 of every set, equally weighted."""
    return statistics.mean(v for f in figures.values() for v in (f["r5"], f["comp5"]))


def evaluate(
    sets: list[QuerySet], make: Callable[[QuerySet], Matrix], half: int
) -> dict[str, dict[str, float]]:
    return {qs.name: figures_of(*hits(make(qs), qs), qs, half) for qs in sets}


def single_r5(
    qs: QuerySet,
    scores: Matrix | None,
    cut: int,
    pair: tuple[NDArray[np.float64], NDArray[np.float64]] | None,
) -> float:
    """Tuning-half single-tool R@5 of one blend (``scores``) or of a short/long pair."""
    if pair is None:
        assert scores is not None
        r5 = hits(scores, qs)[0]
    else:
        r5 = np.where(qs.words > cut, pair[1], pair[0])
    rows = (qs.half == 0) & ~qs.multi
    return float(r5[rows].mean())


def grid(step: float, channels: Sequence[str]) -> list[dict[str, float]]:
    n = round(1 / step)
    out = []
    for parts in itertools.product(range(n + 1), repeat=len(channels) - 1):
        if sum(parts) <= n:
            ws = [p / n for p in parts] + [(n - sum(parts)) / n]
            out.append(dict(zip(channels, ws, strict=True)))
    return out


def row(label: str, tune: dict[str, dict[str, float]], report: dict[str, dict[str, float]]) -> str:
    cells = [label]
    for figures in (tune, report):
        for f in figures.values():
            cells += [f"{f['r5']:.3f}", f"{f['comp5']:.3f}"]
    return "| " + " | ".join(cells) + " |"


def label_of(weights: dict[str, float]) -> str:
    short = {"dense_fields": "Df", "dense_one": "D1", "bm25_fields": "Bf", "bm25_one": "B1"}
    short |= {"memory": "M"}
    return " + ".join(f"{w:.2f} {short[k]}" for k, w in weights.items() if w)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", action="append", required=True)
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "plugyard-lab"))
    parser.add_argument("--step", type=float, default=0.1)
    parser.add_argument(
        "--without", action="append", default=[], choices=CHANNELS, help="leave a channel out"
    )
    parser.add_argument("--memory", action="store_true", help="the memory trial only")
    parser.add_argument("--rule", default="", help="with --memory: rules whose label has this")
    args = parser.parse_args(argv)
    embed = CachedEmbedder(Path(args.cache))
    sets = [load(Path(d), embed) for d in args.data]
    if args.memory:
        memory_main(sets, embed, args.rule)
        return
    names = [qs.name for qs in sets]
    head = ["channels, weights"]
    head += [f"{h} {n} {m}" for h in ("tune", "report") for n in names for m in ("R@5", "COMP@5")]
    print("\n| " + " | ".join(head) + " |\n|" + "---|" * len(head))

    def show(label: str, make: Callable[[QuerySet], Matrix]) -> None:
        made = {qs.name: hits(make(qs), qs) for qs in sets}
        tune, report = (
            {qs.name: figures_of(*made[qs.name], qs, half) for qs in sets} for half in (0, 1)
        )
        print(row(label, tune, report), flush=True)

    show("plain RRF (BM25 one text, MiniLM one text)", lambda qs: qs.channels["rrf"])
    for name in CHANNELS:
        show(f"{name} alone", lambda qs, name=name: qs.channels[name])
    engine_now = {"dense_fields": 0.8, "bm25_fields": 0.2}
    show(f"engine before ({label_of(engine_now)})", lambda qs: blend(qs, engine_now))
    issue = {"dense_fields": 0.7, "dense_one": 0.1, "bm25_one": 0.2}
    show(f"issue's blend ({label_of(issue)})", lambda qs: blend(qs, issue))

    table: list[tuple[dict[str, float], dict[str, NDArray[np.float64]]]] = []
    for weights in grid(args.step, [c for c in CHANNELS if c not in args.without]):
        per_set = {}
        for qs in sets:
            r5, comp = hits(blend(qs, weights), qs)
            per_set[qs.name] = np.stack([r5, comp])
        table.append((weights, per_set))

    def gain_of(i: int, qs: QuerySet) -> NDArray[np.float64]:
        r5, comp = table[i][1][qs.name]
        return gains(r5, comp, qs) / len(sets)

    gain = {qs.name: np.stack([gain_of(i, qs) for i in range(len(table))]) for qs in sets}
    total = sum(g.sum(axis=1) for g in gain.values())
    order = np.argsort(-total)
    print(
        f"\nbest of {len(table)} weightings on the tuning half (objective = mean of R@5, COMP@5):"
    )
    for i in order[:6]:
        show(label_of(table[i][0]), lambda qs, w=table[i][0]: blend(qs, w))

    print("\nby query length: one blend up to T content words, another above (each tuned):")
    schemes: list[tuple[float, str, Callable[[QuerySet], Matrix]]] = []
    for cut in (12, 16, 20, 25, 30):
        part = {
            side: sum(
                (
                    g[:, (qs.words > cut) == side].sum(axis=1)
                    for qs in sets
                    for g in [gain[qs.name]]
                ),
                np.zeros(len(table)),
            )
            for side in (False, True)
        }
        j_long = int(np.argmax(part[True]))
        long = table[j_long][0]
        # The short side may not cost single-tool R@5 on any set against the engine
        # before (most queries are short, and single-tool recall is what a user meets
        # first): among those that keep it, the best objective.
        floor_r5 = {qs.name: single_r5(qs, blend(qs, engine_now), cut, None) for qs in sets}
        allowed = [
            i
            for i in range(len(table))
            if all(
                single_r5(qs, None, cut, (table[i][1][qs.name][0], table[j_long][1][qs.name][0]))
                >= floor_r5[qs.name] - 1e-9
                for qs in sets
            )
        ]
        if not allowed:
            print(f"| ≤{cut} words: no short blend keeps single-tool R@5 | " + "- | " * 8)
            continue
        j_short = max(allowed, key=lambda i: part[False][i])
        short = table[j_short][0]
        score = float(part[False][j_short] + part[True][j_long])

        def make(
            qs: QuerySet, s: dict[str, float] = short, lg: dict[str, float] = long, cut: int = cut
        ) -> Matrix:
            pick = (qs.words > cut)[:, None]
            return np.where(pick, blend(qs, lg), blend(qs, s))

        label = f"≤{cut} words: {label_of(short)}; above: {label_of(long)}"
        show(label, make)
        schemes.append((score, label, make))
    schemes.sort(key=lambda s: -s[0])
    _, best_label, best_make = schemes[0]
    print(f"\nchosen on the tuning half: {best_label}")

    show("shipped (fusion.DEFAULT)", shipped)

    print("\nmemory channel added to the chosen cold scheme (remembered = tuning half):")
    chosen: dict[float, float] = {}
    for per_tool, clip, tag in (
        (3, False, "3 per tool"),
        (3, True, "3 per tool, z clipped at 0"),
        (None, False, "full log"),
        (None, True, "full log, z clipped at 0"),
    ):
        memories = {qs.name: memory_channel(qs, per_tool, clip) for qs in sets}
        for mw in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6):

            def make(qs: QuerySet, mw: float = mw, mem: dict[str, Matrix] = memories) -> Matrix:
                return best_make(qs) + mw * mem[qs.name]

            show(f"{tag}, memory weight {mw}", make)
            if clip:
                chosen[mw] = chosen.get(mw, 0.0) + objective(evaluate(sets, make, 0))
    weight = max(chosen, key=lambda w: chosen[w])
    print(f"\nmemory weight (z clipped at 0) best on the tuning half, both logs: {weight}")


# ---------------------------------------------------------------------------------------
# The product's memory channel on the benchmark's split (``--memory``): the half of each
# set that bench/discovery_split.py puts in FEED teaches, the other half is evaluated, and
# remembered requests go through plugyard.discovery.memory.MemoryChannel itself.


@dataclass(frozen=True)
class MemoryRule:
    label: str
    bound: bool = True  # requests over fusion.LONG_QUERY content words are not remembered
    align: bool = False  # a request is remembered as its part (or whole) nearest the tool
    parts: bool = False  # a query's parts ask memory too; a tool keeps its best lift
    residual: bool = True  # the channel is given the query's cosine with each tool
    quiet_long: bool | None = None  # queries over the bound get no memory (default: bound)


def request_vectors(texts: Sequence[str], embed: CachedEmbedder) -> Matrix:
    """As learning.Learning.embed: the text plus its content-word view, normalised."""
    if not texts:
        return np.zeros((0, 384), np.float32)
    vectors = embed(list(texts)).copy()
    views = [content_words(t) for t in texts]
    which = [i for i, v in enumerate(views) if v]
    if which:
        vectors[which] += embed([views[i] for i in which])
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def fed(qs: QuerySet) -> NDArray[np.bool_]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from discovery_split import taught

    return np.array([taught(t, 0.5) for t in qs.texts])


def remembered(qs: QuerySet, per_tool: int | None) -> list[tuple[str, int]]:
    """(request, tool) pairs of FEED in file order, first ``per_tool`` per tool."""
    feed = fed(qs)
    order = [i for i in range(len(qs.texts)) if feed[i] and not qs.multi[i]]
    order += [i for i in range(len(qs.texts)) if feed[i] and qs.multi[i]]
    out: list[tuple[str, int]] = []
    count: dict[int, list[str]] = {}
    for i in order:
        for tool in sorted(qs.relevant[i]):
            mine = count.setdefault(tool, [])
            if per_tool is None or (len(mine) < per_tool and qs.texts[i] not in mine):
                mine.append(qs.texts[i])
                out.append((qs.texts[i], tool))
    return out


def memory_lifts(
    qs: QuerySet, embed: CachedEmbedder, rule: MemoryRule, per_tool: int | None
) -> Matrix:
    from plugyard.discovery.memory import MemoryChannel

    assert qs.docs is not None and qs.qview is not None
    pairs = remembered(qs, per_tool)
    if rule.bound:
        pairs = [(t, tool) for t, tool in pairs if content_word_count(t) <= fusion.LONG_QUERY]
    texts = [t for t, _ in pairs]
    vectors = request_vectors(texts, embed)
    if rule.align:
        split = {j: fusion.decompose(t) for j, (t, _) in enumerate(pairs)}
        flat_parts = sorted({p for ps in split.values() for p in ps})
        part_v = dict(zip(flat_parts, request_vectors(flat_parts, embed), strict=True))
        for j, (_, tool) in enumerate(pairs):
            if split[j]:
                pv = np.vstack([vectors[j][None, :], *[part_v[p][None, :] for p in split[j]]])
                vectors[j] = pv[int(np.argmax(pv @ qs.docs[tool]))]
    channel = MemoryChannel(384)
    channel.add_many(list(range(len(pairs))), [str(t) for _, t in pairs], vectors)
    out = np.zeros((len(qs.texts), len(qs.tools)), np.float32)
    feed = fed(qs)
    all_parts = {
        i: fusion.decompose(qs.texts[i]) for i in range(len(qs.texts)) if rule.parts and not feed[i]
    }
    flat = [p for ps in all_parts.values() for p in ps]
    flat_v = dict(zip(flat, request_vectors(flat, embed), strict=True)) if flat else {}
    for i in range(len(qs.texts)):
        if feed[i]:
            continue
        queries = [qs.qview[i]]
        if rule.parts:
            queries += [flat_v[p] for p in all_parts[i]]
        elif (rule.bound if rule.quiet_long is None else rule.quiet_long) and (
            qs.words[i] > fusion.LONG_QUERY
        ):
            continue
        dense = qs.qview[i] @ qs.docs.T

        def cosine(tools: Sequence[str], dense: Matrix = dense) -> Matrix:
            return dense[[int(t) for t in tools]]

        for qv in queries:
            for tool, r in channel.recall(qv, cosine if rule.residual else None).items():
                out[i, int(tool)] = max(out[i, int(tool)], r.lift)
    return out


def memory_main(sets: list[QuerySet], embed: CachedEmbedder, only: str = "") -> None:
    rules = [
        MemoryRule("raw memory z (before)", residual=False),
        MemoryRule("residual over the tool's own cosine (product)"),
        MemoryRule("residual, no length bound", bound=False),
        MemoryRule("residual, query parts also ask", parts=True),
        MemoryRule("residual, compound requests aligned to a part", bound=False, align=True),
        MemoryRule(
            "residual, aligned, long queries quiet", bound=False, align=True, quiet_long=True
        ),
        MemoryRule("residual, no bound, long queries quiet", bound=False, quiet_long=True),
    ]
    head = "| memory | per tool | set | R@1 | R@5 | COMP@5 multi | R@5 multi |"
    print("\n" + head + "\n" + "|---" * 7 + "|")

    for qs in sets:
        held = ~fed(qs)
        cold = shipped(qs)

        def report(
            label: str, per: str, scores: Matrix, qs: QuerySet = qs, held: Matrix = held
        ) -> None:
            top1 = np.argmax(scores, axis=1)
            r1 = np.array([float(t in r) for t, r in zip(top1, qs.relevant, strict=True)])
            r5, comp = hits(scores, qs)
            s, m = held & ~qs.multi, held & qs.multi
            print(
                f"| {label} | {per} | {qs.name} | {r1[s].mean():.3f} | {r5[s].mean():.3f} "
                f"| {comp[m].mean():.3f} | {r5[m].mean():.3f} |",
                flush=True,
            )

        report("cold", "-", cold)
        for per_tool in (3, None):
            for rule in rules if not only else [r for r in rules if only in r.label]:
                lifts = memory_lifts(qs, embed, rule, per_tool)
                report(rule.label, str(per_tool or "all"), cold + lifts)


if __name__ == "__main__":
    sys.exit(main())
