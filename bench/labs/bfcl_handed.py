"""BFCL lab: the client's calls handed back in the form a yard call is made.

    python bench/bfcl.py --data ../shared/bench/bfcl --limit 30 --half report \
        --irrelevance 20 -v 2> run.log
    python bench/labs/bfcl_handed.py --data ../shared/bench/bfcl --log run.log \
        --limit 30 --half report --irrelevance 20

The routing loop puts a yard call's arguments in the form the tool's schema asks for
before it calls (llm/grounding.normalise: a respelled word, a time of day, an enum's
symbol, a quoted text as written) and leaves out the optional values nobody stated.
This lab replays that on the calls a ``bench/bfcl.py -v`` run handed back as the model
wrote them, and scores both with BFCL's checker: which verdicts the same treatment of
a client's calls would change. Normalising comes after the model, so the replay is
exact for every entry that came back as calls.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bfcl  # bench/bfcl.py
from bfcl_grounding import LINE, entries, run_parser, said

from plugyard.llm.grounding import Evidence, check, normalise


def handed(entry: dict[str, Any], calls: list[dict[str, Any]], mapping: Any) -> list[Any]:
    offered = bfcl.tools_of(entry["function"], mapping)
    tools = {t["function"]["name"]: t["function"] for t in offered}
    texts = said(entry)
    evidence = Evidence.of(texts)
    out = []
    for call in calls:
        for name, arguments in call.items():
            schema = tools.get(name, {}).get("parameters", {})
            normal = normalise(arguments, schema, texts)
            gone = {u.name for u in check(normal, schema, evidence) if not u.required}
            out.append({name: {k: v for k, v in normal.items() if k not in gone}})
    return out


def main() -> None:
    args = run_parser().parse_args()
    known = entries(args)
    check_ast, mapping = bfcl._checker(), bfcl._types()
    data = Path(args.data)
    answers: dict[str, Any] = {}
    for category in ("simple_python", "multiple"):
        for a in bfcl.read_jsonl(data / "possible_answer" / f"BFCL_v4_{category}.json"):
            answers[a["id"]] = a
    before = after = 0
    for line in Path(args.log).read_text().splitlines():
        match = LINE.match(line)
        if match is None or match.group(1) not in known:
            continue
        ident, verdict, _, shown = match.groups()
        ok = verdict == "ok"
        before += ok
        try:
            calls = ast.literal_eval(shown)
        except (ValueError, SyntaxError):
            after += ok  # a text answer: nothing to hand back
            continue
        if not isinstance(calls, list) or ident.startswith("irrelevance"):
            after += ok
            continue
        entry = known[ident]
        category = ident.rsplit("_", 1)[0]
        new = handed(entry, calls, mapping)
        functions = entry.get("checked", entry["function"])
        now = bool(check_ast(functions, new, answers[ident]["ground_truth"], category)["valid"])
        after += now
        if now != ok or new != calls:
            print(f"{ident} {'ok' if ok else 'WRONG'} → {'ok' if now else 'WRONG'}: "
                  f"{calls} → {new}")  # fmt: skip
    print(f"\nright as the model wrote them: {before}; as a yard call is made: {after}")


if __name__ == "__main__":
    main()
