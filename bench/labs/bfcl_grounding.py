"""BFCL lab: would grounding tell an invented call from a real one?

    python bench/bfcl.py --data ../shared/bench/bfcl --limit 30 --half report \
        --irrelevance 20 -v 2> run.log
    python bench/labs/bfcl_grounding.py --data ../shared/bench/bfcl --log run.log \
        --limit 30 --half report --irrelevance 20

The endpoint hands a client's tool calls back as the model wrote them. For a yard tool,
the routing flow first checks each argument against the request (llm/grounding.py)
and refuses a call whose values the user never stated. This lab replays that check,
without the model, over the calls a ``bench/bfcl.py -v`` run printed (one line per
entry: ``<id> ok|WRONG <ms> <calls>``). It counts the calls that would be refused:
on relevant entries, right calls lost; on the irrelevance entries, invented calls
caught (there a text answer is right). Pass the same ``--limit``, ``--half`` and
``--irrelevance`` as the run, so that the entries are rebuilt the same way.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bfcl  # bench/bfcl.py

from plugyard.llm.grounding import Evidence, check

LINE = re.compile(r"^(\S+) (ok|WRONG) (\d+)ms (.*)$")


def entries(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    data = Path(args.data)
    out: dict[str, dict[str, Any]] = {}
    for category in ("simple_python", "multiple"):
        rows = bfcl.read_jsonl(data / f"BFCL_v4_{category}.json")
        for entry in bfcl.pick(rows, args.half, args.limit):
            out[entry["id"]] = entry
    simple = bfcl.read_jsonl(data / "BFCL_v4_simple_python.json")
    for entry in bfcl.irrelevant(bfcl.pick(simple, args.half, None), args.irrelevance):
        out[entry["id"]] = entry
    return out


def said(entry: dict[str, Any]) -> list[str]:
    turns = entry["question"]
    messages = [m for turn in turns for m in (turn if isinstance(turn, list) else [turn])]
    return [str(m.get("content", "")) for m in messages if m.get("role") == "user"]


def ungrounded(entry: dict[str, Any], calls: list[dict[str, Any]], mapping: Any) -> list[str]:
    offered = bfcl.tools_of(entry["function"], mapping)
    tools = {t["function"]["name"]: t["function"] for t in offered}
    evidence = Evidence.of(said(entry))
    found = []
    for call in calls:
        for name, arguments in call.items():
            schema = tools.get(name, {}).get("parameters", {})
            for miss in check(arguments, schema, evidence):
                if miss.value is not None:  # a missing argument is the checker's business
                    kind = "required" if miss.required else "optional"
                    found.append(f"{name}{miss.pointer}={miss.value!r} ({kind})")
    return found


def run_parser() -> argparse.ArgumentParser:
    """The options that name a ``bench/bfcl.py -v`` run and its log."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--limit", type=int, default=30)
    parser.add_argument("--half", default="report")
    parser.add_argument("--irrelevance", type=int, default=20)
    return parser


def main() -> None:
    parser = run_parser()
    parser.add_argument("--required-only", action="store_true")
    args = parser.parse_args()
    known = entries(args)
    mapping = bfcl._types()
    tally: dict[str, dict[str, int]] = {}
    for line in Path(args.log).read_text().splitlines():
        match = LINE.match(line)
        if match is None or match.group(1) not in known:
            continue
        ident, verdict, _, shown = match.groups()
        kind = "irrelevance" if ident.startswith("irrelevance") else ident.rsplit("_", 1)[0]
        row = tally.setdefault(kind, {"entries": 0, "ok": 0, "calls": 0, "refused": 0,
                                      "ok_refused": 0})  # fmt: skip
        row["entries"] += 1
        row["ok"] += verdict == "ok"
        try:
            calls = ast.literal_eval(shown)
        except (ValueError, SyntaxError):
            continue  # a text answer
        if not isinstance(calls, list):
            continue
        row["calls"] += 1
        misses = ungrounded(known[ident], calls, mapping)
        if args.required_only:
            misses = [m for m in misses if m.endswith("(required)")]
        if misses:
            row["refused"] += 1
            row["ok_refused"] += verdict == "ok"
            print(f"{ident} {verdict}: {'; '.join(misses)[:300]}")
    print()
    print(f"{'set':14}{'entries':>8}{'right':>7}{'calls':>7}{'refused':>9}{'right refused':>15}")
    for kind, row in tally.items():
        print(f"{kind:14}{row['entries']:>8}{row['ok']:>7}{row['calls']:>7}{row['refused']:>9}"
              f"{row['ok_refused']:>15}")  # fmt: skip


if __name__ == "__main__":
    main()
