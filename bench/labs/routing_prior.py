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

``score`` replays rules over the records without the model, per file and half: the
model's own choice, retrieval's first, and ``respond``'s choice with retrieval's first
favoured for a grid of ``FAVOURED_MARGIN`` values. ``record --bare`` shows the tools
without their parameters (bench/labs/ASK_LAB.md, "Names and descriptions only in the
choice step"); each record keeps the choice's prompt tokens and time. Only the first token's
alternatives are recorded, so two names that begin alike are left to the model here.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from plugyard.discovery.query import allow_all
from plugyard.llm import ChatAnswer, ChatRequest, Message, Usage, calls
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
from plugyard.llm.types import TokenLogprob
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
        half = "tune" if i % 2 == 0 else "report"
        out.append({"query": r.text, "relevant": [r.plugin] if r.plugin else [], "half": half})
    return out


async def _choose(
    model: Any, yard: Yard, query: str, k: int, ask: bool, bare: bool = False
) -> dict[str, Any]:
    candidates = await asyncio.to_thread(retrieve, yard.search, query, k, allow_all)
    if not candidates:
        return {"candidates": []}
    offer = Offer.of(candidates)
    tools = [Tool.of(t) for t in offer.tools]
    if bare:  # the catalog as names and descriptions only
        tools = [Tool(t.name, t.description, {}) for t in tools]
    names = [t.name for t in tools]
    none = _none_choice(names)
    messages = [Message("system", TOOL_DATA_NOTE)] if ask else []
    messages.append(Message("user", query))
    request = ChatRequest(tuple(messages), max_tokens=256, deadline_s=900.0)
    prompt = _prompt(request.messages, tools)
    choose = dataclasses.replace(
        _step(
            request,
            (*prompt, Message("system", _CHOOSE.replace('"none"', json.dumps(none)))),
            schema=_choice_schema([*names, none]),
            max_tokens=CHOOSE_TOKENS,
            deadline=time.perf_counter() + 900.0,
        ),
        top_logprobs=CHOICE_LOGPROBS,
    )
    began = time.perf_counter()
    answer = await model.chat(choose)
    spent_ms = round((time.perf_counter() - began) * 1000)
    start = _value_start(answer)
    alternatives = [[a.token, a.logprob] for a in answer.top_logprobs[start[0]]] if start else []
    return {
        "candidates": [
            {
                "name": n,
                "plugin": offer.by_name[n].plugin_id,
                "operation": offer.by_name[n].operation.id,
                "score": offer.by_name[n].score,
            }
            for n in names
        ],
        "none": none,
        "greedy": answer.json.get("tool") if isinstance(answer.json, dict) else None,
        "alternatives": alternatives,
        "prompt_tokens": answer.usage.prompt_tokens,
        "ms": spent_ms,
    }


def record(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        if args.ask:
            settings = Settings(
                database=str(Path(tmp) / "lab.db"), governed=False, embedder="minilm"
            )
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
                got = asyncio.run(_choose(model, yard, q["query"], args.k, args.ask, args.bare))
                out.write(json.dumps({**q, **got}) + "\n")
                out.flush()
                print(i, q["query"][:60], got.get("greedy"), file=sys.stderr)


# ------------------------------------------------------------------ scoring


def _answer(row: dict[str, Any]) -> ChatAnswer:
    """The recorded choice as a server's answer: the value's first token's alternatives."""
    head = '{"tool": "'
    steps = (
        (TokenLogprob(head, 0.0),),
        tuple(TokenLogprob(t, lp) for t, lp in row["alternatives"]),
    )
    text = head + str(row.get("greedy")) + '"}'
    return ChatAnswer(text, "stop", Usage(0, 0), 0.0, "lab", top_logprobs=steps)


def decide(row: dict[str, Any], rule: str, margin: float = 0.0) -> str | None:
    """The plugin a rule picks for one record, ``None`` for none: ``oracle`` (right
    whenever a right candidate was offered), ``model`` (its greedy choice),
    ``retrieval`` (the first candidate), ``product`` (``respond(favoured=first)``
    with ``margin`` as ``FAVOURED_MARGIN``) or ``lead`` (the same, with
    :data:`FULL_MARGIN` scaled by retrieval's lead over ``margin``, the lead at which
    it is reached)."""
    cands = row["candidates"]
    if not cands:
        return None
    by_name = {c["name"]: c for c in cands}
    greedy = row.get("greedy")
    first = cands[0]["name"]
    if rule == "oracle":
        right = [c["plugin"] for c in cands if c["plugin"] in row["relevant"]]
        return right[0] if right else (None if not row["relevant"] else cands[0]["plugin"])
    if rule == "retrieval":
        return str(cands[0]["plugin"])
    chosen = greedy if greedy in by_name else None
    if rule == "model" or not row["alternatives"]:
        return by_name[chosen]["plugin"] if chosen else None
    if rule == "lead":  # the margin scaled by retrieval's lead over another plugin
        margin = FULL_MARGIN * min(1.0, _lead(cands) / margin) if margin > 0 else FULL_MARGIN
    saved, calls.FAVOURED_MARGIN = calls.FAVOURED_MARGIN, margin
    try:
        chosen = calls._weighed(_answer(row), chosen, row["none"], first)
    finally:
        calls.FAVOURED_MARGIN = saved
    return by_name[chosen]["plugin"] if chosen else None


#: The product's margin, which ``lead L`` reaches when retrieval's first leads by L.
FULL_MARGIN = 2.0


def _lead(cands: list[dict[str, Any]]) -> float:
    """How far retrieval's first scores above the best candidate of another plugin
    (infinite when every candidate is of the first's plugin)."""
    first = cands[0]
    others = [c["score"] for c in cands[1:] if c["plugin"] != first["plugin"]]
    return first["score"] - max(others) if others else float("inf")


def score(args: argparse.Namespace) -> None:
    rules = [("oracle", 0.0), ("model", 0.0), ("retrieval", 0.0)]
    rules += [("product", m) for m in (0.5, 1.0, 1.5, 2.0, 3.0, 5.0)]
    rules += [("lead", m) for m in (0.1, 0.25, 0.5, 1.0, 2.0)]
    files = {}
    for name in args.files:
        with open(name) as lines:
            files[Path(name).stem] = [json.loads(line) for line in lines]
    columns = [f"{name}:{half}" for name in files for half in ("tune", "report")]
    print("rule".ljust(16) + "".join(c.rjust(14) for c in columns))
    for rule, margin in rules:
        cells = []
        for rows in files.values():
            for half in ("tune", "report"):
                part = [r for r in rows if r["half"] == half]
                right = 0
                for r in part:
                    picked = decide(r, rule, margin)
                    right += (picked is None and not r["relevant"]) or picked in r["relevant"]
                cells.append(f"{right}/{len(part)}".rjust(14))
        print(f"{rule} {margin:g}".ljust(16) + "".join(cells))


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
    rec.add_argument("--bare", action="store_true", help="tools without their parameters")
    sc = sub.add_parser("score")
    sc.add_argument("files", nargs="+")
    args = parser.parse_args()
    record(args) if args.command == "record" else score(args)


if __name__ == "__main__":
    main()
