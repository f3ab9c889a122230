"""Routing lab: how a small local model's evidence compares with, and adds to,
retrieval's first match (findings in ROUTING_LAB.md beside this file).

    # 1. retrieval's top-10 for a query sample, with scores (the flow's search)
    PYTHONPATH=src:bench python bench/labs/routing_lab.py candidates --data DIR --out c.json
    # 2. the model's evidence for each query's top-5, one variant at a time
    PYTHONPATH=src:bench python bench/labs/routing_lab.py evidence c.json tune --variant yesno \\
        --out e.json [--gguf FILE] [--limit N]
    # 3. retrieval alone, the model alone, and fusions over a grid of weights
    PYTHONPATH=src:bench python bench/labs/routing_lab.py fuse c.json tune e.json

Query samples: ``check`` is the bench's (N spread evenly over the file), ``tune`` is
disjoint from it (half a step further), so weights are chosen on ``tune`` and read on
``check``. Variants: ``numbers`` (one prompt listing the candidates, the next token's
log-probability of each number), ``numbers-fewshot`` (the same after four examples
whose answers stand at different numbers), ``yesno`` (one question per candidate, log P(yes) −
log P(no)), ``yesno-long`` (the same with 400 characters of the long description),
``yesno-fewshot`` (the same after six fixed examples, a prefix the prompt cache keeps),
``yesno-raw`` (a plain-text prompt without a chat template, for base models).
"""

from __future__ import annotations

import argparse
import json
import math
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from discovery import open_service, read_jsonl
from plugyard.discovery.query import Filters
from routing import spread

FEW_SHOT = [
    ("What's the weather in Oslo tomorrow?", "Weather Forecast",
     "Gives weather forecasts for any city.", "yes"),
    ("What's the weather in Oslo tomorrow?", "Currency Converter",
     "Converts amounts between currencies at current rates.", "no"),
    ("Translate 'good morning' into Spanish.", "Recipe Finder",
     "Finds recipes by ingredient and cuisine.", "no"),
    ("Translate 'good morning' into Spanish.", "Translator",
     "Translates text between languages.", "yes"),
    ("Find me cheap flights to Rome in May.", "Stock Quotes",
     "Real-time stock prices and market data.", "no"),
    ("Find me cheap flights to Rome in May.", "Flight Search",
     "Searches and compares flights and fares.", "yes"),
]  # fmt: skip
#: Four examples whose right answers stand at different numbers (2, 1, 3, 5).
FEW_SHOT_NUMBERS = [
    ("What's the weather in Oslo tomorrow?", ["Currency Converter: converts currencies",
     "Weather Forecast: weather forecasts for any city", "Translator: translates text"], "2"),
    ("Translate 'good morning' into Spanish.", ["Translator: translates text",
     "Recipe Finder: finds recipes by ingredient", "Stock Quotes: real-time stock prices"], "1"),
    ("Find me cheap flights to Rome in May.", ["Stock Quotes: real-time stock prices",
     "Hotel Finder: finds hotels", "Flight Search: compares flights and fares",
     "Car Rental: rents cars"], "3"),
    ("How many calories are in a banana?", ["Recipe Finder: finds recipes by ingredient",
     "Movie Guide: films and showtimes", "Calculator: arithmetic", "Music Player: plays songs",
     "Nutrition Facts: calories and nutrients of foods"], "5"),
]  # fmt: skip


def candidates(args: argparse.Namespace) -> None:
    data = Path(args.data)
    rows = read_jsonl(data / "plugins.jsonl")
    queries = read_jsonl(data / "queries.jsonl")
    n = len(queries)
    samples = {
        "check": spread(queries, args.limit),
        "tune": [queries[min(n - 1, int((i + 0.5) * n / args.tune))] for i in range(args.tune)],
    }
    out: dict[str, Any] = {"plugins": {r["id"]: r for r in rows}, "sets": {}}
    with tempfile.TemporaryDirectory() as tmp:
        service, store, *_ = open_service(rows, "plugin", "minilm", Path(tmp) / "lab.db")
        for name, sample in samples.items():
            items = []
            for q in sample:
                found = service.search(q["query"], k=10, filters=Filters(relevant_only=True))
                cands = [{"id": m.plugin_id, "score": m.score} for m in found]
                items.append({"query": q["query"], "relevant": q["relevant"], "cands": cands})
            out["sets"][name] = items
        service.close()
        store.close()
    Path(args.out).write_text(json.dumps(out))


def _server(path: str) -> Any:
    import xllamacpp  # type: ignore[import-untyped,import-not-found,unused-ignore]

    params = xllamacpp.CommonParams()
    params.model.path = path
    params.n_ctx = 2048
    params.n_parallel = 1
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    params.verbosity = -1
    params.warmup = False
    params.api_keys = [secrets.token_hex(16)]
    return xllamacpp.Server(params)


def _line(text: str | None, cap: int) -> str:
    line = " ".join((text or "").split())
    return line if len(line) <= cap else line[: cap - 1] + "…"


