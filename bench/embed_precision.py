"""What an index build's embedding costs in fp32 and in int8, on one catalog.

    bash scripts/bench.sh embed_precision --data ../shared/bench/sealtools

The rows are registered as ``discovery.py`` registers them and indexed once with a
recording hashing embedder, which keeps every distinct text the discovery service
hands its embedder. Those texts are then embedded by ``MiniLMEmbedder`` on one
thread, fp32 (``minilm:fp32``) and int8 (``minilm``, the default) in turn, ``--rounds``
times each, in the same process: CPU seconds per pass and the cosine of each int8
vector to its fp32 one.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from discovery import descriptor_data, read_jsonl
from plugyard.discovery.embedders import HashingEmbedder, Vectors
from plugyard.discovery.minilm import MiniLMEmbedder
from plugyard.discovery.service import DiscoveryService
from plugyard.discovery.vector_store import SqlVectorRepository
from plugyard.registry.registry import Registry
from plugyard.store.store import Store


class Recording(HashingEmbedder):
    """Hashing vectors, and a note of every text asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts.extend(texts)
        return super().embed(texts)


def catalog_texts(data: Path, layout: str) -> list[str]:
    recording = Recording()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "bench.db")
        registry = Registry.over(store)
        for row in read_jsonl(data / "plugins.jsonl"):
            registry.register_data(descriptor_data(row, layout), source="catalog", trust="trusted")
        service = DiscoveryService(registry, recording, SqlVectorRepository(store))
        service.start()
        service.close()
        store.close()
    return list(dict.fromkeys(recording.texts))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="folder with plugins.jsonl")
    parser.add_argument("--layout", choices=("plugin", "operation"), default="plugin")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    texts = catalog_texts(Path(args.data), args.layout)
    models = {
        "fp32": MiniLMEmbedder(backend="onnx"),
        "int8": MiniLMEmbedder(backend="onnx-int8"),
    }
    tokens = sum(models["fp32"].token_count(t) for t in texts)
    cpu: dict[str, list[float]] = {name: [] for name in models}
    vectors: dict[str, Vectors] = {}
    for _ in range(args.rounds):
        for name, model in models.items():
            start = time.process_time()
            vectors[name] = model.embed(texts)
            cpu[name].append(time.process_time() - start)
    cosines = np.sum(vectors["fp32"] * vectors["int8"], axis=1)
    print(f"{len(texts)} distinct texts, {tokens} tokens, {args.rounds} round(s), one thread")
    print("| precision | CPU s (median) | ms a text | rounds |")
    print("|---|---:|---:|---|")
    for name, seconds in cpu.items():
        median = statistics.median(seconds)
        rounds = ", ".join(f"{s:.1f}" for s in seconds)
        print(f"| {name} | {median:.1f} | {1000 * median / len(texts):.2f} | {rounds} |")
    ratio = statistics.median(cpu["fp32"]) / statistics.median(cpu["int8"])
    print(f"fp32 / int8 CPU: {ratio:.2f}x")
    print(
        f"cosine int8 to fp32: median {float(np.median(cosines)):.4f}, "
        f"p1 {float(np.percentile(cosines, 1)):.4f}, min {float(cosines.min()):.4f}"
    )


if __name__ == "__main__":
    main()
