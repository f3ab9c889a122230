"""Which of a client's functions does the request want: the 0.5B model's own choice, the
yard's retrieval ranking of the client's functions, or the model's choice weighed against
retrieval's first (``plugyard.llm.calls._weighed`` with ``favoured``)? The choice step is
recorded once per entry with its alternatives; the rules are scored offline.

    python bench/labs/bfcl_favoured.py record --data package --half tune --limit 40 \
        --categories multiple,live_multiple,irrelevance,live_irrelevance --out /tmp/fav.jsonl
    python bench/labs/bfcl_favoured.py score /tmp/fav.jsonl

A row's ``want`` is the first function of BFCL's answer (``none`` for the irrelevance
categories, whose right answer is no call; for live_relevance any call is right).
Retrieval ranks the entry's functions, each read by its name's words and its
description, by the yard's default embedder's cosine with the user's last message, and
by the hybrid index the yard searches its catalog with (``discovery.engine``), as
``DiscoveryService.rank`` does. "hybrid 2.0 relevant" is the rule the endpoint adopted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bfcl import _types, package_data, pick, prepared, read_jsonl, record_arguments
from bfcl_count import choice_step

from plugyard.llm import calls as calls_module
from plugyard.llm import llm_from_spec
from plugyard.llm.types import ChatAnswer, TokenLogprob, Usage

#: Cosines under which the favoured function does not overrule a choice of none.
FLOORS = (0.2, 0.25, 0.3, 0.35, 0.4, 0.45)


async def _record(args: argparse.Namespace) -> None:
    model = llm_from_spec(args.llm)
    mapping = _types()
    data = package_data() if args.data == "package" else Path(args.data)
    with Path(args.out).open("w") as out:
        for category in args.categories.split(","):
            entries = prepared(read_jsonl(data / f"BFCL_v4_{category}.json"), category)
            truth_file = data / "possible_answer" / f"BFCL_v4_{category}.json"
            truth = {a["id"]: a["ground_truth"] for a in read_jsonl(truth_file)} \
                if truth_file.exists() else {}  # fmt: skip
            for entry in pick(entries, args.half, args.limit):
                out.write(json.dumps(await _row(model, mapping, category, entry, truth)) + "\n")
                out.flush()


async def _row(model: Any, mapping: dict[str, str], category: str, entry: dict[str, Any],
               truth: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    request, tools, none = choice_step(entry, mapping)
    answers = truth.get(entry["id"])
    calls = [re.sub(r"\.", "_", next(iter(a))) for a in answers or ()]
    want = calls[0] if calls else none
    row: dict[str, Any] = {"id": entry["id"], "category": category, "want": want,
                           "calls": calls, "none": none,
                           "tools": [[t.name, t.description] for t in tools],
                           "query": entry["question"][0][-1]["content"]}  # fmt: skip
    try:
        answer = await model.chat(request)
    except Exception as exc:  # a lab records what failed
        row["error"] = str(exc)[:200]
    else:
        row["text"] = answer.text
        row["logprobs"] = [[[a.token, a.logprob] for a in alts] for alts in answer.top_logprobs]
    print(row["id"], want, row.get("text", row.get("error")), file=sys.stderr)
    return row


def _answer(row: dict[str, Any]) -> ChatAnswer:
    try:
        parsed = json.loads(row["text"])
    except ValueError:
        parsed = None
    alternatives = tuple(tuple(TokenLogprob(t, p) for t, p in alts) for alts in row["logprobs"])
    return ChatAnswer(row["text"], "stop", Usage(0, 0), 0.0, "lab", json=parsed,
                      top_logprobs=alternatives)  # fmt: skip


def _rankings(rows: list[dict[str, Any]]) -> dict[str, dict[str, list[Any]]]:
    """Per entry, the functions ranked by cosine alone and by the hybrid index."""
    from plugyard.discovery.choose import embedder_from_spec
    from plugyard.discovery.documents import Document
    from plugyard.discovery.engine import HybridIndex

    embedder = embedder_from_spec(None)
    out: dict[str, dict[str, list[Any]]] = {}
    for row in rows:
        docs = [Document(n, re.sub(r"[_.]", " ", n), d) for n, d in row["tools"]]
        index = HybridIndex(embedder)
        index.upsert(docs)
        query = row["query"]
        matches = index.search(query, k=len(docs))
        hybrid = [m.doc_id for m in matches]
        qv = embedder.embed([query])[0]
        cosines = [(float(index.vector(d.doc_id) @ qv), d.doc_id) for d in docs]
        ranked = sorted(cosines, reverse=True)
        out[row["id"]] = {"cosine": [n for _, n in ranked], "hybrid": hybrid,
                          "best": [ranked[0][0]], "relevant": [matches[0].relevant]}  # fmt: skip
    return out


def _score(args: argparse.Namespace) -> None:
    rows = [json.loads(line) for line in Path(args.file).read_text().splitlines() if line]
    rows = [r for r in rows if "text" in r]
    ranked = _rankings(rows)
    table: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    margins = (0.5, 1.0, 2.0, 3.0)
    for row in rows:
        answer, names, none = _answer(row), [n for n, _ in row["tools"]], row["none"]
        chosen = calls_module._chosen(answer, names, none)
        chosen = chosen if isinstance(chosen, str) else None
        model = calls_module._weighed(answer, chosen, none, None)
        got = {"model": model}
        for how in ("cosine", "hybrid"):
            first = ranked[row["id"]][how][0]
            got[f"{how} first"] = first
            for margin in margins:
                calls_module.FAVOURED_MARGIN = margin
                weighed = calls_module._weighed(answer, chosen, none, first)
                got[f"{how} {margin}"] = weighed
                # the favoured tool only against another tool, never against none
                got[f"{how} {margin} tool"] = model if model is None else weighed
        best = ranked[row["id"]]["best"][0]
        for floor in FLOORS:
            # against none only when the favoured function is near the request at all
            got[f"cosine 2.0 ≥{floor}"] = got["cosine 2.0"] if best >= floor \
                else got["cosine 2.0 tool"]  # fmt: skip
        # the product's rule: against none only when the first clears the embedder's floor
        got["hybrid 2.0 relevant"] = got["hybrid 2.0"] if ranked[row["id"]]["relevant"][0] \
            else got["hybrid 2.0 tool"]  # fmt: skip
        want = None if row["want"] == none else row["want"]
        for rule, value in got.items():
            # live_relevance: any call is right (BFCL's rule), no call is wrong
            right = value is not None if row["category"] == "live_relevance" else value == want
            table[row["category"]][rule].append(int(right))
        if args.verbose and (got["model"] != want or want is None):
            print(row["id"], f"{best:.2f}", "want", want, "model", got["model"], "hybrid",
                  ranked[row["id"]]["hybrid"][:3], file=sys.stderr)  # fmt: skip
    print_table(table, 18)


def print_table(table: dict[str, dict[str, list[int]]], width: int) -> None:
    """Rules down, categories across: right answers of each rule per category."""
    rules = list(next(iter(table.values())))
    print(f"{'rule':<{width}}" + "".join(f"{c[:16]:>18}" for c in table))
    for rule in rules:
        print(f"{rule:<{width}}" + "".join(
            f"{sum(v[rule])}/{len(v[rule]):<15}" for v in table.values()))  # fmt: skip


def lab_main(record: Any, score: Any, categories: str) -> None:
    """A lab's two commands: ``record`` (the model, once per entry) and ``score``."""
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    record_arguments(sub.add_parser("record"), categories, 40)
    scoring = sub.add_parser("score")
    scoring.add_argument("file")
    scoring.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    if args.command == "record":
        asyncio.run(record(args))
    else:
        score(args)


def main() -> None:
    lab_main(_record, _score, "multiple,live_multiple")


if __name__ == "__main__":
    main()
