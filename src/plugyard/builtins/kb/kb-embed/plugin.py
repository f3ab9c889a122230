"""A DS027 ``kb-plugin`` retrieving by meaning, with the embedder the host lends in the
call context (``ctx["embed"]``: texts → L2-normalised vectors)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

TOP_UNITS = 5
SUFFICIENT_COSINE = 0.5
RELEVANT_COSINE = 0.2
MAX_UNITS_PER_SESSION = 5_000
MAX_SESSIONS = 256


class _Index:
    """One session's units and their vectors (rows of one matrix)."""

    def __init__(self) -> None:
        self.units: list[dict[str, Any]] = []
        self.vectors: np.ndarray | None = None

    def add(self, units: list[dict[str, Any]], vectors: np.ndarray) -> None:
        self.units = (self.units + units)[-MAX_UNITS_PER_SESSION:]
        stacked = vectors if self.vectors is None else np.vstack([self.vectors, vectors])
        self.vectors = stacked[-MAX_UNITS_PER_SESSION:]


class SemanticKB:
    def __init__(self) -> None:
        self._sessions: OrderedDict[str, _Index] = OrderedDict()

    def retrieve(self, input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
        embed = ctx.get("embed")
        if embed is None:
            return _answer("unsupported", [], 0)
        prompt = str(input.get("prompt") or "")
        given = [u for u in input.get("context") or [] if isinstance(u, dict) and u.get("text")]
        index = self._sessions.get(_session(ctx))
        units = list(index.units) if index else []
        rows = [index.vectors] if index is not None and index.vectors is not None else []
        if given:
            units += given
            rows.append(_vectors(embed, given))
        if not units or not prompt.strip():
            return _answer("insufficient", [], len(units))
        query = _vectors(embed, [{"text": prompt}])[0]
        scores = np.vstack(rows) @ query
        best = np.argsort(-scores)[:TOP_UNITS]
        chosen = [
            {**units[i], "score": round(float(scores[i]), 4)}
            for i in best
            if scores[i] >= RELEVANT_COSINE
        ]
        status = "success" if chosen else "insufficient"
        sufficient = bool(chosen) and chosen[0]["score"] >= SUFFICIENT_COSINE
        return _answer(status, chosen, len(units), prompt, sufficient)

    def onSourceText(self, input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
        units = [u for u in input.get("units") or [] if isinstance(u, dict) and u.get("text")]
        embed = ctx.get("embed")
        if not units or embed is None:
            return {"status": "skipped", "artifacts": [], "error": None}
        self._index(_session(ctx)).add(units, _vectors(embed, units))
        artifact = {"kind": "vector-index", "units": len(units), "sourceId": input.get("sourceId")}
        return {"status": "accepted", "artifacts": [artifact], "error": None}

    def onSessionEvent(self, input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
        session = str(input.get("sessionId"))
        event = input.get("eventType")
        if event in ("session-created", "kb-loaded", "kb-forked"):
            self._sessions.pop(session, None)
        units = [u for u in input.get("units") or [] if isinstance(u, dict) and u.get("text")]
        embed = ctx.get("embed")
        if units and embed is not None and input.get("scope") == "committed-session":
            index = self._index(session)
            known = {(u.get("text"), u.get("sourceLink")) for u in index.units}
            fresh = [u for u in units if (u.get("text"), u.get("sourceLink")) not in known]
            if fresh:
                index.add(fresh, _vectors(embed, fresh))
            return {"status": "accepted", "error": None}
        return {"status": "skipped", "error": None}

    def _index(self, session: str) -> _Index:
        index = self._sessions.pop(session, None) or _Index()
        self._sessions[session] = index
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)
        return index


def _vectors(embed: Any, units: list[dict[str, Any]]) -> np.ndarray:
    texts = [" ".join(str(u.get(k) or "") for k in ("title", "text")).strip() for u in units]
    return np.asarray(embed(texts), dtype=np.float32)


def _answer(
    status: str,
    chosen: list[dict[str, Any]],
    considered: int,
    prompt: str = "",
    sufficient: bool = False,
) -> dict[str, Any]:
    return {
        "status": status,
        "resolvedIntents": [{"prompt": prompt, "units": chosen}] if chosen else None,
        "sufficient": sufficient,
        "retrievalTrace": {
            "purpose": "task-evidence",
            "kuLevelsUsed": ["leaf"],
            "totalKUsConsidered": considered,
            "selectedKUCount": len(chosen),
        },
        "error": None,
    }


def _session(ctx: dict[str, Any]) -> str:
    session = ctx.get("session") if isinstance(ctx, dict) else None
    if isinstance(session, dict):
        return str(session.get("id") or session.get("sessionId") or "")
    return ""
