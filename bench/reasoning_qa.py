"""Reasoning QA: does ``plugyard reason`` answer the question, and cite what says so?

    bash scripts/bench.sh reasoning_qa                         # the offline plugins
    bash scripts/bench.sh reasoning_qa --model-file FILE.gguf  # and with a model
    bash scripts/bench.sh reasoning_qa --json

66 questions over six short texts written for this benchmark (bench/data/reasoning_qa/,
its README says how they were made): when, where, who, how tall / how much / how many,
yes/no, "answer with a single word", and 11 questions that need two facts. Each line of
``reasoning_qa.jsonl`` holds the expected answer as groups of accepted alternatives (every
group must be answered) and the support the cited evidence must contain. Half the
questions (``split: tune``) were looked at while the plugins were being improved; the
other half (``held``) were not, and both are reported.

Each question is one request through the reasoning service with its text as the turn's
source, the bundled plugins in their default order, nothing pinned:

``answer_ok``
    every group of the expected answer appears in the answer (normalised: case,
    punctuation, thousands separators); a yes/no question's answer must begin with the
    expected word; "answer with a single word" must be answered with one word.
``context_ok``
    the text the answer's citations carry contains every group of the expected support.
``p50_ms``
    median wall-clock time of a request.

Offline the request has no model call to make (budget 0). With ``--model-file`` (or
``PLUGYARD_BENCH_GGUF``) the embedded model is that GGUF file, checked against the digest
of ``--model-sha256`` (Qwen2.5-Coder-0.5B-Instruct Q4_K_M by default) before it loads,
one thread unless ``--threads`` says otherwise, and the request keeps the default budget.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "reasoning_qa"
QUESTIONS = HERE / "data" / "reasoning_qa.jsonl"
#: Qwen2.5-Coder-0.5B-Instruct Q4_K_M, as Qwen publishes it (docs/models.md).
QWEN_05B_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"


@dataclass(frozen=True)
class Case:
    id: str
    split: str
    source: str
    question: str
    answer: list[list[str]]
    support: list[list[str]]


@dataclass(frozen=True)
class Scored:
    case: Case
    answer_ok: bool
    context_ok: bool
    ms: float
    status: str
    answer: str
    cited: str
    solvers: str


def cases(path: Path = QUESTIONS) -> list[Case]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            out.append(Case(**row))
    return out


def norm(text: str) -> str:
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text.lower())
    text = re.sub(r"\[\d+\]", " ", text)
    text = re.sub(r"[^\w.\s]|(?<!\d)\.|\.(?!\d)", " ", text)
    return " ".join(text.split())


def contains(text: str, alternative: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(norm(alternative))}(?!\w)", norm(text)) is not None


def answer_ok(case: Case, answer: str) -> bool:
    if not answer.strip():
        return False
    lowered = case.question.lower()
    words = re.findall(r"[^\W_]+(?:[-'][^\W_]+)*", re.sub(r"\[\d+\]", "", answer))
    if re.search(r"\bsingle word\b|\bone word\b", lowered) and len(words) != 1:
        return False
    for group in case.answer:
        if {a.lower() for a in group} <= {"yes", "no"}:
            if not words or words[0].lower() not in {a.lower() for a in group}:
                return False
        elif not any(contains(answer, a) for a in group):
            return False
    return True


def judged(answer: str | None, document: Any) -> str:
    """What is scored: the solver's answer in brief when it gives one (``answer`` of the
    response document, each part's for a compound question), else the whole answer — so
    a quoted sentence that happens to contain the expected words does not count."""
    if isinstance(document, dict):
        brief = document.get("answer")
        if isinstance(brief, str) and brief.strip():
            return brief
        parts = document.get("subtasks")
        if isinstance(parts, list) and parts:
            return " ; ".join(
                str(p.get("short") or p.get("answer") or "") for p in parts if isinstance(p, dict)
            )
    return answer or ""


def context_ok(case: Case, cited: str) -> bool:
    return all(any(contains(cited, a) for a in group) for group in case.support)


def model_source(args: argparse.Namespace) -> Any:
    if not args.model_file:
        return None
    from plugyard.llm.embedded import EmbeddedChatModel
    from plugyard.llm.pinned import PinnedModel

    path = Path(args.model_file)
    pinned = PinnedModel(
        name=path.stem,
        parts=(),
        sha256=args.model_sha256,
        size=path.stat().st_size,
        licence="see docs/models.md",
    )
    model = EmbeddedChatModel(pinned, path=path, threads=args.threads)
    model.load()  # the digest is checked here, before any question
    return lambda: model


async def run(args: argparse.Namespace, chosen: list[Case]) -> list[Scored]:
    from plugyard.reasoning.service import ReasoningService
    from plugyard.reasoning.store_sql import SqlOutcomeStore, SqlSessionStore
    from plugyard.store.keys import ADMIN_ROLE
    from plugyard.yard import Settings, Yard

    model = model_source(args)
    pins = dict(p.split("=", 1) for p in args.pin)
    texts = {c.source: (DATA / c.source).read_text(encoding="utf-8") for c in chosen}
    out: list[Scored] = []
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(database=str(Path(folder) / "bench.db"), embedder=args.embedder)
        with Yard.from_settings(settings) as yard:
            embedder = yard.finding.discovery.embedder
            service = ReasoningService(
                yard.executor,
                yard.registry,
                SqlSessionStore(yard.store),
                SqlOutcomeStore(yard.store),
                model=model,
                embed=lambda items: embedder.embed(items),
                application_roles=(ADMIN_ROLE,),
            )
            for case in chosen:
                started = time.perf_counter()
                reasoned = await service.reason(
                    case.question,
                    sources={case.source: texts[case.source]},
                    budget=None if model is not None else 0,
                    pins=pins,
                )
                ms = (time.perf_counter() - started) * 1000
                answer = judged(reasoned.answer, reasoned.document)
                cited = " ".join(str(c.get("text") or "") for c in reasoned.citations)
                solvers = ",".join(
                    dict.fromkeys(
                        s.plugin_id
                        for s in reasoned.record.stages
                        if s.stage == "goal-solver" and s.status == "success"
                    )
                )
                out.append(
                    Scored(
                        case,
                        answer_ok(case, answer),
                        context_ok(case, cited),
                        ms,
                        reasoned.status,
                        answer,
                        cited,
                        solvers,
                    )
                )
                if args.verbose:
                    mark = ("A" if out[-1].answer_ok else "-") + (
                        "C" if out[-1].context_ok else "-"
                    )
                    flat = " ".join(answer.split())[:110]
                    print(f"{mark} {case.id} {ms:7.0f} ms {solvers:<24} {flat}", file=sys.stderr)
    return out


def summary(rows: list[Scored]) -> dict[str, Any]:
    if not rows:
        return {"questions": 0}
    return {
        "questions": len(rows),
        "answer_ok": round(sum(r.answer_ok for r in rows) / len(rows), 3),
        "context_ok": round(sum(r.context_ok for r in rows) / len(rows), 3),
        "p50_ms": round(statistics.median(r.ms for r in rows), 1),
        "p95_ms": round(sorted(r.ms for r in rows)[int(0.95 * (len(rows) - 1))], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--model-file",
        default=os.environ.get("PLUGYARD_BENCH_GGUF"),
        help="a GGUF file to run as the embedded model (default: none, offline plugins)",
    )
    parser.add_argument("--model-sha256", default=QWEN_05B_SHA256)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--embedder", default="minilm", help="discovery's embedder (kb-embed)")
    parser.add_argument(
        "--pin", action="append", default=[], metavar="STAGE=PLUGIN",
        help="run STAGE with PLUGIN alone, e.g. planner=plan-static",
    )  # fmt: skip
    parser.add_argument("--split", choices=("tune", "held", "all"), default="all")
    parser.add_argument("--limit", type=int, default=0, help="at most this many questions")
    parser.add_argument("--verbose", action="store_true", help="one line per question")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    chosen = [c for c in cases() if args.split in ("all", c.split)]
    if args.limit:
        chosen = chosen[: args.limit]
    rows = asyncio.run(run(args, chosen))
    table = {
        "tune": summary([r for r in rows if r.case.split == "tune"]),
        "held": summary([r for r in rows if r.case.split == "held"]),
        "all": summary(rows),
    }
    model = Path(args.model_file).name if args.model_file else "none (offline plugins)"
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    if args.json:
        failures = [
            {"id": r.case.id, "question": r.case.question, "answer": r.answer, "cited": r.cited,
             "answer_ok": r.answer_ok, "context_ok": r.context_ok, "solvers": r.solvers}
            for r in rows
            if not (r.answer_ok and r.context_ok)
        ]  # fmt: skip
        print(json.dumps({"model": model, "threads": args.threads, "pins": args.pin, "load": load,
                          "results": table, "failures": failures}, indent=2))  # fmt: skip
        return
    pinned = ", ".join(args.pin) or "nothing pinned"
    print(f"model: {model}, threads {args.threads}, {pinned}, load {' '.join(load)}")
    print(f"{'split':<6} {'n':>3} {'answer_ok':>9} {'context_ok':>10} {'p50_ms':>8} {'p95_ms':>8}")
    for split, found in table.items():
        if found.get("questions"):
            print(
                f"{split:<6} {found['questions']:>3} {found['answer_ok']:>9.3f} "
                f"{found['context_ok']:>10.3f} {found['p50_ms']:>8.1f} {found['p95_ms']:>8.1f}"
            )


if __name__ == "__main__":
    main()
