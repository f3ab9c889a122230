"""Lab (bench/labs/BFCL_LAB.md): does a yes/no question after the choice tell a BFCL
request its function serves from one it does not? Prints, per entry, log P(yes) minus
log P(no) of the first answer token, for N relevant entries and N built irrelevant ones
(bench/bfcl.py ``--irrelevance``), on the tuning half.

    python bench/labs/bfcl_relevance.py --data ../shared/bench/bfcl -n 8 \
        --question "Does the function {name} ({description}) do what the user asks? \
Answer yes or no."
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bfcl

from plugyard.llm import ChatRequest, Message
from plugyard.llm.calls import Tool, _prompt
from plugyard.llm.embedded import EmbeddedChatModel
from plugyard.llm.pinned import DEFAULT


async def margin(model: EmbeddedChatModel, entry: dict[str, Any], question: str) -> float:
    tools = [Tool.of(t) for t in bfcl.tools_of(entry["function"], bfcl._types())]
    messages = tuple(Message(m["role"], m["content"]) for m in entry["question"][0])
    asked = question.format(name=tools[0].name, description=tools[0].description)
    request = ChatRequest(
        (*_prompt(messages, tools), Message("system", asked)), max_tokens=1, top_logprobs=20
    )
    answer = await model.chat(request)
    alternatives = {t.token.strip().lower(): t.logprob for t in answer.top_logprobs[0]}
    return alternatives.get("yes", -30.0) - alternatives.get("no", -30.0)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("-n", type=int, default=8)
    parser.add_argument("--question", default="Does {name} do what the user asks? Yes or no.")
    args = parser.parse_args()
    data = Path(args.data)
    simple = bfcl.pick(bfcl.read_jsonl(data / "BFCL_v4_simple_python.json"), "tune", None)
    model = EmbeddedChatModel(DEFAULT)
    right = 0
    for kind, entries in (
        ("relevant", simple[: args.n]),
        ("irrelevant", bfcl.irrelevant(simple, args.n)),
    ):
        for entry in entries:
            value = await margin(model, entry, args.question)
            right += (value > 0) == (kind == "relevant")
            print(kind, entry["id"], f"{value:+.2f}", flush=True)
    print(f"separated {right}/{2 * args.n}")


if __name__ == "__main__":
    asyncio.run(main())
