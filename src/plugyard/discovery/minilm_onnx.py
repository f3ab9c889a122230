"""Builds a BERT-encoder ONNX graph from safetensors weights, in memory.

Building takes well under a second, so no exported file is cached on disk:
nothing can go stale when the weights change, and no model file has to be
shipped. The graph is the HuggingFace BertModel in opset 17 plus
sentence-transformers' mean pooling and L2 normalisation, with attention and
bias+GELU written as onnxruntime's fused operators (its optimiser fused the
LayerNorms of the plain form but neither of these): the same function, 1e-7
apart in fp32, and an index build ~11% less CPU in int8.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from plugyard.discovery.embedders import Vectors

_OPSET = 17
_CONTRIB = "com.microsoft"
#: Names the graph's form; a cached int8 file of another form is not read.
GRAPH = "fused1"


class _Graph:
    """Small helper that names nodes and keeps the initializer list."""

    def __init__(self) -> None:
        from onnx import helper, numpy_helper

        self.helper = helper
        self.numpy_helper = numpy_helper
        self.nodes: list[object] = []
        self.inits: list[object] = []
        self._n = 0

    def const(self, name: str, value: NDArray[np.generic]) -> str:
        self.inits.append(self.numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, kind: str, *inputs: str, **attrs: Any) -> str:
        self._n += 1
        out = f"{kind.lower()}_{self._n}"
        self.nodes.append(self.helper.make_node(kind, list(inputs), [out], **attrs))
        return out

    def contrib(self, kind: str, *inputs: str, **attrs: Any) -> str:
        """An onnxruntime (com.microsoft) operator."""
        self._n += 1
        out = f"{kind.lower()}_{self._n}"
        node = self.helper.make_node(kind, list(inputs), [out], domain=_CONTRIB, **attrs)
        self.nodes.append(node)
        return out

    def linear(self, x: str, w: NDArray[np.float32], b: NDArray[np.float32], name: str) -> str:
        # torch Linear stores (out, in); MatMul wants (in, out).
        weight = self.const(name + ".w", np.asarray(w, np.float32).T)
        return self.op("Add", self.op("MatMul", x, weight), self.const(name + ".b", b))

    def layer_norm(
        self, x: str, w: NDArray[np.float32], b: NDArray[np.float32], name: str, eps: float
    ) -> str:
        return self.op(
            "LayerNormalization",
            x,
            self.const(name + ".g", w),
            self.const(name + ".b", b),
            axis=-1,
            epsilon=eps,
        )


def build_bert_mean_pool(
    weights: dict[str, NDArray[np.generic]], layers: int, heads: int, eps: float
) -> bytes:
    """Serialised ONNX model: (input_ids, attention_mask) -> unit vectors."""
    from onnx import TensorProto

    w = {k: np.asarray(v) for k, v in weights.items()}
    g = _Graph()
    hidden = int(w["embeddings.word_embeddings.weight"].shape[1])

    def i64(*v: int) -> NDArray[np.int64]:
        return np.array(v, dtype=np.int64)

    def f32(v: float) -> NDArray[np.float32]:
        return np.array(v, dtype=np.float32)

    width = g.op("Gather", g.op("Shape", "input_ids"), g.const("one", i64(1)), axis=0)
    pos = g.op(
        "Slice",
        g.const("pos_table", w["embeddings.position_embeddings.weight"]),
        g.const("zero", i64(0)),
        width,
    )
    x = g.op("Gather", g.const("word_table", w["embeddings.word_embeddings.weight"]), "input_ids")
    x = g.op(
        "Add",
        g.op("Add", x, pos),
        g.const("type0", w["embeddings.token_type_embeddings.weight"][0]),
    )
    x = g.layer_norm(
        x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], "emb_ln", eps
    )

    maskf = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)
    # onnxruntime's fused attention: one kernel for the QKV projection, the
    # heads, the masked softmax and the context (the plain-op form spent a fifth
    # of its time moving heads around), quantised as a whole (QAttention).
    mask = g.op("Cast", "attention_mask", to=TensorProto.INT32)

    for i in range(layers):
        p = f"encoder.layer.{i}."
        a = p + "attention.self."
        qkv_w = np.concatenate([w[a + n + ".weight"] for n in ("query", "key", "value")])
        qkv_b = np.concatenate([w[a + n + ".bias"] for n in ("query", "key", "value")])
        ctx = g.contrib(
            "Attention",
            x,
            g.const(f"l{i}.qkv.w", np.asarray(qkv_w, np.float32).T),
            g.const(f"l{i}.qkv.b", qkv_b),
            mask,
            num_heads=heads,
        )
        attn = g.linear(
            ctx,
            w[p + "attention.output.dense.weight"],
            w[p + "attention.output.dense.bias"],
            f"l{i}.o",
        )
        x = g.layer_norm(
            g.op("Add", x, attn),
            w[p + "attention.output.LayerNorm.weight"],
            w[p + "attention.output.LayerNorm.bias"],
            f"l{i}.ln1",
            eps,
        )
        # Exact (erf) GELU, as BERT's "gelu" activation, with the bias in one kernel.
        h = g.contrib(
            "BiasGelu",
            g.op(
                "MatMul",
                x,
                g.const(f"l{i}.i.w", np.asarray(w[p + "intermediate.dense.weight"], np.float32).T),
            ),
            g.const(f"l{i}.i.b", w[p + "intermediate.dense.bias"]),
        )
        out = g.linear(h, w[p + "output.dense.weight"], w[p + "output.dense.bias"], f"l{i}.f")
        x = g.layer_norm(
            g.op("Add", x, out),
            w[p + "output.LayerNorm.weight"],
            w[p + "output.LayerNorm.bias"],
            f"l{i}.ln2",
            eps,
        )

    m = g.op("Unsqueeze", maskf, g.const("axlast", i64(-1)))
    summed = g.op("ReduceSum", g.op("Mul", x, m), g.const("ax1", i64(1)), keepdims=0)
    count = g.op(
        "Max", g.op("ReduceSum", m, g.const("ax1b", i64(1)), keepdims=0), g.const("tiny", f32(1e-9))
    )
    mean = g.op("Div", summed, count)
    norm = g.op(
        "Sqrt", g.op("ReduceSum", g.op("Mul", mean, mean), g.const("axl", i64(-1)), keepdims=1)
    )
    unit = g.op("Div", mean, g.op("Max", norm, g.const("eps12", f32(1e-12))))
    g.nodes.append(g.helper.make_node("Identity", [unit], ["sentence_embedding"]))

    graph = g.helper.make_graph(
        g.nodes,
        "bert_mean_pool",
        [
            g.helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            g.helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        [
            g.helper.make_tensor_value_info(
                "sentence_embedding", TensorProto.FLOAT, ["batch", hidden]
            )
        ],
        initializer=g.inits,
    )
    model = g.helper.make_model(
        graph, opset_imports=[g.helper.make_opsetid("", _OPSET), g.helper.make_opsetid(_CONTRIB, 1)]
    )
    model.ir_version = 8
    return bytes(model.SerializeToString())


def quantise_int8(model: bytes, target: Path) -> Path:
    """Dynamic int8, one scale per output channel of each MatMul weight.

    Per-tensor scales are what made "naive int8" drift (median cosine 0.93,
    DESIGN.md section 10); per channel the median cosine to fp32 is 0.995
    and DEV retrieval figures are unchanged, at a third of the query time.
    The result is written atomically so concurrent loaders never read half.
    """
    import onnx
    from onnxruntime.quantization import (  # type: ignore[import-untyped,unused-ignore]
        QuantType,
        quantize_dynamic,
    )

    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        partial = Path(tmp) / target.name
        quantize_dynamic(
            onnx.load_from_string(model),
            partial,
            per_channel=True,
            weight_type=QuantType.QInt8,
            # Shape inference stops at onnxruntime's own operators; their outputs are float.
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
        os.replace(partial, target)
    return target


class OnnxForward:
    """onnxruntime session over the in-memory graph, pinned to one thread.

    One thread because on shared 2-core machines two threads under load were
    measured 30x slower (DESIGN.md section 10).
    """

    def __init__(
        self,
        weights: dict[str, NDArray[np.generic]],
        layers: int,
        heads: int,
        eps: float,
        int8_cache: Path | None = None,
    ) -> None:
        import onnxruntime as ort  # type: ignore[import-untyped,unused-ignore]

        model: bytes | str
        if int8_cache is not None and int8_cache.is_file():
            model = str(int8_cache)
        else:
            model = build_bert_mean_pool(weights, layers, heads, eps)
            if int8_cache is not None:
                model = str(quantise_int8(model, int8_cache))
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])

    def __call__(self, ids: NDArray[np.int64], mask: NDArray[np.int64]) -> Vectors:
        (out,) = self._session.run(
            ["sentence_embedding"], {"input_ids": ids, "attention_mask": mask}
        )
        return np.asarray(out, dtype=np.float32)
