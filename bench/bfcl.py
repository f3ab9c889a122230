"""BFCL through the OpenAI-compatible endpoint: each entry's question is sent to
``POST /v1/chat/completions`` of a yard served on loopback, with the official ``openai``
client and the entry's functions as the client's own tools, and the calls that come back
(``message.tool_calls``) are scored by BFCL's own AST checker (the ``bfcl-eval``
package: ``pip install --no-deps "bfcl-eval==2026.3.23"``; its own requirements pull
torch and a dozen vendor SDKs the checker never imports).

    python bench/bfcl.py --data ../shared/bench/bfcl
    python bench/bfcl.py --data DIR --categories simple_python,multiple --limit 60 --half tune
    python bench/bfcl.py --data DIR --irrelevance 60 --llm embedded:quality --json
    python bench/bfcl.py --data package --categories parallel,live_simple,simple_java --limit 20

``--data package`` reads the categories ``bfcl-eval`` ships (all of BFCL v4's single-turn
ones: ``parallel``, ``parallel_multiple``, ``irrelevance``, ``live_simple``,
``live_multiple``, ``live_parallel``, ``live_parallel_multiple``, ``live_irrelevance``,
``live_relevance``, ``simple_java``, ``simple_javascript`` …), the held-out checks of
``shared/``'s two. Java and JavaScript entries are prepared as BFCL prepares them for a
function-calling model (its ``_func_doc_language_specific_pre_processing``: every
parameter a string in the language's syntax) and checked in that language. A
relevance category is scored by BFCL's rule: ``irrelevance`` and ``live_irrelevance``
are right with no call, ``live_relevance`` with any call.

Per category: ``accuracy`` (the checker's ``valid``), ``calls_rate`` (answers that came
back as tool calls), ``p50_ms`` and ``p95_ms`` of one request as the client sees it.
``--irrelevance N`` adds a category built from the data here, since BFCL's own
irrelevance entries are not: N questions of ``simple_python``, each offered the function
of another entry (chosen with a fixed seed), where the right answer is no call (BFCL's
irrelevance rule); its ``accuracy`` is the share answered without a call.

A request the endpoint refuses (``llm_timeout`` on a loaded machine) counts as wrong.
``--half tune|report`` keeps the entries whose id has an even (tune) or odd (report)
number, so a method is tuned on one half and reported on the other; ``--limit N`` takes N
entries spread evenly over each category. ``--only REGEX`` keeps the entries whose
question matches, e.g. ``--only '[一-龥]'`` the ones written in Chinese. The yard has no
plugins of its own (``builtins=False``), so only the client's tools are offered. ``--llm`` is a
``PLUGYARD_LLM`` spec (default: the embedded default model, one thread).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from openai import APIError, OpenAI

from discovery import percentile
from plugyard.llm import ChatRequest, LlmError, Message, llm_from_spec
from plugyard.llm.calls import respond
from plugyard.server import ServerSettings, create_app
from plugyard.server.testing import serving
from plugyard.yard import Settings, Yard

#: The name under which BFCL's checker reads our answers: like OpenAI's models, function
#: names travel with "." written as "_" (the endpoint's names are ^[A-Za-z0-9_-]{1,64}$).
CHECKER_MODEL = "plugyard-endpoint"
#: The scoring reads only the calls; a text answer (the right one when no function
#: serves the question) need not run to the endpoint's default of 1,024 tokens.
MAX_TOKENS = 256
#: ``--direct``: long enough for one request on a machine shared with many jobs.
DIRECT_DEADLINE_S = 900.0


def _checker() -> Any:
    """BFCL's ``ast_checker``. Its model table imports every vendor SDK BFCL supports; the
    checker reads one flag of it (``underscore_to_dot``), so that table is given here
    with our one entry instead."""
    config = types.ModuleType("bfcl_eval.constants.model_config")
    config.MODEL_CONFIG_MAPPING = {  # type: ignore[attr-defined]
        CHECKER_MODEL: types.SimpleNamespace(underscore_to_dot=True)
    }
    sys.modules.setdefault("bfcl_eval.constants.model_config", config)
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    return lambda functions, output, answer, category: ast_checker(
        functions, output, answer, _language(category), category, CHECKER_MODEL
    )


def _language(category: str) -> Any:
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.utils import is_java, is_js

    return (
        Language.JAVA
        if is_java(category)
        else Language.JAVASCRIPT
        if is_js(category)
        else (Language.PYTHON)
    )


def prepared(entries: list[dict[str, Any]], category: str) -> list[dict[str, Any]]:
    """Java and JavaScript entries as BFCL sends them to a function-calling model: each
    parameter a string in the language's own syntax (BFCL's own preprocessing), the
    functions as written kept for the checker. Python entries are sent as they are, as
    earlier runs here sent them."""
    from bfcl_eval.utils import _func_doc_language_specific_pre_processing, is_java, is_js

    if not (is_java(category) or is_js(category)):
        return entries
    # BFCL's checker reads the functions as the data gives them ("checked").
    return [{**e, "checked": e["function"], "function": _func_doc_language_specific_pre_processing(
        json.loads(json.dumps(e["function"])), category)} for e in entries]  # fmt: skip


def package_data() -> Path:
    """The data folder ``bfcl-eval`` installs with its checker."""
    import bfcl_eval

    return Path(bfcl_eval.__file__).parent / "data"


def _types() -> dict[str, str]:
    from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI

    return dict(GORILLA_TO_OPENAPI)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def openai_schema(schema: Any, mapping: dict[str, str]) -> Any:
    """BFCL's parameter types (``dict``, ``float``, ``tuple`` …) as JSON Schema's, by
    BFCL's own table, as its OpenAI handler sends them."""
    if isinstance(schema, list):
        return [openai_schema(s, mapping) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: openai_schema(v, mapping) for k, v in schema.items()}
    if isinstance(schema.get("type"), str):
        out["type"] = mapping.get(schema["type"], "string")
    if not isinstance(out.get("properties"), dict) and "properties" in out:
        del out["properties"]
    return out


