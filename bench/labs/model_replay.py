"""What the embedded model's time buys: record every request a benchmark sends to
llama.cpp, then replay them under another setting. Nothing committed changes.

    python bench/labs/model_replay.py record calls.jsonl bench/ask.py --model-file M \
        --deadline 900 --json
    python bench/labs/model_replay.py replay calls.jsonl --model-file M [--speculative ngram:3:4]
    python bench/labs/model_replay.py continue calls.jsonl --model-file M [--generic]

``record`` runs the script named after the file as ``__main__`` in this process, with
``plugyard.llm.embedded``'s one call into llama.cpp wrapped to write each request body
and answer (llama.cpp's own timings included) as a line.

``replay`` sends the recorded bodies again to a server core of its own, one thread as
the default, and counts tokens read and written, their time, and the answers that are
not the recorded ones. ``--speculative ngram:N:M`` drafts from the conversation with
llama.cpp's ``ngram-simple`` (an N-token match proposes the M tokens that followed it),
which suits a call that copies the request's values.

``continue`` replays each request's two steps with the call written as the choice's
own continuation (``{"tool": …, "calls": …, "call": [ …``) instead of a new system
message after the request: the cached choice then serves the call, and the call step
reads the frame alone. ``--generic`` adds the call instruction's general sentence to
the choice's instruction, since no instruction follows the choice any more;
``--short`` keeps the choice as the model wrote it and follows it with the call
instruction's last part only (the tool's required and optional parameters).
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import runpy
import secrets
import sys
import time
from pathlib import Path
from typing import Any

from plugyard.llm import embedded

GENERIC = (
    " When you call one, take every argument value from the user's request, written as "
    "the parameter's type asks (a value, never the type's name); leave out an optional "
    "parameter the request does not give."
)


def record(out: Path, script: Path, argv: list[str]) -> None:
    sink = out.open("w", encoding="utf-8")
    complete = embedded._complete

    def recorded(core: Any, body: dict[str, Any], on_chunk: Any = None) -> Any:
        raw = complete(core, body, on_chunk)
        sink.write(json.dumps({"body": body, "raw": raw}, default=str) + "\n")
        sink.flush()
        return raw

    embedded._complete = recorded
    sys.argv = [str(script), *argv]
    sys.path.insert(0, str(script.resolve().parent))
    runpy.run_path(str(script), run_name="__main__")


def core(model_file: str, threads: int, speculative: str | None) -> Any:
    import xllamacpp  # type: ignore[import-untyped,import-not-found,unused-ignore]

    params = xllamacpp.CommonParams()
    params.model.path = model_file
    params.n_ctx = embedded.DEFAULT_CONTEXT
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.verbosity = -1
    params.warmup = False
    params.api_keys = [secrets.token_hex(16)]
    if speculative:
        _, n, m = speculative.split(":")
        kinds = xllamacpp.common_speculative_type
        params.speculative.types = [kinds.COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE]
        params.speculative.ngram_simple.size_n = int(n)
        params.speculative.ngram_simple.size_m = int(m)
    return xllamacpp.Server(params)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _content(raw: dict[str, Any]) -> str:
    return str(raw["choices"][0]["message"].get("content"))


def replay(path: Path, server: Any) -> None:
    read = written = read_ms = write_ms = drafted = accepted = changed = 0.0
    rows = [r for r in _lines(path) if not r["body"].get("stream")]
    for row in rows:
        raw = server.handle_chat_completions(row["body"])
        timings = raw.get("timings", {})
        read += timings.get("prompt_n", 0)
        written += timings.get("predicted_n", 0)
        read_ms += timings.get("prompt_ms", 0)
        write_ms += timings.get("predicted_ms", 0)
        drafted += timings.get("draft_n", 0)
        accepted += timings.get("draft_n_accepted", 0)
        if _content(raw) != _content(row["raw"]):
            changed += 1
            print("CHANGED", _content(row["raw"])[:120], "->", _content(raw)[:120])
    print(f"requests {len(rows)}, answers changed {changed:.0f}; read {read:.0f} tokens in "
          f"{read_ms / 1000:.1f} s, wrote {written:.0f} in {write_ms / 1000:.1f} s; "
          f"drafted {drafted:.0f}, accepted {accepted:.0f}")  # fmt: skip


def _steps(rows: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each request's choice and call, recorded one after the other."""
    pairs = []
    for choice, call in itertools.pairwise(rows):
        asked, calling = choice["body"]["messages"], call["body"]["messages"]
        if calling[-1]["role"] == "assistant" and asked[-1]["role"] != "assistant" \
                and asked[:-1] == calling[:-2]:  # fmt: skip
            pairs.append((choice, call))
    return pairs


