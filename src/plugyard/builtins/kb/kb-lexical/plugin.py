"""A DS027 ``kb-plugin`` written as MRP-VM writes them: a class with camelCase methods
``retrieve(input, ctx)``, ``onSourceText(input, ctx)`` and ``onSessionEvent(input, ctx)``,
each answering its family's status object.

Retrieval ranks the sentences of the units it holds by BM25 over the question's key
terms (and the words an answer may use instead), boosted by the question's entities and
by a span of the kind the question asks for (a date for "when", a measure for "how
tall") — ``plugyard.reasoning.questions`` — and answers the best sentences as units of
their own, each naming the unit it comes from."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from plugyard.reasoning.questions import (
    chain,
    explains,
    in_context,
    rank,
    read,
    sentences,
    statements,
)

TOP_UNITS = 5
#: A sentence is kept when it scores at least this share of the best one.
KEEP_SHARE = 0.35
#: A best score at or over this (BM25 with boosts) makes the retrieval sufficient.
SUFFICIENT_SCORE = 3.0
MAX_UNITS_PER_SESSION = 5_000
MAX_SESSIONS = 256


class LexicalKB:
    def __init__(self) -> None:
        # Per session, the newest sessions kept: a long-running host sees many.
        self._sessions: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()

    def retrieve(self, input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
        prompt = str(input.get("prompt") or "")
        question = read(prompt)
        units = [u for u in input.get("context") or [] if isinstance(u, dict)]
        units += self._sessions.get(_session(ctx), [])
        self._touch(_session(ctx))
        found: list[tuple[dict[str, Any], int, str]] = []
        texts: list[str] = []
        for unit in units:
            said = sentences(str(unit.get("text") or ""))
            context = in_context(said, str(unit.get("title") or ""))
            kept = statements(said)  # a question in a source answers nothing
            found += [(unit, n, sentence) for n, sentence in enumerate(said) if kept[n]]
            texts += [c for n, c in enumerate(context) if kept[n]]
        ranked = [(s, i) for s, i in rank(question, texts) if s > 0]
        best = ranked[0][0] if ranked else 0.0
        chosen: list[dict[str, Any]] = []
        seen: set[str] = set()
        picked: list[int] = []
        for score, index in ranked:
            unit, n, sentence = found[index]
            if score < KEEP_SHARE * best or len(chosen) >= TOP_UNITS or sentence in seen:
                continue
            seen.add(sentence)
            chosen.append(_sentence_unit(unit, n, sentence, score))
            picked.append(index)
        if chosen and explains(prompt):
            # The links between what was found: the middle of a chain of facts shares
            # no word with the question, so ranking alone never hands it on.
            for index in chain(question, texts, picked)[len(picked) :]:
                unit, n, sentence = found[index]
                if sentence not in seen:
                    seen.add(sentence)
                    chosen.append(_sentence_unit(unit, n, sentence, 0.0))
        return {
            "status": "success" if chosen else "insufficient",
            "resolvedIntents": [{"prompt": prompt, "units": chosen}] if chosen else None,
            "sufficient": bool(chosen) and best >= SUFFICIENT_SCORE,
            "retrievalTrace": {
                "purpose": "task-evidence",
                "kuLevelsUsed": ["leaf"],
                "questionKind": question.kind,
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


def _sentence_unit(unit: dict[str, Any], n: int, sentence: str, score: float) -> dict[str, Any]:
    """One sentence of ``unit`` as a unit: the unit's title, source and scopes, its text."""
    kept = {k: v for k, v in unit.items() if k not in ("text", "claim", "procedure", "score")}
    own = unit.get("id")
    return {**kept, "id": f"{own}#s{n}" if own else f"s{n}", "text": sentence, "score": score}


def _session(ctx: dict[str, Any]) -> str:
    session = ctx.get("session") if isinstance(ctx, dict) else None
    if isinstance(session, dict):
        return str(session.get("id") or session.get("sessionId") or "")
    return ""
