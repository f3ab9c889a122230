"""Lab (bench/labs/BFCL_LAB.md): does the choice's own probability of "none" tell a
BFCL request its functions serve from one they do not? Runs only the choice step of
``plugyard.llm.calls.respond`` (the same prompt and schema, with the alternatives of each
generated token) on entries of one half, and prints per entry the tool written and
log P(none) − log P(chosen) at the token where the choice's value begins, then the share
right for each margin threshold.

    python bench/labs/bfcl_choice.py --data ../shared/bench/bfcl -n 20 --half tune
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bfcl

from plugyard.llm import ChatRequest, Message
from plugyard.llm.calls import (
    _CHOOSE,
    CHOICE_LOGPROBS,
    CHOOSE_TOKENS,
    NONE,
    Tool,
    _choice_schema,
    _chosen,
    _margin,
    _prompt,
)
from plugyard.llm.embedded import EmbeddedChatModel
from plugyard.llm.pinned import CATALOG, DEFAULT


async def choose(model: EmbeddedChatModel, entry: dict[str, Any]) -> tuple[str, float, str]:
    tools = [Tool.of(t) for t in bfcl.tools_of(entry["function"], bfcl._types())]
    names = [t.name for t in tools]
    messages = tuple(Message(m["role"], m["content"]) for m in entry["question"][0])
    request = ChatRequest(
        (*_prompt(messages, tools), Message("system", _CHOOSE)),
        json_schema=_choice_schema([*names, NONE]),
        schema_name="tool_choice",
        max_tokens=CHOOSE_TOKENS,
        top_logprobs=CHOICE_LOGPROBS,
        lenient=True,
        deadline_s=900.0,  # a loaded machine, and the first call loads the model
    )
    answer = await model.chat(request)
    chosen = _chosen(answer, names, NONE)
    if not isinstance(chosen, str):
        return (NONE if chosen is None else "calls"), math.inf, answer.text
    margin = _margin(answer, NONE, chosen)  # None: the alternatives cannot tell them apart
    return chosen, -math.inf if margin is None else margin, answer.text


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("-n", type=int, default=20)
    parser.add_argument("--half", default="tune")
    parser.add_argument("--model", default=DEFAULT.name)
    parser.add_argument("--kinds", default="irrelevant,multiple,simple")
    parser.add_argument("--ids", default="", help="only these entries (a failure's diagnosis)")
    args = parser.parse_args()
    data = Path(args.data)
    simple = bfcl.read_jsonl(data / "BFCL_v4_simple_python.json")
    multiple = bfcl.read_jsonl(data / "BFCL_v4_multiple.json")
    sets = {
        "simple": bfcl.pick(simple, args.half, args.n),
        "multiple": bfcl.pick(multiple, args.half, args.n),
        "irrelevant": bfcl.irrelevant(bfcl.pick(simple, args.half, None), args.n),
    }
    sets = {kind: sets[kind] for kind in args.kinds.split(",")}
    if args.ids:
        wanted = set(args.ids.split(","))
        sets = {kind: [e for e in entries if e["id"] in wanted] for kind, entries in sets.items()}
    model = EmbeddedChatModel(CATALOG[args.model], threads=1)
    rows = []
    for kind, entries in sets.items():
        for entry in entries:
            chosen, margin, text = await choose(model, entry)
            rows.append((kind, chosen, margin))
            print(json.dumps({"kind": kind, "id": entry["id"], "chosen": chosen,
                              "margin": round(margin, 3), "text": text}), flush=True)  # fmt: skip
    for threshold in (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0):
        relevant = [r for r in rows if r[0] != "irrelevant"]
        irrelevant = [r for r in rows if r[0] == "irrelevant"]
        kept = sum(r[1] != NONE and r[2] < -threshold for r in relevant)
        refused = sum(r[1] == NONE or r[2] >= -threshold for r in irrelevant)
        print(f"threshold {threshold}: relevant kept a tool {kept}/{len(relevant)}, "
              f"irrelevant chose none {refused}/{len(irrelevant)}")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