def tools_of(functions: list[dict[str, Any]], mapping: dict[str, str]) -> list[dict[str, Any]]:
    tools = []
    for function in functions:
        parameters = openai_schema(function.get("parameters", {}), mapping)
        parameters["type"] = "object"
        tools.append({"type": "function", "function": {
            "name": re.sub(r"\.", "_", function["name"]),
            "description": function.get("description", ""),
            "parameters": parameters}})  # fmt: skip
    return tools


def pick(entries: list[dict[str, Any]], half: str | None, limit: int | None) -> list[Any]:
    if half:
        parity = 0 if half == "tune" else 1
        entries = [e for e in entries if _number(e["id"]) % 2 == parity]
    if limit and limit < len(entries):
        step = len(entries) / limit
        entries = [entries[int(i * step)] for i in range(limit)]
    return entries


def _question(entry: dict[str, Any]) -> str:
    """The entry's last user message (a multi-turn entry's first turn)."""
    turn = entry["question"][0]
    return str(turn[-1]["content"]) if turn else ""


def _number(entry_id: str) -> int:
    # "simple_python_12" → 12; the live sets' "live_simple_0-0-0" → 0, their running index
    return int(re.split(r"[_-]", entry_id.rsplit("_", 1)[1])[0])


def irrelevant(entries: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """Questions offered another entry's function: no call is the right answer."""
    rng = random.Random(27)
    out = []
    for entry in entries[:n]:
        other = rng.choice(
            [e for e in entries if e["function"][0]["name"] != entry["function"][0]["name"]]
        )
        out.append({"id": f"irrelevance_{entry['id']}", "question": entry["question"],
                    "function": other["function"]})  # fmt: skip
    return out


def run(args: argparse.Namespace) -> dict[str, dict[str, float]]:
    check, mapping = _checker(), _types()
    data = package_data() if args.data == "package" else Path(args.data)
    categories = [c for c in args.categories.split(",") if c]
    sets: dict[str, tuple[list[Any], dict[str, Any]]] = {}
    for category in categories:
        entries = prepared(read_jsonl(data / f"BFCL_v4_{category}.json"), category)
        if args.only:  # before the halves and the limit, so the spread is of the kept
            entries = [e for e in entries if re.search(args.only, _question(e))]
        truth = data / "possible_answer" / f"BFCL_v4_{category}.json"
        answers = {a["id"]: a for a in read_jsonl(truth)} if truth.exists() else {}
        sets[category] = (pick(entries, args.half, args.limit), answers)
    if args.irrelevance:
        simple = read_jsonl(data / "BFCL_v4_simple_python.json")
        sets["irrelevance_built"] = (
            irrelevant(pick(simple, args.half, None), args.irrelevance),
            {},
        )

    report: dict[str, dict[str, float]] = {}
    failures: list[dict[str, Any]] = []
    if args.direct:
        client: Any = Direct(llm_from_spec(args.llm))
        for category, (entries, answers) in sets.items():
            report[category] = measure(
                client, category, entries, answers, check, mapping, failures, args.verbose
            )
        if args.failures:
            Path(args.failures).write_text("\n".join(json.dumps(f) for f in failures))
        return report
    with tempfile.TemporaryDirectory() as tmp:
        # The default embedder: the endpoint ranks the client's functions with it.
        settings = Settings(database=str(Path(tmp) / "yard.db"), builtins=False,
                            llm=args.llm)  # fmt: skip
        with Yard.from_settings(settings) as yard:
            key = yard.keys.bootstrap_admin()
            with serving(create_app(yard, ServerSettings(health_checks=False))) as base:
                client = OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0, timeout=300)
                for category, (entries, answers) in sets.items():
                    report[category] = measure(
                        client, category, entries, answers, check, mapping, failures, args.verbose
                    )
    if args.failures:
        Path(args.failures).write_text("\n".join(json.dumps(f) for f in failures))
    return report


