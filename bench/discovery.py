"""Plugin discovery measured through plugyard's own path: the rows of a tool-retrieval
set are registered as canonical descriptors into a fresh store (a temporary SQLite
file), indexed by the discovery service, and searched as a user would search.

    bash scripts/bench.sh discovery --data ../shared/bench/metatool           # a table
    bash scripts/bench.sh discovery --data ../shared/bench/metatool --json    # one object
    bash scripts/bench.sh discovery --data DIR --synthetic 10000,100000       # + latency

DIR holds ``plugins.jsonl`` (id, name, description, description_long),
``queries.jsonl`` (query, relevant ids) and optionally ``queries_multi.jsonl``.
Metrics are over plugin ids: recall@1/3/5/10, MRR@10 and NDCG@5 for single-tool
queries, recall@5 and COMP@5 (every relevant id in the top 5) for multi-tool queries.
Latency is per ``search`` call (k=10), query embedding included.

``--layout operation`` registers each row as a plugin with one operation carrying the
long description (as HomeClaw plugins declare capabilities), to measure the operation
entries; the default ``plugin`` layout registers the rows as they are.

``--feedback FILE`` (lines ``{"query", "relevant"}``) teaches discovery before the
queries are searched, through the product's own path: each line is searched as one
user of a log (subject ``log-<line>``) and each relevant id gets ``feedback(search_id,
…, helpful=True)``. ``--examples N`` puts the first N requests per tool of FILE into
the plugins' manifest ``examples`` instead (cut at 500 characters, as the manifest
caps them); ``--cold`` teaches nothing, for the baseline on the same queries. Either
way, queries that FILE holds are not evaluated: split a set by query first
(``bench/discovery_split.py``).

``--synthetic N,M`` also builds catalogs of N and M plugins (real texts with a fifth
of their words swapped; vectors mixed from real MiniLM vectors of DEV texts, written
to the vector store first, so the service loads them as it would after a restart) and
measures search latency with the query embedding included, and the time to re-index
one changed plugin, with ``--remembered N`` requests per plugin in memory (10 by
default, at most 100,000 in all; 0 for none). See discovery_synthetic.py.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from plugyard.discovery.choose import embedder_from_spec
from plugyard.discovery.cores import idle_cores
from plugyard.discovery.learning import Learning
from plugyard.discovery.remembered import SqlRememberedRepository
from plugyard.discovery.service import DiscoveryService
from plugyard.discovery.vector_store import SqlVectorRepository
from plugyard.manifest.dialects.canonical import SCHEMA_ID
from plugyard.registry.registry import Registry
from plugyard.store.store import Store

#: The threads each build of this process chose (or was given) for its embedding.
BUILD_THREADS: list[int] = []


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def descriptor_data(
    row: dict[str, Any], layout: str, examples: list[str] | None = None
) -> dict[str, Any]:
    """A row as a canonical descriptor (the document ``register_data`` reads)."""
    # $schema says "canonical": without it, dialect detection may read a row with a
    # long description as a HomeClaw manifest (which adds an operation).
    data: dict[str, Any] = {"$schema": SCHEMA_ID, "id": row["id"]}
    data["name"] = row.get("name") or row["id"]
    description = row.get("description") or ""
    long = row.get("description_long")
    if description:
        data["description"] = description
    if layout == "operation":
        data["operations"] = [{"id": "run", "description": long or description}]
    elif long:
        data["description_long"] = long
    if examples:
        data["examples"] = [text[:500] for text in examples]
    return data


def examples_from(lines: list[dict[str, Any]], n: int) -> dict[str, list[str]]:
    """The first ``n`` requests per tool, in file order."""
    out: dict[str, list[str]] = {}
    for line in lines:
        for tool in line["relevant"]:
            mine = out.setdefault(tool, [])
            if len(mine) < n and line["query"] not in mine:
                mine.append(line["query"])
    return out


def feed(service: DiscoveryService, lines: list[dict[str, Any]]) -> dict[str, int]:
    """Each line searched as one user and its relevant tools confirmed helpful."""
    outcomes: dict[str, int] = {}
    for i, line in enumerate(lines):
        subject = str(line.get("subject") or f"log-{i}")
        found = service.search(line["query"], k=5, subject=subject)
        for tool in line["relevant"]:
            done = service.feedback(found.search_id, tool, helpful=True, subject=subject)
            outcomes[done.reason] = outcomes.get(done.reason, 0) + 1
    return outcomes


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def scores(ranked: list[str], relevant: list[str]) -> dict[str, float]:
    rel = set(relevant)
    out: dict[str, float] = {}
    for k in (1, 3, 5, 10):
        out[f"recall@{k}"] = len(rel & set(ranked[:k])) / len(rel)
    first = next((i for i, pid in enumerate(ranked[:10]) if pid in rel), None)
    out["mrr@10"] = 0.0 if first is None else 1.0 / (first + 1)
    dcg = sum(1.0 / math.log2(i + 2) for i, pid in enumerate(ranked[:5]) if pid in rel)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(rel), 5)))
    out["ndcg@5"] = dcg / ideal
    out["comp@5"] = float(rel <= set(ranked[:5]))
    return out


def evaluate(
    service: DiscoveryService, queries: list[dict[str, Any]]
) -> tuple[dict[str, float], list[float]]:
    totals: dict[str, float] = {}
    times: list[float] = []
    hits = kept = 0
    for item in queries:
        start = time.perf_counter()
        matches = service.search(item["query"], k=10)
        times.append((time.perf_counter() - start) * 1000)
        for key, value in scores([m.plugin_id for m in matches], item["relevant"]).items():
            totals[key] = totals.get(key, 0.0) + value
        if matches and matches[0].plugin_id in item["relevant"]:
            hits += 1
            kept += matches[0].relevant
    figures = {key: value / max(1, len(queries)) for key, value in totals.items()}
    # The relevance floor (Filters(relevant_only=True)) must not hide a right answer.
    figures["floor_kept@1"] = kept / max(1, hits)
    return figures, times


def open_service(
    rows: list[dict[str, Any]],
    layout: str,
    embedder_spec: str,
    db: Path,
    examples: dict[str, list[str]] | None = None,
    threads: int = 0,
) -> tuple[DiscoveryService, Store, float, float, float]:
    """Register the rows into a fresh store and index them: (service, store, register
    seconds, build seconds, build CPU seconds of this process)."""
    store = Store.open(db)
    registry = Registry.over(store)
    start = time.perf_counter()
    for row in rows:
        data = descriptor_data(row, layout, (examples or {}).get(row["id"]))
        registry.register_data(data, source="catalog", trust="trusted")
    registered = time.perf_counter() - start
    embedder = embedder_from_spec(embedder_spec)
    learned = SqlRememberedRepository(store, embedder.dim)

    # Threads the build embeds on: what the service decides (idle cores) unless given.
    def cores() -> int:
        BUILD_THREADS.append(threads or idle_cores())
        return BUILD_THREADS[-1]

    service = DiscoveryService(
        registry, embedder, SqlVectorRepository(store), Learning(embedder, learned), cores=cores
    )
    start, cpu = time.perf_counter(), time.process_time()
    service.start()
    return service, store, registered, time.perf_counter() - start, time.process_time() - cpu


def run(args: argparse.Namespace) -> dict[str, Any]:
    data = Path(args.data)
    rows = read_jsonl(data / "plugins.jsonl")
    lines = read_jsonl(Path(args.feedback)) if args.feedback else []
    taught = {line["query"] for line in lines}
    single = [q for q in read_jsonl(data / "queries.jsonl") if q["query"] not in taught]
    single = single[: args.limit or None]
    multi_path = data / "queries_multi.jsonl"
    multi = read_jsonl(multi_path) if multi_path.exists() else []
    multi = [q for q in multi if q["query"] not in taught][: args.limit or None]
    examples = examples_from(lines, args.examples) if args.examples else None
    with tempfile.TemporaryDirectory() as tmp:
        service, store, registered, build, build_cpu = open_service(
            rows, args.layout, args.embedder, Path(tmp) / "bench.db", examples, args.threads
        )
        try:
            fed: dict[str, int] = {}
            start = time.perf_counter()
            if lines and not args.examples and not args.cold:
                fed = feed(service, lines)
            fed_s = time.perf_counter() - start
            for item in single[:20]:  # warm-up: first calls pay for lazy imports
                service.search(item["query"], k=10)
            figures, times = evaluate(service, single)
            out: dict[str, Any] = {
                "data": str(data),
                "layout": args.layout,
                "embedder": service.embedder.identity,
                "plugins": len(rows),
                "entries": len(service.index),
                "queries": len(single),
                "queries_multi": len(multi),
                **{k: round(v, 4) for k, v in figures.items() if k != "comp@5"},
                "register_s": round(registered, 3),
                "build_s": round(build, 3),
                # CPU seconds hold still on a loaded machine where wall time does not;
                # above wall time when the build embeds on several cores.
                "build_cpu_s": round(build_cpu, 3),
                "build_threads": BUILD_THREADS[0] if BUILD_THREADS else 1,
                "p50_ms": round(statistics.median(times), 2),
                "p95_ms": round(percentile(times, 0.95), 2),
                "feedback_lines": len(lines) if not (args.examples or args.cold) else 0,
                "feedback_outcomes": fed,
                "feed_s": round(fed_s, 1),
                "examples_per_tool": args.examples,
                "tools_with_examples": len(examples or {}),
                "remembered": len(service.learning.channel),
            }
            if multi:
                multi_figures, _ = evaluate(service, multi)
                out["recall@5_multi"] = round(multi_figures["recall@5"], 4)
                out["ndcg@5_multi"] = round(multi_figures["ndcg@5"], 4)
                out["comp@5_multi"] = round(multi_figures["comp@5"], 4)
            if args.synthetic:
                from discovery_synthetic import synthetic_section

                sizes = [int(n) for n in args.synthetic.split(",") if n.strip()]
                out["synthetic"] = synthetic_section(
                    service, rows, single, sizes, Path(tmp), args.remembered
                )
        finally:
            service.close()
            store.close()
    return out


def print_table(out: dict[str, Any]) -> None:
    print(f"data {out['data']}  layout {out['layout']}  embedder {out['embedder']}")
    print(f"{out['plugins']} plugins, {out['entries']} index entries, ", end="")
    print(f"{out['queries']} single-tool and {out['queries_multi']} multi-tool queries\n")
    keys = ["recall@1", "recall@3", "recall@5", "recall@10", "mrr@10", "ndcg@5"]
    print("| " + " | ".join(keys) + " | COMP@5 multi | R@5 multi |")
    print("|" + "---|" * (len(keys) + 2))
    cells = [f"{out[k]:.3f}" for k in keys]
    cells += [f"{out.get('comp@5_multi', float('nan')):.3f}"]
    cells += [f"{out.get('recall@5_multi', float('nan')):.3f}"]
    print("| " + " | ".join(cells) + " |\n")
    print(
        f"register {out['register_s']} s, index build {out['build_s']} s "
        f"({out['build_cpu_s']} s CPU on {out['build_threads']} threads, embedding included)"
    )
    print(f"search (k=10, embedding included): p50 {out['p50_ms']} ms, p95 {out['p95_ms']} ms")
    print(f"correct top-1 matches above the relevance floor: {out['floor_kept@1']:.3f}")
    if out["feedback_lines"] or out["examples_per_tool"]:
        print(
            f"memory: {out['remembered']} remembered requests "
            f"({out['examples_per_tool']} examples per tool for "
            f"{out['tools_with_examples']} tools; {out['feedback_lines']} feedback lines "
            f"{out['feedback_outcomes']} in {out['feed_s']} s)"
        )
    for section in out.get("synthetic", []):
        print(
            f"\nsynthetic {section['plugins']} plugins ({section['path']}): "
            f"build {section['build_s']} s from stored vectors; search k=5 "
            f"p50 {section['p50_ms']} ms, p95 {section['p95_ms']} ms; re-index one plugin "
            f"p50 {section['reindex_p50_ms']} ms, p95 {section['reindex_p95_ms']} ms "
            f"(index part p95 {section['reindex_index_p95_ms']} ms); "
            f"{section['remembered']} remembered requests"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="folder with plugins.jsonl, queries.jsonl")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--layout", choices=("plugin", "operation"), default="plugin")
    parser.add_argument("--embedder", default="minilm", help="as PLUGYARD_EMBEDDER")
    parser.add_argument("--limit", type=int, default=0, help="only the first N queries")
    parser.add_argument(
        "--threads", type=int, default=0, help="threads the build embeds on (default: idle cores)"
    )
    parser.add_argument("--synthetic", default="", help="catalog sizes, e.g. 10000,100000")
    parser.add_argument(
        "--remembered", type=int, default=10, help="with --synthetic: requests per plugin"
    )
    parser.add_argument("--feedback", default="", help="JSONL of {query, relevant} to learn")
    parser.add_argument(
        "--cold", action="store_true", help="teach nothing; evaluate what --feedback leaves"
    )
    parser.add_argument(
        "--examples",
        type=int,
        default=0,
        help="first N requests per tool of --feedback as examples",
    )
    args = parser.parse_args(argv)
    out = run(args)
    if args.json:
        print(json.dumps(out))
    else:
        print_table(out)


if __name__ == "__main__":
    main()