def _short(call: dict[str, Any], name: str) -> str:
    """The recorded call instruction from its parameters on: "Required: …"."""
    instruction = str(call["body"]["messages"][-2]["content"])
    return f"Call {name}." + instruction.split("does not give.", 1)[-1]


def continued(path: Path, server: Any, generic: bool, short: bool = False) -> None:
    same = read_before = read_after = 0
    pairs = _steps(_lines(path))
    for choice, call in pairs:
        frame = call["body"]["messages"][-1]["content"]
        name = json.loads(frame.split('"name": ', 1)[1].split(", ")[0])
        schema = call["body"]["response_format"]["json_schema"]["schema"]
        count = schema["minItems"]
        asked = copy.deepcopy(choice["body"])
        if generic:
            asked["messages"][-1]["content"] += GENERIC
        chosen = server.handle_chat_completions(asked)  # cached as the flow leaves it
        if short:  # the recorded call's own schema and frame, after a short instruction
            after = [{"role": "assistant", "content": _content(chosen)},
                     {"role": "system", "content": _short(call, name)},
                     {"role": "assistant", "content": frame}]  # fmt: skip
            body = dict(call["body"], messages=[*asked["messages"], *after])
        else:
            begun = f'{{"tool": {json.dumps(name)}, "calls": {count}, "call": {frame}'
            whole = {"type": "object", "additionalProperties": False,
                     "properties": {"tool": {"const": name}, "calls": {"const": count},
                                    "call": schema},
                     "required": ["tool", "calls", "call"]}  # fmt: skip
            body = dict(
                call["body"], messages=[*asked["messages"], {"role": "assistant", "content": begun}]
            )
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "call", "schema": whole},
            }
        raw = server.handle_chat_completions(body)
        got = json.loads(_content(raw))
        got = got["call"] if isinstance(got, dict) else got
        before = json.loads(_content(call["raw"]))
        read_before += call["raw"]["timings"]["prompt_n"]
        read_after += raw["timings"]["prompt_n"]
        same += got == before
        if got != before:
            request = [m["content"] for m in asked["messages"] if m["role"] == "user"][-1]
            print(
                f"CHANGED {request[:70]!r}\n  before {json.dumps(before)[:200]}\n"
                f"  after  {json.dumps(got)[:200]}"
            )
    print(
        f"calls {len(pairs)}, the same {same}; tokens the call step read: "
        f"{read_before} -> {read_after}"
    )


def main() -> None:
    if len(sys.argv) > 3 and sys.argv[1] == "record":
        record(Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4:])
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("replay", "continue"))
    parser.add_argument("path", type=Path)
    parser.add_argument("--model-file", required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--speculative", help="ngram:N:M")
    parser.add_argument("--generic", action="store_true")
    parser.add_argument("--short", action="store_true")
    args = parser.parse_args()
    server = core(args.model_file, args.threads, args.speculative)
    started = time.perf_counter()
    if args.mode == "replay":
        replay(args.path, server)
    else:
        continued(args.path, server, args.generic, args.short)
    print(f"wall {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
