"""The routing flow measured up to the chosen call: every row of a tool-retrieval set is
registered as a descriptor-only plugin with one operation (nothing can execute), and
each query is asked through ``Yard.ask(..., dry_run=True, max_steps=1)`` — retrieval
with the caller's rights and the relevance floor, the model's decision, the arguments
— which ends ``planned`` with the call it would make.

    python bench/routing.py --data ../shared/bench/metatool --limit 200
    python bench/routing.py --data DIR --methods respond --model NAME[,NAME] --json

DIR is as for bench/discovery.py (``plugins.jsonl``, ``queries.jsonl``). Per method and
model: ``choice@1`` (the planned plugin is the labelled one), ``retrieval_recall@1``
(discovery's first candidate in the same step is: the baseline, from the same run),
``none_rate`` (the flow answered "none"), ``error_rate``, and the latency of one routing
decision (the whole ``ask``, retrieval included) as ``p50_ms`` and ``p95_ms``, with the
process's CPU time per decision beside it (``cpu_p50_ms``, ``cpu_p95_ms``: the model
runs on one thread, so on a machine shared with other jobs this is what the decision
would take alone).

``--limit N`` takes N queries spread evenly over the file rather than its first N: the
files are grouped by tool, so their first lines name only a few tools. ``--model``
names embedded models of ``plugyard.llm.pinned.CATALOG`` (default: the default one).
Where a row's long description lists parameters (Seal-Tools' "Parameters: name (type,
required): …"), the operation declares them, so the model is asked for arguments as
it would be for a real plugin; otherwise the operation takes none.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from discovery import percentile, read_jsonl
from plugyard.discovery.query import allow_all
from plugyard.llm import ChatRequest, LlmError
from plugyard.llm.calls import respond
from plugyard.llm.embedded import EmbeddedChatModel
from plugyard.llm.pinned import CATALOG, DEFAULT
from plugyard.manifest.dialects.canonical import SCHEMA_ID
from plugyard.routing.offer import Offer
from plugyard.routing.retrieve import retrieve
from plugyard.yard import Settings, Yard

#: The product's decision: ``plugyard.llm.calls.respond`` over the retrieved candidates
#: offered as tools with their parameter schemas, as the ask flow and the endpoint ask.
RESPOND = "respond"
#: Far above one decision's CPU time: on a machine shared with many jobs a decision takes
#: many times that, and a timed-out generation still holds the model for the next one.
DEADLINE_S = 900.0
#: Only the choice is read: enough for a call with Seal-Tools' arguments, while the
#: text answer after "none" (what makes "none" slow) need not run to the usual 256.
MAX_TOKENS = 128
#: ``-v``: one line per query on stderr, so a long run can be read while it goes.
VERBOSE = False

_PARAMETER = re.compile(r"^\s*([A-Za-z_][\w]*) \((\w+), (required|optional)\): (.*)$", re.S)
_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean",
          "list": "array", "dict": "object"}  # fmt: skip

#: The routing flow decides one way (routing/loop.py: llm/calls.respond); the name labels
#: the rows.
METHODS = (RESPOND,)


def parameters_of(long: str | None) -> dict[str, Any]:
    """A JSON schema from a rendered parameter list, or no parameters."""
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    if not long or "Parameters: " not in long:
        return schema
    listed = long.split("Parameters: ", 1)[1].split(" Returns: ", 1)[0].rstrip(". ")
    required = []
    for part in listed.split("; "):
        found = _PARAMETER.match(part)
        if found is None:
            continue
        name, kind, need, text = found.groups()
        schema["properties"][name] = {"type": _TYPES.get(kind, "string"), "description": text}
        if need == "required":
            required.append(name)
    if required:
        schema["required"] = required
    return schema


def descriptor(row: dict[str, Any]) -> dict[str, Any]:
    description = row.get("description") or row.get("name") or row["id"]
    name = row.get("name") or row["id"]
    data: dict[str, Any] = {"$schema": SCHEMA_ID, "id": row["id"], "name": name,
                            "description": description}  # fmt: skip
    if row.get("description_long"):
        data["description_long"] = row["description_long"]
    operation = {"id": "run", "description": description,
                 "parameters": parameters_of(row.get("description_long"))}  # fmt: skip
    data["operations"] = [operation]
    return data


def spread(items: list[Any], limit: int) -> list[Any]:
    if not limit or limit >= len(items):
        return items
    return [items[i * len(items) // limit] for i in range(limit)]


class Decided:
    """One decision by ``respond``, shaped as the bench reads an ``ask``'s answer."""

    def __init__(self, status: str, plugin: str | None, first: str | None) -> None:
        self.status, self.error, self.first = status, None, first
        self.data = {"plugin": plugin}


