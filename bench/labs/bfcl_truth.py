"""BFCL lab: which right values would grounding refuse?

    python bench/labs/bfcl_truth.py --data ../shared/bench/bfcl --categories simple_python,multiple
    python bench/labs/bfcl_truth.py --data package --categories live_simple,live_multiple,parallel

Grounding (llm/grounding.py) refuses a call whose values the conversation does not
state. This lab asks it about BFCL's own answers instead of a model's: each entry's
ground truth (for each parameter, the first answer BFCL accepts that is not "left
out"), checked against the entry's messages as the flow checks a call. A required
value refused refuses the call; an optional one is left out, which loses the entry
only where BFCL does not accept it left out. Each such value is a right call the flow
could not make, whatever the model: the lab lists them by entry and counts them by
category. No model runs.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bfcl  # bench/bfcl.py

from plugyard.llm.grounding import Evidence, check, described_text


def truth(answers: dict[str, list[Any]]) -> dict[str, Any]:
    """One right call's arguments: each parameter's first accepted answer, or nothing
    when BFCL accepts leaving it out first."""
    out: dict[str, Any] = {}
    for name, accepted in answers.items():
        if accepted and accepted[0] not in ("", None):
            out[name] = accepted[0]
    return out


def said(entry: dict[str, Any]) -> list[str]:
    turns = entry["question"]
    messages = [m for turn in turns for m in (turn if isinstance(turn, list) else [turn])]
    return [str(m.get("content", "")) for m in messages]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True, help='a folder, or "package"')
    parser.add_argument("--categories", default="simple_python,multiple")
    parser.add_argument("--quiet", action="store_true", help="the counts only")
    args = parser.parse_args()
    data = bfcl.package_data() if args.data == "package" else Path(args.data)
    mapping = bfcl._types()
    counts: Counter[str] = Counter()
    for category in args.categories.split(","):
        entries = bfcl.read_jsonl(data / f"BFCL_v4_{category}.json")
        answers = {
            a["id"]: a
            for a in bfcl.read_jsonl(data / "possible_answer" / f"BFCL_v4_{category}.json")
        }
        for entry in entries:
            answer = answers.get(entry["id"])
            if answer is None:
                continue
            offered = bfcl.tools_of(entry["function"], mapping)
            tools = {t["function"]["name"]: t["function"] for t in offered}
            evidence = Evidence.of(said(entry))
            counts[f"{category} entries"] += 1
            refused = []
            for call in answer["ground_truth"]:
                for name, arguments in call.items():
                    tool = tools.get(name.replace(".", "_"), {})
                    schema = tool.get("parameters", {})
                    described = described_text(tool.get("description", ""), [], schema)
                    for u in check(truth(arguments), schema, evidence, described):
                        # A required value refused refuses the call; an optional one
                        # is left out, which is wrong only where BFCL needs it given.
                        needed = "" not in arguments.get(u.name, [""])
                        if u.value is not None and (u.required or needed):
                            kind = "required" if u.required else "optional, needed"
                            refused.append(f"{name}{u.pointer}={u.value!r} ({kind}): {u.reason}")
            if refused:
                counts[f"{category} refused"] += 1
                if not args.quiet:
                    print(f"{entry['id']}: {'; '.join(refused)[:400]}")
    print()
    for category in args.categories.split(","):
        n, r = counts[f"{category} entries"], counts[f"{category} refused"]
        print(f"{category:24} {n:5} entries, a right call refused in {r:4} ({r / max(n, 1):.3f})")


if __name__ == "__main__":
    main()
