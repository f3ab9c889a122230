"""A DS027 ``kb-plugin`` written as MRP-VM writes them: a class with camelCase methods
``retrieve(input, ctx)``, ``onSourceText(input, ctx)`` and ``onSessionEvent(input, ctx)``,
each answering its family's status object."""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

TOP_UNITS = 5
SUFFICIENT_SCORE = 0.5
MAX_UNITS_PER_SESSION = 5_000
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOPWORDS = frozenset(
    (
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for",
        "from", "has", "have", "how", "i", "if", "in", "is", "it", "its", "me", "my", "of",
        "on", "or", "our", "so", "that", "the", "their", "there", "this", "to", "was",
        "what", "when", "where", "which", "who", "why", "will", "with", "you", "your",
    )
)  # fmt: skip


def _terms(text: str) -> list[str]:
    return [w for w in (m.lower() for m in _WORD.findall(text)) if w not in _STOPWORDS]


class LexicalKB:
    def __init__(self) -> None:
        self._sessions: dict[str, list[dict[str, Any]]] = {}

    def retrieve(self, input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
        prompt = str(input.get("prompt") or "")
        wanted = set(_terms(prompt))
        units = [u for u in input.get("context") or [] if isinstance(u, dict)]
        units += self._sessions.get(_session(ctx), [])
        scored = []
        for unit in units:
            words = Counter(_terms(" ".join(str(unit.get(k) or "") for k in ("title", "text"))))
            shared = wanted & words.keys()
            if shared:
                score = len(shared) / len(wanted) / math.log2(2 + sum(words.values()) / 50)
                scored.append((round(score, 4), unit))
        scored.sort(key=lambda pair: -pair[0])
        chosen = [{**unit, "score": score} for score, unit in scored[:TOP_UNITS]]
        return {
            "status": "success" if chosen else "insufficient",
            "resolvedIntents": [{"prompt": prompt, "units": chosen}] if chosen else None,
            "sufficient": bool(chosen) and chosen[0]["score"] >= SUFFICIENT_SCORE,
            "retrievalTrace": {
                "purpose": "task-evidence",
                "kuLevelsUsed": ["leaf"],
                "totalKUsConsidered": len(units),
                "selectedKUCount": len(chosen),
            },
            "error": None,
        }

    def onSourceText(self, input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
        units = [u for u in input.get("units") or [] if isinstance(u, dict) and u.get("text")]
        if not units and input.get("text"):
            units = [{"title": input.get("sourceName") or "", "text": input["text"]}]
        if not units:
            return {"status": "skipped", "artifacts": [], "error": None}
        kept = self._sessions.setdefault(_session(ctx), [])
        kept.extend(units)
        del kept[:-MAX_UNITS_PER_SESSION]
        artifact = {"kind": "lexical-index", "units": len(units), "sourceId": input.get("sourceId")}
        return {"status": "accepted", "artifacts": [artifact], "error": None}

    def onSessionEvent(self, input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
        if input.get("eventType") == "session-created":
            self._sessions.pop(str(input.get("sessionId")), None)
            return {"status": "accepted", "error": None}
        return {"status": "skipped", "error": None}


def _session(ctx: dict[str, Any]) -> str:
    session = ctx.get("session") if isinstance(ctx, dict) else None
    if isinstance(session, dict):
        return str(session.get("id") or session.get("sessionId") or "")
    return ""
