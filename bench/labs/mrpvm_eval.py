"""Lab: MRP-VM's own evaluation suites through ``plugyard reason``.

    python bench/labs/mrpvm_eval.py CHECKOUT                        # offline plugins
    python bench/labs/mrpvm_eval.py CHECKOUT --model-file FILE.gguf  # with a model
    python bench/labs/mrpvm_eval.py CHECKOUT --json

CHECKOUT is a copy of the MRP-VM repository (``AssistOS-AI/mrp-vm``): a work tree, or its
git directory (read with ``git --git-dir=CHECKOUT show HEAD:…``). Nothing of it is copied
here: the suites (``test/evaluation/suiteNN/eval.json``, each with its ``story.nl``) are
read from the checkout at run time. Not a test and not in CI.

The run follows MRP-VM's runner (its DS021): one session per suite, the story loaded into
it once as a source, every question asked in that session. A question passes when its
answer passes and its context passes, checked as the runner checks them (case-insensitive,
on word boundaries):

- answer: every ``intentMustMention`` term is in one detected intent (or in the answer),
  every ``answerMustMention`` term is in the answer, no ``answerMustNotContain`` term is;
- context: every ``contextMustMention`` term is in the context, no
  ``contextMustNotMention`` term is — the context being the text the answer's citations
  carry, and the answer (the runner adds the assistant message to its context too).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reasoning_qa import QWEN_05B_SHA256, model_source


class Checkout:
    """The MRP-VM files, from a work tree or a git directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.git = not (path / "test" / "evaluation").is_dir()

    def read(self, name: str) -> str:
        if not self.git:
            return (self.path / name).read_text(encoding="utf-8")
        shown = subprocess.run(
            ["git", f"--git-dir={self.path}", "show", f"HEAD:{name}"],
            capture_output=True,
            text=True,
            check=True,
        )
        return shown.stdout

    def suites(self) -> list[str]:
        if not self.git:
            found = (self.path / "test" / "evaluation").glob("suite*/eval.json")
            return sorted(str(p.relative_to(self.path).parent) for p in found)
        listed = subprocess.run(
            ["git", f"--git-dir={self.path}", "ls-tree", "-r", "--name-only", "HEAD",
             "test/evaluation"],
            capture_output=True, text=True, check=True,
        ).stdout.split()  # fmt: skip
        return sorted(str(Path(n).parent) for n in listed if n.endswith("/eval.json"))


def missing(text: str, terms: list[str]) -> list[str]:
    lowered = text.lower()
    return [t for t in terms if not re.search(rf"\b{re.escape(t.lower())}\b", lowered)]


def present(text: str, terms: list[str]) -> list[str]:
    lowered = text.lower()
    return [t for t in terms if re.search(rf"\b{re.escape(t.lower())}\b", lowered)]


def judge(expected: dict[str, Any], intents: list[str], answer: str, cited: str) -> list[str]:
    """The failed checks, each as MRP-VM's runner words them; empty when it passes."""
    failures: list[str] = []
    for wanted in expected.get("intents") or []:
        terms = wanted.get("intentMustMention") or []
        matched = any(all(t.lower() in i.lower() for t in terms) for i in intents)
        if terms and not matched and not all(t.lower() in answer.lower() for t in terms):
            failures.append(f"intent: no matching intent group found ({', '.join(terms)})")
    context = f"{cited} {answer}"
    snippet = " ".join(context.split())[:150]
    lost = missing(context, expected.get("contextMustMention") or [])
    if lost:
        failures.append(f"ctx-recall: missing from context: {', '.join(lost)} — got: {snippet}")
    unwanted = present(context, expected.get("contextMustNotMention") or [])
    if unwanted:
        failures.append(f"ctx-precision: unwanted in context: {', '.join(unwanted)}")
    said = " ".join(answer.split())[:150]
    lost = missing(answer, expected.get("answerMustMention") or [])
    if lost:
        failures.append(f"answer: missing from answer: {', '.join(lost)} — got: {said}")
    noise = present(answer, expected.get("answerMustNotContain") or [])
    if noise:
        failures.append(f"answer-noise: unwanted in answer: {', '.join(noise)} — got: {said}")
    return failures


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    from plugyard.reasoning.service import ReasoningService
    from plugyard.reasoning.sop import admit
    from plugyard.reasoning.store_sql import SqlOutcomeStore, SqlSessionStore
    from plugyard.store.keys import ADMIN_ROLE
    from plugyard.yard import Settings, Yard

    checkout = Checkout(Path(args.checkout))
    model = model_source(args)
    pins = dict(p.split("=", 1) for p in args.pin)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(database=str(Path(folder) / "lab.db"), embedder=args.embedder)
        with Yard.from_settings(settings) as yard:
            embedder = yard.finding.discovery.embedder
            service = ReasoningService(
                yard.executor, yard.registry,
                SqlSessionStore(yard.store), SqlOutcomeStore(yard.store),
                model=model, embed=lambda items: embedder.embed(items),
                application_roles=(ADMIN_ROLE,),
            )  # fmt: skip
            for suite in checkout.suites():
                spec = json.loads(checkout.read(f"{suite}/eval.json"))
                story = checkout.read(f"{suite}/{spec.get('storyFile') or 'story.nl'}")
                session = await service.create_session()
                await service.add_source(session.id, "story.nl", story)
                for question in spec["questions"]:
                    seeds = await yard.call(
                        "sd-rules", "detect_seeds", {"prompt": question["input"]}
                    )
                    data = seeds.data if isinstance(seeds.data, dict) else {}
                    intents = [
                        str(i.get("text")) for i in admit(data.get("intentCNL"), None).intents
                    ]
                    started = time.perf_counter()
                    reasoned = await service.reason(
                        question["input"],
                        session=session.id,
                        pins=pins,
                        budget=None if model is not None else 0,
                    )
                    ms = (time.perf_counter() - started) * 1000
                    answer = reasoned.answer or ""
                    cited = " ".join(str(c.get("text") or "") for c in reasoned.citations)
                    failures = judge(question["expected"], intents, answer, cited)
                    if reasoned.error is not None:
                        failures.insert(0, f"api: {reasoned.error.code}: {reasoned.error.message}")
                    context_failed = any(f.startswith("ctx-") for f in failures)
                    solvers = [s.plugin_id for s in reasoned.record.stages
                               if s.stage == "goal-solver" and s.status == "success"]  # fmt: skip
                    rows.append({
                        "suite": spec.get("suiteId"), "id": question["id"],
                        "pass": not failures, "context_ok": not context_failed,
                        "status": reasoned.status, "ms": round(ms), "solvers": solvers,
                        "answer": answer, "failures": failures,
                    })  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description="MRP-VM's evaluation suites, through plugyard")
    parser.add_argument("checkout", help="the MRP-VM checkout (work tree or git directory)")
    parser.add_argument("--model-file", help="a GGUF file to run as the embedded model")
    parser.add_argument("--model-sha256", default=QWEN_05B_SHA256)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--pin", action="append", default=[], metavar="STAGE=PLUGIN")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = asyncio.run(run(args))
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    for row in rows:
        mark = "pass" if row["pass"] else "FAIL"
        print(f"{mark} {row['id']:<8} {row['ms']:>7} ms  {','.join(row['solvers']) or '-'}")
        for failure in row["failures"]:
            print(f"       {failure}")
    passed = sum(r["pass"] for r in rows)
    context = sum(r["context_ok"] for r in rows)
    print(f"passed {passed} of {len(rows)}; context right for {context} of {len(rows)}")


if __name__ == "__main__":
    main()