class Direct:
    """``--direct``: the client's request answered by ``plugyard.llm.calls.respond`` in
    this process, as the endpoint answers it but without the endpoint's 120 s deadline
    (so a machine too loaded for that deadline still measures the decision) and without
    its ranking of the client's functions (the model's choice alone). It answers
    ``client.chat.completions.create(...)`` in the ``openai`` client's shape."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.chat = types.SimpleNamespace(completions=self)

    def create(self, *, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
               max_tokens: int, **_: Any) -> Any:  # fmt: skip
        request = ChatRequest(
            tuple(Message(m["role"], m["content"]) for m in messages),
            tools=tuple(tools), max_tokens=max_tokens, deadline_s=DIRECT_DEADLINE_S,
        )  # fmt: skip
        try:
            answer = asyncio.run(respond(self.model, request))
        except LlmError as exc:
            raise APIError(exc.code, request=None, body=None) from None  # type: ignore[arg-type]
        calls = [
            types.SimpleNamespace(function=types.SimpleNamespace(
                name=c.name, arguments=json.dumps(dict(c.arguments))))
            for c in answer.tool_calls
        ]  # fmt: skip
        message = types.SimpleNamespace(tool_calls=calls or None, content=answer.text)
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=message)])


def measure(
    client: OpenAI,
    category: str,
    entries: list[dict[str, Any]],
    answers: dict[str, Any],
    check: Any,
    mapping: dict[str, str],
    failures: list[dict[str, Any]],
    verbose: bool,
) -> dict[str, float]:
    """One category through the endpoint: accuracy by BFCL's checker, and latency."""
    right, as_calls, latencies = 0, 0, []
    for entry in entries:
        started = time.perf_counter()
        try:
            done = client.chat.completions.create(
                model="plugyard",
                messages=entry["question"][0],
                tools=tools_of(entry["function"], mapping),  # type: ignore[arg-type]
                temperature=0,
                max_tokens=MAX_TOKENS,
            )
        except APIError as exc:  # a refusal (llm_timeout …) is a wrong answer, not the end
            latencies.append((time.perf_counter() - started) * 1000)
            code = getattr(exc, "code", None) or type(exc).__name__
            failures.append({"id": entry["id"], "error": [f"HTTP error: {code}"]})
            if verbose:
                print(entry["id"], "ERROR", f"{latencies[-1]:.0f}ms", code, file=sys.stderr)
            continue
        latencies.append((time.perf_counter() - started) * 1000)
        message = done.choices[0].message
        calls = [
            {c.function.name: json.loads(c.function.arguments)}  # type: ignore[union-attr]
            for c in message.tool_calls or ()
        ]
        as_calls += bool(calls)
        verdict: Any = {"valid": not calls}  # irrelevance: no call is right
        if category == "live_relevance":
            verdict = {"valid": bool(calls)}  # relevance: any call is right
        elif "irrelevance" not in category:
            truth = answers[entry["id"]]["ground_truth"]
            no_call = {"valid": False, "error": ["no call"]}
            functions = entry.get("checked", entry["function"])
            verdict = check(functions, calls, truth, category) if calls else no_call
        ok = bool(verdict["valid"])
        right += ok
        text = (message.content or "")[:200]
        if not ok:
            failures.append({"id": entry["id"], "calls": calls, "text": text,
                             "error": verdict.get("error")})  # fmt: skip
        if verbose:
            mark = "ok" if ok else "WRONG"
            print(entry["id"], mark, f"{latencies[-1]:.0f}ms", calls or text[:80],
                  file=sys.stderr, flush=True)  # fmt: skip
    n = max(len(entries), 1)
    return {
        "n": len(entries),
        "accuracy": right / n,
        "calls_rate": as_calls / n,
        "p50_ms": percentile(latencies, 0.5) if latencies else 0,
        "p95_ms": percentile(latencies, 0.95) if latencies else 0,
    }


