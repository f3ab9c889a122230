"""A DS027 ``sd-plugin`` through the model layer: the request's ``llm`` callback (one
JSON-constrained call, one corrective retry at most), answered as SOP Lang Control."""

from __future__ import annotations

import json
from typing import Any

MAX_SOURCE_CHARS = 12_000
_UNITS = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"title": {"type": "string"}, "text": {"type": "string"}},
        "required": ["title", "text"],
    },
}
SEEDS_SCHEMA = {
    "type": "object",
    "properties": {
        "intents": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "act": {"type": "string"},
                    "text": {"type": "string"},
                    "topic": {"type": "string"},
                },
                "required": ["act", "text", "topic"],
            },
        },
        "units": _UNITS,
    },
    "required": ["intents", "units"],
}
UNITS_SCHEMA = {"type": "object", "properties": {"units": _UNITS}, "required": ["units"]}
_SYSTEM = (
    "Split the user's message into task intents and knowledge units. An intent is one "
    "question or instruction: its act (explain, compare, define, list, describe, "
    "recommend or lookup), its text, and one topic word (legal, medical, finance, "
    "technical, science, geography, history or general). A unit groups the message's "
    "related statements (facts the user gives), with a short title. Answer JSON only."
)


async def detectSeeds(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
    llm = ctx.get("llm")
    prompt = str(input.get("prompt") or "").strip()
    if llm is None or not prompt:
        return _unsupported("no model is available" if llm is None else "empty request")
    messages = [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": prompt}]
    calls, model, found = 0, None, None
    for _ in range(2):  # the answer, then at most one corrective retry
        answer = await llm.chat(messages, role="seed-detector", json_schema=SEEDS_SCHEMA)
        calls, model = calls + 1, answer.get("model")
        found = _intents(answer.get("json"))
        if found:
            break
        messages += [
            {"role": "assistant", "content": answer.get("text") or ""},
            {
                "role": "user",
                "content": "That held no intent with a non-empty text. "
                "Answer again, with at least one intent.",
            },
        ]
    if not found:
        return _unsupported("the model found no intent", calls, model)
    units = _units(answer.get("json"))
    intents = "\n".join(
        f"@i{n} intent {_word(i['act'])} {_q(i['text'])}\n"
        f"@it{n} set $i{n} topic {_word(i['topic'])}"
        for n, i in enumerate(found, 1)
    )
    return {
        "status": "success",
        "intentCNL": intents,
        "currentTurnContextCNL": _cnl(units, "turn"),
        "metadata": {"llmCalls": calls, "model": model},
        "error": None,
    }


async def normalizePersistentContext(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
    llm = ctx.get("llm")
    text = "\n\n".join(
        str(u.get("text") or "") for u in input.get("context") or [] if isinstance(u, dict)
    )
    if llm is None or not text.strip() or len(text) > MAX_SOURCE_CHARS:
        return {"status": "unsupported", "contextCNL": None, "metadata": {}, "error": None}
    messages = [
        {
            "role": "system",
            "content": "Group the text's related statements into "
            "knowledge units, each with a short title. Answer JSON only.",
        },
        {"role": "user", "content": text},
    ]
    answer = await llm.chat(messages, role="seed-detector", json_schema=UNITS_SCHEMA)
    units = _units(answer.get("json"))
    source = str(input.get("sourceId") or "source")
    metadata = {"llmCalls": 1, "model": answer.get("model")}
    if not units:
        return {"status": "unsupported", "contextCNL": None, "metadata": metadata, "error": None}
    return {
        "status": "success",
        "contextCNL": _cnl(units, source),
        "metadata": metadata,
        "error": None,
    }


def _intents(data: Any) -> list[dict[str, str]]:
    items = data.get("intents") if isinstance(data, dict) else None
    return [
        {
            "act": str(i.get("act") or "explain"),
            "text": str(i["text"]).strip(),
            "topic": str(i.get("topic") or "general"),
        }
        for i in items or []
        if isinstance(i, dict) and str(i.get("text") or "").strip()
    ][:20]


def _units(data: Any) -> list[dict[str, str]]:
    items = data.get("units") if isinstance(data, dict) else None
    return [
        {"title": str(u.get("title") or ""), "text": str(u["text"]).strip()}
        for u in items or []
        if isinstance(u, dict) and str(u.get("text") or "").strip()
    ][:500]


def _cnl(units: list[dict[str, str]], prefix: str) -> str | None:
    lines = [
        f'@k{n} ku atomic "{prefix}::unit-{n:03d}"\n@k{n}t set $k{n} title {_q(u["title"])}\n'
        f"@k{n}c set $k{n} claim {_q(u['text'])}"
        for n, u in enumerate(units)
    ]
    return "\n".join(lines) or None


def _unsupported(why: str, calls: int = 0, model: Any = None) -> dict[str, Any]:
    return {
        "status": "unsupported",
        "intentCNL": None,
        "currentTurnContextCNL": None,
        "metadata": {"llmCalls": calls, "model": model, "reason": why},
        "error": None,
    }


def _word(text: str) -> str:
    cleaned = "".join(c for c in text.lower() if c.isalnum() or c == "-")
    return cleaned or "general"


def _q(text: str) -> str:
    return json.dumps(" ".join(text.split()), ensure_ascii=False)
