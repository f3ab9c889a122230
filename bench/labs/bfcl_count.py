"""How many calls does a request need? The choice step's ``calls`` field, recorded once
per entry with its alternatives, scored against the number of calls in BFCL's answer.

    python bench/labs/bfcl_count.py record --data package --limit 20 --half tune \
        --categories simple_python,multiple,parallel,parallel_multiple --out /tmp/count.jsonl
    python bench/labs/bfcl_count.py record ... --wording several --out /tmp/count_b.jsonl
    python bench/labs/bfcl_count.py score /tmp/count.jsonl
    python bench/bfcl.py --data package --categories parallel -v 2> /tmp/run.log
    python bench/labs/bfcl_count.py surplus /tmp/run.log
    python bench/labs/bfcl_count.py tidy /tmp/run.log

The alternatives are read as ``plugyard.llm.calls`` reads them (counts 1 to 8).
``--wording`` picks the choice instruction (``as_is``: the code's own). ``score`` prints,
per category, how often the written count is right, and how often the count read from
the alternatives would be under a few rules. ``surplus`` replays the surplus check
(``plugyard.llm.calls._surplus_dropped``) over every answer of two or more calls that a
``bench/bfcl.py -v`` run printed, as if the model had written one call, and prints the
answers it would shorten with the checker's verdict: no model needed. ``tidy`` tidies
every logged answer again with today's ``calls.tidy`` and prints the answers it changes
with the checker's new verdict.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import math
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bfcl import _types, package_data, pick, prepared, read_jsonl, record_arguments, tools_of

from plugyard.llm import ChatRequest, Message, ToolCall, llm_from_spec
from plugyard.llm import calls as calls_module

#: The categories whose answers are calls (no executable backend, no memory).
SINGLE_TURN = ("simple_python", "multiple", "parallel", "parallel_multiple", "live_simple",
               "live_multiple", "live_parallel", "live_parallel_multiple", "simple_java",
               "simple_javascript")  # fmt: skip

WORDINGS = {
    "as_is": None,
    "several": (
        "Decide whether one of the functions serves the user's last request. Answer with "
        'JSON: {"tool": "<function name>", "calls": <how many calls>} to call it, or '
        '{"tool": "none", "calls": 0} when none of the functions does what the user asks '
        "(then you will answer in words). The request needs one call for each separate "
        "thing it asks for: each item, place, person, value or set of values it names."
    ),
}


def choice_step(entry: dict[str, Any], mapping: dict[str, str], wording: str | None = None
                ) -> tuple[ChatRequest, list[calls_module.Tool], str]:  # fmt: skip
    """The choice step ``plugyard.llm.calls.respond`` sends for ``entry`` (``wording``: its
    instruction in other words), with the alternatives of each token; and the entry's
    functions and the name that means none."""
    tools = [calls_module.Tool.of(t) for t in tools_of(entry["function"], mapping)]
    names = [t.name for t in tools]
    none = calls_module._none_choice(names)
    messages = tuple(Message(m["role"], m["content"]) for m in entry["question"][0])
    instruction = (wording or calls_module._CHOOSE).replace('"none"', json.dumps(none))
    request = ChatRequest(
        (*calls_module._prompt(messages, tools), Message("system", instruction)),
        json_schema=calls_module._choice_schema([*names, none]),
        schema_name="tool_choice",
        max_tokens=calls_module.CHOOSE_TOKENS,
        deadline_s=600,
        top_logprobs=calls_module.CHOICE_LOGPROBS,
        lenient=True,
    )
    return request, tools, none


async def _record(args: argparse.Namespace) -> None:
    model = llm_from_spec(args.llm)
    mapping = _types()
    data = package_data() if args.data == "package" else Path(args.data)
    wording = WORDINGS[args.wording]
    with Path(args.out).open("w") as out:
        await _each(args, model, mapping, data, wording, out)


async def _each(args: argparse.Namespace, model: Any, mapping: dict[str, str], data: Path,
                wording: str | None, out: Any) -> None:  # fmt: skip
    for category in args.categories.split(","):
        entries = prepared(read_jsonl(data / f"BFCL_v4_{category}.json"), category)
        truth = {
            a["id"]: a["ground_truth"]
            for a in read_jsonl(data / "possible_answer" / f"BFCL_v4_{category}.json")
        }
        for entry in pick(entries, args.half, args.limit):
            request, _, _ = choice_step(entry, mapping, wording)
            try:
                answer = await model.chat(request)
            except Exception as exc:  # a lab records what failed
                row = {"id": entry["id"], "category": category, "error": str(exc)[:200]}
            else:
                row = {
                    "id": entry["id"],
                    "category": category,
                    "want": len(truth[entry["id"]]),
                    "text": answer.text,
                    "alternatives": calls_module._count_alternatives(answer),
                    "prompt_tokens": answer.usage.prompt_tokens,
                }
            out.write(json.dumps(row) + "\n")
            out.flush()
            shown = row.get("text", row.get("error"))
            print(row.get("id"), row.get("want"), shown, file=sys.stderr)


def _written(row: dict[str, Any]) -> int:
    try:
        value = json.loads(row["text"]).get("calls", 1)
    except (ValueError, AttributeError):
        return 1
    return value if isinstance(value, int) and value >= 1 else 1


def _counts(row: dict[str, Any]) -> dict[int, float]:
    # records written before the reader moved into plugyard hold every alternative
    found = row["alternatives"].items()
    return {int(k): v for k, v in found if k.isascii() and k.isdigit() and 1 <= int(k) <= 8}


def _expected(row: dict[str, Any]) -> float:
    """The count's mean under the alternatives (counts ≥ 1)."""
    probs = {k: math.exp(v) for k, v in _counts(row).items()}
    total = sum(probs.values())
    return sum(k * p for k, p in probs.items()) / total if total else 1.0