def record_arguments(parser: argparse.ArgumentParser, categories: str, limit: int) -> None:
    """The options of a lab's ``record`` step (bench/labs/bfcl_*.py): which entries, and
    the model that answers them."""
    parser.add_argument("--data", required=True)
    parser.add_argument("--categories", default=categories)
    parser.add_argument("--limit", type=int, default=limit)
    parser.add_argument("--half", choices=("tune", "report"), default="tune")
    parser.add_argument("--llm", default=None)
    parser.add_argument("--out", required=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="BFCL's data folder (shared/bench/bfcl)")
    parser.add_argument("--categories", default="simple_python,multiple")
    parser.add_argument("--limit", type=int, default=None, help="entries per category")
    parser.add_argument("--half", choices=("tune", "report"), default=None)
    parser.add_argument("--irrelevance", type=int, default=0, help="built irrelevance entries")
    parser.add_argument("--only", default=None,
                        help="keep the entries whose question matches this regex")  # fmt: skip
    parser.add_argument("--llm", default=None, help="a PLUGYARD_LLM spec (default: embedded)")
    parser.add_argument("--failures", default=None, help="write the wrong answers here")
    parser.add_argument("--direct", action="store_true",
                        help="respond() here, without the endpoint's deadline")  # fmt: skip
    parser.add_argument("--json", action="store_true")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    report = run(args)
    if args.json:
        print(json.dumps({"load": load, "categories": report}, indent=2))
        return
    print(f"model: {args.llm or 'embedded (default)'}  load before: {' '.join(load)}")
    print(f"{'category':<20}{'n':>5}{'accuracy':>10}{'calls':>8}{'p50 ms':>9}{'p95 ms':>9}")
    for category, row in report.items():
        print(f"{category:<20}{row['n']:>5}{row['accuracy']:>10.3f}{row['calls_rate']:>8.2f}"
              f"{row['p50_ms']:>9.0f}{row['p95_ms']:>9.0f}")  # fmt: skip


if __name__ == "__main__":
    main()