async def decide(yard: Yard, query: str, model: Any, k: int) -> Decided:
    """Retrieval's candidates (the relevance floor, k) offered to ``respond`` as tools:
    the plugin of its first call, or none."""
    candidates = await asyncio.to_thread(retrieve, yard.search, query, k, allow_all)
    first = candidates[0].plugin_id if candidates else None
    if not candidates:
        return Decided("none", None, first)
    offer = Offer.of(candidates)
    request = ChatRequest.of(("user", query), tools=offer.tools, max_tokens=MAX_TOKENS,
                             deadline_s=DEADLINE_S)  # fmt: skip
    # As the routing loop asks: retrieval's first is favoured (routing/loop.py).
    answer = await respond(model, request, favoured=offer.tools[0]["function"]["name"])
    if not answer.tool_calls:
        return Decided("none", None, first)
    chosen = offer.by_name.get(answer.tool_calls[0].name)
    return Decided("planned", chosen.plugin_id if chosen else None, first)


async def measure(yard: Yard, queries: list[dict[str, Any]], method: str, model: Any, k: int
                  ) -> dict[str, Any]:  # fmt: skip
    async def one(query: str) -> Any:
        return await decide(yard, query, model, k)

    with contextlib.suppress(LlmError):  # the warm-up loads the model; its answer is not read
        await one(queries[0]["query"])
    right = base = none = errors = 0
    times: list[float] = []
    cpu: list[float] = []
    statuses: dict[str, int] = {}
    for number, item in enumerate(queries, 1):
        started, used = time.perf_counter(), time.process_time()
        try:
            answer = await one(item["query"])
        except LlmError as exc:  # a refusal (llm_timeout …) is a wrong answer, not the end
            code = getattr(exc, "code", type(exc).__name__)
            statuses[f"error:{code}"] = statuses.get(f"error:{code}", 0) + 1
            errors += 1
            if VERBOSE:
                print(json.dumps({"n": number, "error": code}), file=sys.stderr, flush=True)
            times.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - used) * 1000)
            continue
        times.append((time.perf_counter() - started) * 1000)
        # CPU time of the whole process (llama.cpp's thread included): on a machine
        # shared with other jobs, what the decision itself cost.
        cpu.append((time.process_time() - used) * 1000)
        if VERBOSE:
            print(json.dumps({"n": number, "query": item["query"], "relevant": item["relevant"],
                              "status": answer.status, "plugin": answer.data.get("plugin")
                              if isinstance(answer.data, dict) else None,
                              "first": getattr(answer, "first", None)}),
                  file=sys.stderr, flush=True)  # fmt: skip
        if number % 20 == 0:
            print(f"{method} {model.identity}: {number}/{len(queries)}", file=sys.stderr)
        status = answer.status
        if answer.error is not None:  # which error: the model's, or the request's
            status = f"error:{answer.error.code}"
        statuses[status] = statuses.get(status, 0) + 1
        relevant = set(item["relevant"])
        if isinstance(answer, Decided):
            base += answer.first in relevant
        else:
            step = answer.steps[0] if answer.steps else None
            base += bool(step and step.retrieved and step.retrieved[0].plugin in relevant)
        if answer.status == "planned":
            right += answer.data["plugin"] in relevant
        elif answer.status == "none":
            none += 1
        else:
            errors += 1
    n = max(1, len(queries))
    return {
        "method": method,
        "model": model.identity,
        "queries": len(queries),
        "choice@1": round(right / n, 4),
        "retrieval_recall@1": round(base / n, 4),
        "none_rate": round(none / n, 4),
        "error_rate": round(errors / n, 4),
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(percentile(times, 0.95), 1),
        "cpu_p50_ms": round(statistics.median(cpu), 1),
        "cpu_p95_ms": round(percentile(cpu, 0.95), 1),
        "statuses": statuses,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    data = Path(args.data)
    rows = read_jsonl(data / "plugins.jsonl")
    queries = read_jsonl(data / "queries.jsonl")
    if args.half:
        # Held-out queries: the odd lines (report) are never looked at while tuning on
        # the even ones (tune).
        queries = queries[(args.half == "report") :: 2]
    queries = spread(queries, args.limit)
    methods = [m for m in args.methods.split(",") if m]
    names = [m for m in args.model.split(",") if m]
    for name in names:
        if name not in CATALOG:
            raise SystemExit(f"unknown embedded model {name!r}; one of {', '.join(CATALOG)}")
    for method in methods:
        if method not in METHODS:
            raise SystemExit(f"unknown method {method!r}; one of {', '.join(METHODS)}")
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(database=str(Path(tmp) / "bench.db"), builtins=False,
                            embedder=args.embedder, governed=False)  # fmt: skip
        with Yard.from_settings(settings) as yard:
            for row in rows:
                yard.registry.register_data(descriptor(row), source="catalog", trust="trusted")
            results = []
            for name in names:
                model = EmbeddedChatModel(CATALOG[name], threads=args.threads)
                for method in methods:
                    results.append(asyncio.run(measure(yard, queries, method, model, args.k)))
    return {"data": str(data), "plugins": len(rows), "k": args.k, **results[0],
            "methods": results}  # fmt: skip


def print_table(out: dict[str, Any]) -> None:
    print(f"data {out['data']}: {out['plugins']} plugins, {out['queries']} queries, k={out['k']}")
    keys = ["choice@1", "retrieval_recall@1", "none_rate", "error_rate", "p50_ms", "p95_ms",
            "cpu_p50_ms", "cpu_p95_ms"]  # fmt: skip
    print("\n| method | model | " + " | ".join(keys) + " |")
    print("|---|---|" + "---:|" * len(keys))
    for row in out["methods"]:
        cells = [f"{row[k]:.3f}" if k.endswith(("@1", "rate")) else f"{row[k]:,.0f}" for k in keys]
        print(f"| {row['method']} | {row['model']} | " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="folder with plugins.jsonl, queries.jsonl")
    parser.add_argument("--limit", type=int, default=200, help="N queries spread over the file")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--model", default=DEFAULT.name, help="embedded model name(s), commas")
    parser.add_argument("--methods", default=",".join(METHODS),
                        help="decision methods, commas")  # fmt: skip
    parser.add_argument("--half", choices=("tune", "report"), default=None,
                        help="even (tune) or odd (report) query lines only")  # fmt: skip
    parser.add_argument("--embedder", default="minilm", help="as PLUGYARD_EMBEDDER")
    parser.add_argument("--k", type=int, default=5, help="candidates per decision")
    parser.add_argument("--threads", type=int, default=1, help="model threads")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per query")
    args = parser.parse_args(argv)
    global VERBOSE
    VERBOSE = args.verbose
    out = run(args)
    print(json.dumps(out) if args.json else "", end="\n" if args.json else "")
    if not args.json:
        print_table(out)


if __name__ == "__main__":
    main()