def _more_than_one(row: dict[str, Any], margin: float) -> int:
    """The likeliest count above one when its log-probability is within ``margin`` of
    one's, else the written count."""
    alts = _counts(row)
    if not alts:
        return _written(row)
    one = alts.get(1, -math.inf)
    many = max(((v, k) for k, v in alts.items() if k > 1), default=(-math.inf, 1))
    return many[1] if many[0] >= one - margin else 1


def _score(args: argparse.Namespace) -> None:
    rows = [json.loads(line) for line in Path(args.file).read_text().splitlines() if line]
    rules = {
        "written": _written,
        "mean≥1.5": lambda r: max(1, round(_expected(r))) if _expected(r) >= 1.5 else 1,
        **{f"many within {m}": (lambda r, m=m: _more_than_one(r, m)) for m in (0.5, 1, 2, 3)},
    }
    table: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        if "want" not in row:
            continue
        for name, rule in rules.items():
            table[row["category"]][name].append(int(rule(row) == row["want"]))
    print(f"{'category':<22}" + "".join(f"{n:>16}" for n in rules))
    for category, by_rule in table.items():
        print(f"{category:<22}" + "".join(
            f"{sum(v)}/{len(v):<13}" for v in (by_rule[n] for n in rules)))  # fmt: skip


def _surplus(args: argparse.Namespace) -> None:
    mapping, data = _types(), package_data()
    entries: dict[str, dict[str, Any]] = {}
    for category in SINGLE_TURN:
        for entry in prepared(read_jsonl(data / f"BFCL_v4_{category}.json"), category):
            entries[entry["id"]] = entry
    printed = re.compile(r"(\S+) (ok|WRONG) \d+ms (\[\{.*)")
    for log in args.logs:
        for line in Path(log).read_text().splitlines():
            found = printed.match(line)
            if found is None or found.group(1) not in entries:
                continue
            calls = [ToolCall(*next(iter(c.items()))) for c in ast.literal_eval(found.group(3))]
            if len(calls) < 2:
                continue
            entry = entries[found.group(1)]
            tools = [calls_module.Tool.of(t) for t in tools_of(entry["function"], mapping)]
            said = calls_module._said(
                tuple(Message(m["role"], m["content"]) for m in entry["question"][0])
            )
            kept = calls_module._surplus_dropped(calls, 1, tools, said)
            if len(kept) != len(calls):
                print(log, found.group(1), found.group(2), f"{len(calls)} -> {len(kept)} calls")


def _tidy(args: argparse.Namespace) -> None:
    """The logged answers tidied again by today's ``calls.tidy``, rescored by BFCL's
    checker: the verdicts that change."""
    from bfcl import _checker

    check, mapping, data = _checker(), _types(), package_data()
    entries: dict[str, tuple[str, dict[str, Any]]] = {}
    answers: dict[str, Any] = {}
    for category in SINGLE_TURN:
        for entry in prepared(read_jsonl(data / f"BFCL_v4_{category}.json"), category):
            entries[entry["id"]] = (category, entry)
        truth = data / "possible_answer" / f"BFCL_v4_{category}.json"
        answers.update({a["id"]: a["ground_truth"] for a in read_jsonl(truth)})
    printed = re.compile(r"(\S+) (ok|WRONG) \d+ms (\[\{.*)")
    changed = seen = 0
    for log in args.logs:
        for line in Path(log).read_text().splitlines():
            found = printed.match(line)
            if found is None or found.group(1) not in entries:
                continue
            category, entry = entries[found.group(1)]
            calls = [ToolCall(*next(iter(c.items()))) for c in ast.literal_eval(found.group(3))]
            tools = [calls_module.Tool.of(t) for t in tools_of(entry["function"], mapping)]
            said = calls_module._said(
                tuple(Message(m["role"], m["content"]) for m in entry["question"][0])
            )
            tidied = calls_module._tidied(calls, tools, said)
            seen += 1
            if tidied == tuple(calls):
                continue
            output = [{c.name: dict(c.arguments)} for c in tidied]
            functions = entry.get("checked", entry["function"])
            valid = check(functions, output, answers[entry["id"]], category)["valid"]
            changed += 1
            print(found.group(1), found.group(2), "->", "ok" if valid else "WRONG", output)
    print(f"{changed} of {seen} logged answers tidied differently")


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    record = sub.add_parser("record")
    record_arguments(record, "simple_python,multiple,parallel,parallel_multiple", 20)
    record.add_argument("--wording", choices=tuple(WORDINGS), default="as_is")
    score = sub.add_parser("score")
    score.add_argument("file")
    surplus = sub.add_parser("surplus")
    surplus.add_argument("logs", nargs="+", help="stderr of bench/bfcl.py -v runs")
    tidy = sub.add_parser("tidy")
    tidy.add_argument("logs", nargs="+", help="stderr of bench/bfcl.py -v runs")
    args = parser.parse_args()
    if args.command == "record":
        asyncio.run(_record(args))
    elif args.command == "surplus":
        _surplus(args)
    elif args.command == "tidy":
        _tidy(args)
    else:
        _score(args)


if __name__ == "__main__":
    main()