def _top(server: Any, variant: str, prompt: Any) -> list[dict[str, Any]]:
    if variant == "yesno-raw":
        raw = server.handle_completions({"prompt": prompt, "max_tokens": 1, "temperature": 0,
                                         "n_probs": 20})  # fmt: skip
    else:
        raw = server.handle_chat_completions({"messages": prompt, "max_tokens": 1,
                                              "temperature": 0, "logprobs": True,
                                              "top_logprobs": 20})  # fmt: skip
    top: list[dict[str, Any]] = raw["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
    return top


def _question(variant: str, query: str, plugin: dict[str, Any]) -> Any:
    text = plugin["description"] or ""
    if variant == "yesno-long" and plugin.get("description_long"):
        text = f"{text} {plugin['description_long']}"
    tool = f"{plugin['name']}: {_line(text, 400 if variant == 'yesno-long' else 160)}"
    if variant == "yesno-raw":
        return (f"User request: {query}\nTool: {tool}\nQuestion: Is this the right tool for "
                "the request? Answer (yes or no):")  # fmt: skip
    ask = "Can this tool handle the request? Answer yes or no."
    messages = [{"role": "system", "content": "Answer yes or no."}]
    if variant == "yesno-fewshot":
        for q, name, desc, answer in FEW_SHOT:
            shot = f"Request: {q}\n\nTool: {name}: {desc}\n\n{ask}"
            messages.append({"role": "user", "content": shot})
            messages.append({"role": "assistant", "content": answer})
    messages.append({"role": "user", "content": f"Request: {query}\n\nTool: {tool}\n\n{ask}"})
    return messages


def _log_odds(top: list[dict[str, Any]]) -> float:
    def mass(words: set[str]) -> float:
        found = [math.exp(t["logprob"]) for t in top if t["token"].strip().lower() in words]
        return math.log(sum(found)) if found else -20.0

    return mass({"yes"}) - mass({"no"})


def evidence(args: argparse.Namespace) -> None:
    from plugyard.llm.pinned import DEFAULT

    server = _server(args.gguf or str(DEFAULT.locate()))
    cached = json.loads(Path(args.candidates).read_text())
    plugins, items = cached["plugins"], cached["sets"][args.set][: args.limit or None]
    out, times = [], []
    for item in items:
        cands = item["cands"][:5]
        started = time.perf_counter()
        if args.variant.startswith("numbers"):
            listed = [plugins[c["id"]] for c in cands]
            lines = [f"{p['name']}: {_line(p['description'], 120)}" for p in listed]
            shots = FEW_SHOT_NUMBERS if args.variant == "numbers-fewshot" else []
            messages = [{"role": "system", "content": "You choose the tool that fits the "
                         "user's request. Answer with its number."}]  # fmt: skip
            for query, tools, answer in [*shots, (item["query"], lines, "")]:
                numbered = "\n".join(f"{j + 1}. {t}" for j, t in enumerate(tools))
                messages.append({"role": "user", "content": f"Request: {query}\n\nTools:\n"
                                 f"{numbered}\n\nWhich tool fits the request best? Answer "
                                 "with its number."})  # fmt: skip
                if answer:
                    messages.append({"role": "assistant", "content": answer})
            top = _top(server, "numbers", messages)
            found = {t["token"].strip(): t["logprob"] for t in top}
            scores = [found.get(str(j + 1), -20.0) for j in range(len(cands))]
        else:
            scores = [_log_odds(_top(server, args.variant,
                                     _question(args.variant, item["query"], plugins[c["id"]])))
                      for c in cands]  # fmt: skip
        times.append(time.perf_counter() - started)
        out.append(scores)
    Path(args.out).write_text(json.dumps(out))
    times.sort()
    print(f"{args.variant}: {len(out)} queries, p50 {statistics.median(times):.2f} s")


def fuse(args: argparse.Namespace) -> None:
    cached = json.loads(Path(args.candidates).read_text())
    items = cached["sets"][args.set]
    model = json.loads(Path(args.evidence).read_text())
    rows = [(item, item["cands"][:5], lp) for item, lp in zip(items, model, strict=False)
            if item["cands"]]  # fmt: skip

    def accuracy(pick: Any) -> float:
        hits = sum(c[pick(c, lp)]["id"] in item["relevant"] for item, c, lp in rows)
        return hits / len(rows)

    def best(values: list[float]) -> int:
        return max(range(len(values)), key=lambda j: values[j])

    def z(values: list[float]) -> list[float]:
        mu = statistics.fmean(values)
        sd = statistics.pstdev(values) or 1.0
        return [(v - mu) / sd for v in values]

    print(f"{len(rows)} queries: retrieval@1 {accuracy(lambda c, lp: 0):.3f}, "
          f"model@1 {accuracy(lambda c, lp: best(lp)):.3f}")  # fmt: skip
    for weight in (0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0):
        raw = accuracy(
            lambda c, lp, w=weight: best([x["score"] + w * v for x, v in zip(c, lp, strict=True)])
        )
        zed = accuracy(
            lambda c, lp, w=weight: best(
                [a + w * b for a, b in zip(z([x["score"] for x in c]), z(lp), strict=True)]
            )
        )
        print(f"weight {weight}: score + w·evidence {raw:.3f}; z-scored {zed:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("candidates")
    c.add_argument("--data", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--limit", type=int, default=200)
    c.add_argument("--tune", type=int, default=600)
    e = sub.add_parser("evidence")
    e.add_argument("candidates")
    e.add_argument("set", choices=("check", "tune"))
    variants = ("numbers", "numbers-fewshot", "yesno", "yesno-long", "yesno-fewshot", "yesno-raw")
    e.add_argument("--variant", required=True, choices=variants)
    e.add_argument("--out", required=True)
    e.add_argument("--gguf", help="another GGUF file (default: the embedded default)")
    e.add_argument("--limit", type=int, default=0)
    f = sub.add_parser("fuse")
    f.add_argument("candidates")
    f.add_argument("set", choices=("check", "tune"))
    f.add_argument("evidence")
    args = parser.parse_args()
    {"candidates": candidates, "evidence": evidence, "fuse": fuse}[args.command](args)


if __name__ == "__main__":
    main()
