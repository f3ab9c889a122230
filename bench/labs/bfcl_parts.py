"""Which functions does a request of several parts want? The choice step (function and
count of calls), recorded once per entry with its alternatives; the request split into
its parts by discovery (``fusion.decompose``) and each part's functions ranked as the
endpoint ranks a client's functions (``DiscoveryService.rank``). Rules that plan the
calls — which functions, how many — are scored offline against BFCL's answer.

    python bench/labs/bfcl_parts.py record --data package --half tune --limit 40 \
        --categories parallel_multiple,multiple,live_multiple --out /tmp/parts.jsonl
    python bench/labs/bfcl_parts.py score /tmp/parts.jsonl [-v]

A plan is right when it names BFCL's functions (as a set) and BFCL's number of calls.
``today`` is the endpoint before this lab: the model's choice weighed against the
ranking's first, the count read from the alternatives (``calls._count``), and only that
one function planned. The ``parts`` rules add each part's first function (when it
clears the embedder's relevance floor and is not the chosen one), optionally only when
the part's function leads the whole request's runner-up by ``lead`` (cosine), or when
the model weighed more than one call within ``margin`` of one.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bfcl_favoured import _answer, _record, lab_main, print_table

from plugyard.discovery import fusion
from plugyard.llm import calls as calls_module
from plugyard.llm.types import ChatAnswer


def _rankings(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per entry, the whole request's ranking and each part's first (with its cosine
    lead over the whole request's ranking of the same function)."""
    from plugyard.discovery.choose import embedder_from_spec
    from plugyard.discovery.documents import Document
    from plugyard.discovery.engine import HybridIndex

    embedder = embedder_from_spec(None)
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        docs = [Document(n, re.sub(r"[_.\-]+", " ", n).strip(), d) for n, d in row["tools"]]
        index = HybridIndex(embedder)
        index.upsert(docs)
        whole = index.search(row["query"], k=len(docs))
        qv = embedder.embed([row["query"]])[0]
        cos = {d.doc_id: float(index.vector(d.doc_id) @ qv) for d in docs}
        parts = []
        for part in fusion.decompose(row["query"]):
            found = index.search(part, k=len(docs))
            if found:
                pv = embedder.embed([part])[0]
                first = found[0].doc_id
                parts.append({"part": part, "first": first, "relevant": found[0].relevant,
                              "cos": float(index.vector(first) @ pv),
                              "whole_cos": cos[first]})  # fmt: skip
        out[row["id"]] = {"first": whole[0].doc_id if whole else None,
                          "relevant": bool(whole and whole[0].relevant), "parts": parts,
                          "cos_first": cos.get(whole[0].doc_id, 0.0) if whole else 0.0}  # fmt: skip
    return out


def _many_margin(answer: ChatAnswer) -> float:
    """How much less likely the model weighed its likeliest count above one than one."""
    counts = calls_module._count_alternatives(answer)
    one = counts.get(1, -math.inf)
    many = max((p for n, p in counts.items() if n > 1), default=-math.inf)
    return one - many


def _score(args: argparse.Namespace) -> None:
    rows = [json.loads(line) for line in Path(args.file).read_text().splitlines() if line]
    rows = [r for r in rows if "text" in r]
    ranked = _rankings(rows)
    table: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        answer, names, none = _answer(row), [n for n, _ in row["tools"]], row["none"]
        rank = ranked[row["id"]]
        chosen = calls_module._chosen(answer, names, none)
        chosen = chosen if isinstance(chosen, str) else None
        chosen = calls_module._weighed(answer, chosen, none, rank["first"],
                                       over_none=rank["relevant"])  # fmt: skip
        _, count = calls_module._count(answer)
        margin = _many_margin(answer)
        plans: dict[str, tuple[frozenset[str], int]] = {}
        base = frozenset({chosen}) if chosen else frozenset()
        plans["today"] = (base, count if chosen else 0)
        for lead in (0.0, 0.05, 0.1, 0.15):
            for gate in (None, 2.0, 4.0, 6.0):
                extra = [p["first"] for p in rank["parts"]
                         if p["relevant"] and p["first"] != chosen
                         and p["cos"] - p["whole_cos"] >= lead]  # fmt: skip
                if gate is not None and margin > gate:
                    extra = []
                functions = base | frozenset(extra) if chosen else base
                calls = max(count, len(functions)) if chosen else 0
                plans[f"parts lead≥{lead} gate {gate}"] = (functions, calls)
        # the parts' own functions in place of the model's choice, when they are two or more
        own = frozenset(p["first"] for p in rank["parts"]
                        if p["relevant"] and p["cos"] - p["whole_cos"] >= 0.05)  # fmt: skip
        if chosen and len(own) >= 2:
            plans["parts alone when ≥ 2"] = (own, max(count, len(own)))
        else:
            plans["parts alone when ≥ 2"] = plans["parts lead≥0.05 gate None"]
        extra = plans["parts lead≥0.05 gate None"][0] - base
        plans["parts, count + extra"] = (base | extra, count + len(extra) if chosen else 0)
        want = (frozenset(row["calls"]), len(row["calls"]))
        if row["category"].endswith("irrelevance"):
            want = (frozenset(), 0)
        for rule, plan in plans.items():
            table[row["category"]][rule].append(int(plan == want))
        if args.verbose and plans["parts lead≥0.0 gate None"] != plans["today"]:
            print(row["id"], "want", sorted(want[0]), want[1], "today", sorted(plans["today"][0]),
                  plans["today"][1], "parts", sorted(plans["parts lead≥0.0 gate None"][0]),
                  f"margin {margin:.1f}",
                  [(p["part"][:40], p["first"], round(p["cos"] - p["whole_cos"], 2))
                   for p in rank["parts"]], file=sys.stderr)  # fmt: skip
    print_table(table, 30)


def main() -> None:
    lab_main(_record, _score, "parallel_multiple,multiple,live_multiple")


if __name__ == "__main__":
    main()
