"""Routing lab: record the model's choice among retrieval's candidates, then score rules
that weigh it against retrieval's order, offline.

    python bench/labs/routing_prior.py record --data ../shared/bench/metatool --out mt.jsonl
    python bench/labs/routing_prior.py record --ask --out ask.jsonl
    python bench/labs/routing_prior.py score mt.jsonl st.jsonl ask.jsonl

``record`` asks the embedded model the choice step of ``plugyard.llm.calls.respond``
(the candidates as tools, a JSON answer naming one or ``none``) once per query, both
halves, and writes per query: the candidates in retrieval's order with their scores,
which are right, the model's greedy choice and the alternatives (token, log-probability)
at the token where the choice's value begins. ``--ask`` takes bench/ask.py's requests
over the bundled plugins (the ones nothing serves are right only as ``none``).

``score`` replays rules over the records without the model: the model's choice as
today, retrieval's first, and "``none`` or a later candidate needs a margin of log-
probability over retrieval's first" for a grid of margins, per file and half.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from plugyard.discovery.query import allow_all
from plugyard.llm import ChatRequest, Message
from plugyard.llm.calls import (
    _CHOOSE,
    CHOICE_LOGPROBS,
    CHOOSE_TOKENS,
    Tool,
    _choice_schema,
    _none_choice,
    _prompt,
    _step,
    _value_start,
)
from plugyard.llm.embedded import EmbeddedChatModel
from plugyard.llm.pinned import CATALOG, DEFAULT
from plugyard.routing.flow import TOOL_DATA_NOTE
from plugyard.routing.offer import Offer
from plugyard.routing.retrieve import retrieve
from plugyard.yard import Settings, Yard


def _queries_catalog(data: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    import routing  # bench/routing.py

    rows = routing.read_jsonl(data / "plugins.jsonl")
    queries = routing.read_jsonl(data / "queries.jsonl")
    out = []
    for i, q in enumerate(queries):
        out.append({"query": q["query"], "relevant": list(q["relevant"]),
                    "half": "tune" if i % 2 == 0 else "report"})  # fmt: skip
    return rows, out


def _queries_ask() -> list[dict[str, Any]]:
    import ask  # bench/ask.py

    out = []
    for i, r in enumerate(ask.REQUESTS):
        out.append({"query": r.text, "relevant": [r.plugin] if r.plugin else [],
                    "operation": r.operation, "half": "tune" if i % 2 == 0 else "report"})  # fmt: skip
    return out


async def _choose(model: Any, yard: Yard, query: str, k: int, ask: bool) -> dict[str, Any]:
    candidates = await asyncio.to_thread(retrieve, yard.search, query, k, allow_all)
    if not candidates:
        return {"candidates": []}
    offer = Offer.of(candidates)
    tools = [Tool.of(t) for t in offer.tools]
    names = [t.name for t in tools]
    none = _none_choice(names)
    messages = [Message("system", TOOL_DATA_NOTE)] if ask else []
    messages.append(Message("user", query))
    request = ChatRequest(tuple(messages), max_tokens=256, deadline_s=900.0)
    prompt = _prompt(request.messages, tools)
    import dataclasses
    import time

    choose = dataclasses.replace(
        _step(request, (*prompt, Message("system", _CHOOSE.replace('"none"', json.dumps(none)))),
              schema=_choice_schema([*names, none]), max_tokens=CHOOSE_TOKENS,
              deadline=time.perf_counter() + 900.0),  # fmt: skip
        top_logprobs=CHOICE_LOGPROBS,
    )
    answer = await model.chat(choose)
    at = _value_start(answer)
    alternatives = (
        [[a.token, a.logprob] for a in answer.top_logprobs[at]] if at is not None else []
    )
    return {
        "candidates": [
            {"name": n, "plugin": offer.by_name[n].plugin_id,
             "operation": offer.by_name[n].operation.id, "score": offer.by_name[n].score}
            for n in names
        ],  # fmt: skip
        "none": none,
        "greedy": answer.json.get("tool") if isinstance(answer.json, dict) else None,
        "alternatives": alternatives,
    }


def record(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        if args.ask:
            settings = Settings(database=str(Path(tmp) / "lab.db"), governed=False,
                                embedder="minilm")
            queries = _queries_ask()
            rows: list[dict[str, Any]] = []
        else:
            import routing

            settings = Settings(database=str(Path(tmp) / "lab.db"), builtins=False,
                                governed=False, embedder="minilm")  # fmt: skip
            rows, queries = _queries_catalog(Path(args.data))
            queries = [q for q in queries if q["half"] in args.halves.split(",")]
            if args.limit:
                tune = routing.spread([q for q in queries if q["half"] == "tune"], args.limit)
                rep = routing.spread([q for q in queries if q["half"] == "report"], args.limit)
                queries = tune + rep
        model = EmbeddedChatModel(CATALOG[args.model], threads=args.threads)
        with Yard.from_settings(settings) as yard, open(args.out, "w") as out:
            if not args.ask:
                import routing

                for row in rows:
                    yard.registry.register_data(routing.descriptor(row), source="catalog",
                                                trust="trusted")  # fmt: skip
            for i, q in enumerate(queries):
                got = asyncio.run(_choose(model, yard, q["query"], args.k, args.ask))
                out.write(json.dumps({**q, **got}) + "\n")
                out.flush()
                print(i, q["query"][:60], got.get("greedy"), file=sys.stderr)


# ------------------------------------------------------------------ scoring


def _first_token_logprob(name: str, others: Sequence[str],
                         alternatives: Sequence[Sequence[Any]]) -> float:  # fmt: skip
    """The log-probability of the likeliest first token that begins ``name``; tokens
    that also begin every other name tell nothing and count the same for all."""
    found = [lp for token, lp in alternatives if (t := token.strip()) and name.startswith(t)]
    if not found:
        floor = min((lp for _, lp in alternatives), default=0.0)
        return floor - 1.0
    return max(found)


def decide(row: dict[str, Any], rule: str, margin: float, weight: float) -> str | None:
    """The plugin a rule picks for one record, ``None`` for none."""
    cands = row["candidates"]
    if not cands:
        return None
    by_name = {c["name"]: c for c in cands}
    greedy = row.get("greedy")
    if rule == "retrieval":
        return str(cands[0]["plugin"])
    if rule == "oracle":  # the best any choice among the offered could do
        right = [c["plugin"] for c in cands if c["plugin"] in row["relevant"]]
        return right[0] if right else (None if not row["relevant"] else cands[0]["plugin"])
    if rule == "model":
        return by_name[greedy]["plugin"] if greedy in by_name else None
    alts = row["alternatives"]
    if not alts:
        return by_name[greedy]["plugin"] if greedy in by_name else None
    names = [c["name"] for c in cands]
    lp = {n: _first_token_logprob(n, [m for m in names if m != n], alts) for n in names}
    lp_none = _first_token_logprob(row["none"], names, alts)
    if rule == "margin":
        # The model's answer stands only when it beats retrieval's first by the margin.
        first = names[0]
        if greedy == first:
            return str(cands[0]["plugin"])
        if greedy in by_name:
            return by_name[greedy]["plugin"] if lp[greedy] - lp[first] >= margin else cands[0]["plugin"]
        return None if lp_none - lp[first] >= margin else cands[0]["plugin"]
    if rule == "product":  # plugyard.llm.calls.respond with favoured= and this margin
        from plugyard.llm import calls
        from plugyard.llm.types import ChatAnswer, TokenLogprob, Usage

        head = '{"tool": "'
        answer = ChatAnswer(
            text=head + str(greedy) + '"}', finish_reason="stop", usage=Usage(0, 0),
            duration_ms=0.0, model="lab",
            top_logprobs=((TokenLogprob(head, 0.0),),
                          tuple(TokenLogprob(t, lp) for t, lp in alts)),
        )  # fmt: skip
        chosen = greedy if greedy in by_name else None
        if chosen is not None and (x := calls._margin(answer, row["none"], chosen)) is not None \
                and x >= -calls.NONE_MARGIN:  # fmt: skip
            chosen = None
        if chosen != names[0]:
            lead = calls._margin(answer, chosen or row["none"], names[0])
            if lead is not None and lead < margin:
                chosen = names[0]
        return by_name[chosen]["plugin"] if chosen else None
    if rule == "blend":
        best = max(names, key=lambda n: lp[n] + weight * by_name[n]["score"])
        top = cands[0]["score"]
        if lp_none + weight * top + margin > lp[best] + weight * by_name[best]["score"]:
            return None
        return str(by_name[best]["plugin"])
    raise ValueError(rule)


def score(args: argparse.Namespace) -> None:
    rules = [("oracle", 0.0, 0.0), ("model", 0.0, 0.0), ("retrieval", 0.0, 0.0)]
    rules += [("margin", m, 0.0) for m in (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)]
    rules += [("product", m, 0.0) for m in (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0)]
    rules += [("blend", m, w) for w in (0.5, 1.0, 2.0) for m in (0.0, -1.0, -2.0, -3.0)]
    files = {Path(f).stem: [json.loads(line) for line in open(f)] for f in args.files}
    header = "rule".ljust(22) + "".join(f"{name}:{half}".rjust(16) for name in files
                                        for half in ("tune", "report"))  # fmt: skip
    print(header)
    for rule, m, w in rules:
        cells = []
        for rows in files.values():
            for half in ("tune", "report"):
                part = [r for r in rows if r["half"] == half]
                right = 0
                for r in part:
                    picked = decide(r, rule, m, w)
                    right += (picked is None and not r["relevant"]) or picked in r["relevant"]
                cells.append(f"{right}/{len(part)}".rjust(16))
        print(f"{rule} m={m} w={w}".ljust(22) + "".join(cells))
    if args.verbose:
        for name, rows in files.items():
            for r in rows:
                print(name, r["half"], r["relevant"], r.get("greedy"),
                      [c["plugin"] for c in r["candidates"]][:3],
                      [(t, round(lp, 2)) for t, lp in r.get("alternatives", [])][:5])  # fmt: skip



def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("--data")
    rec.add_argument("--ask", action="store_true")
    rec.add_argument("--out", required=True)
    rec.add_argument("--halves", default="tune,report")
    rec.add_argument("--limit", type=int, default=60)
    rec.add_argument("--k", type=int, default=5)
    rec.add_argument("--model", default=DEFAULT.name)
    rec.add_argument("--threads", type=int, default=1)
    sc = sub.add_parser("score")
    sc.add_argument("files", nargs="+")
    sc.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    record(args) if args.command == "record" else score(args)


if __name__ == "__main__":
    main()
