"""A DS027 ``kb-plugin`` written as MRP-VM writes them: a class with camelCase methods
``retrieve(input, ctx)``, ``onSourceText(input, ctx)`` and ``onSessionEvent(input, ctx)``,
each answering its family's status object."""

from __future__ import annotations

import math
import re
from collections import Counter, OrderedDict
from typing import Any

TOP_UNITS = 5
SUFFICIENT_SCORE = 0.5
MAX_UNITS_PER_SESSION = 5_000
MAX_SESSIONS = 256
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
        # Per session, the newest sessions kept: a long-running host sees many.
        self._sessions: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()

    def retrieve(self, input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
        prompt = str(input.get("prompt") or "")
        wanted = set(_terms(prompt))
        units = [u for u in input.get("context") or [] if isinstance(u, dict)]
        units += self._sessions.get(_session(ctx), [])
        self._touch(_session(ctx))
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
        self._keep(_session(ctx), units)
        artifact = {"kind": "lexical-index", "units": len(units), "sourceId": input.get("sourceId")}
        return {"status": "accepted", "artifacts": [artifact], "error": None}

    def onSessionEvent(self, input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
        """A new session starts empty; a loaded, forked or committed KB is indexed.
        Current-turn units are not kept: they come with the request itself."""
        session = str(input.get("sessionId"))
        event = input.get("eventType")
        if event in ("session-created", "kb-loaded", "kb-forked"):
            self._sessions.pop(session, None)
        units = [u for u in input.get("units") or [] if isinstance(u, dict) and u.get("text")]
        if event == "session-created" or (units and input.get("scope") == "committed-session"):
            self._keep(session, units)
            return {"status": "accepted", "error": None}
        return {"status": "skipped", "error": None}

    def _keep(self, session: str, units: list[dict[str, Any]]) -> None:
        kept = self._sessions.setdefault(session, [])
        known = {(u.get("text"), u.get("sourceLink")) for u in kept}
        kept.extend(u for u in units if (u.get("text"), u.get("sourceLink")) not in known)
        del kept[:-MAX_UNITS_PER_SESSION]
        self._touch(session)

    def _touch(self, session: str) -> None:
        if session in self._sessions:
            self._sessions.move_to_end(session)
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)


def _session(ctx: dict[str, Any]) -> str:
    session = ctx.get("session") if isinstance(ctx, dict) else None
    if isinstance(session, dict):
        return str(session.get("id") or session.get("sessionId") or "")
    return ""
