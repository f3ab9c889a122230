"""A DS027 ``gs-plugin`` that answers from the evidence itself: the best-matching
sentences, cited. Module-level family function ``solve(input, ctx)``."""

from __future__ import annotations

import re
from typing import Any

MAX_SENTENCES = 3
MIN_COVERAGE = 0.34
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_QUESTION = re.compile(r"(?<=\?)\s+")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOP = frozenset(
    (
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "could", "did", "do",
        "does", "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is",
        "it", "its", "me", "my", "no", "not", "of", "on", "or", "our", "so", "such", "than",
        "that", "the", "their", "them", "then", "there", "these", "they", "this", "to", "was",
        "we", "were", "what", "when", "where", "which", "who", "whom", "why", "will", "with",
        "would", "you", "your", "tell", "explain", "describe", "give", "list", "please",
        "about",
    )
)  # fmt: skip


def solve(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
    prompt = str(input.get("prompt") or "")
    subtasks = _subtasks(prompt, input.get("intents"))
    if len(subtasks) > 1 and not input.get("frameDepth"):
        return _answer("needs-decomposition", None, {"subtasks": subtasks})
    wanted = _stems(prompt)
    evidence = [u for u in input.get("context") or [] if isinstance(u, dict) and u.get("text")]
    if not wanted or not evidence:
        return _answer("no-context", None, None)
    scored: list[tuple[float, int, int, str]] = []
    for index, unit in enumerate(evidence):
        for position, sentence in enumerate(_SENTENCE.split(str(unit["text"]))):
            shared = wanted & _stems(sentence)
            if shared:
                scored.append((len(shared) / len(wanted), index, position, sentence.strip()))
    best = sorted(scored, key=lambda s: -s[0])[:MAX_SENTENCES]
    best = [s for s in best if s[0] >= MIN_COVERAGE]
    if not best:
        return _answer("no-context", None, None)
    best.sort(key=lambda s: (s[1], s[2]))  # in evidence order
    cited: dict[int, int] = {}
    parts: list[str] = []
    for position, (_, index, _, sentence) in enumerate(best):
        number = cited.setdefault(index, len(cited) + 1)
        last = position + 1 == len(best) or best[position + 1][1] != index
        parts.append(f"{sentence} [{number}]" if last else sentence)  # cite a unit's run once
    citations = [
        {
            "index": number,
            "title": evidence[i].get("title") or "",
            "sourceLink": evidence[i].get("sourceLink") or "",
            "text": evidence[i]["text"][:500],
        }
        for i, number in cited.items()
    ]
    return _answer("success", " ".join(parts), {"citations": citations})


def _subtasks(prompt: str, intents: Any) -> list[str]:
    texts = [str(i.get("text")) for i in intents or [] if isinstance(i, dict) and i.get("text")]
    if len(texts) > 1:
        return texts[:4]
    questions = [q.strip() for q in _QUESTION.split(prompt) if q.strip().endswith("?")]
    return questions[:4] if len(questions) > 1 else [prompt]


def _stems(text: str) -> set[str]:
    out = set()
    for word in _WORD.findall(text.lower()):
        if word in _STOP or len(word) < 2:
            continue
        for ending in ("ing", "ed", "es", "s"):
            if word.endswith(ending) and len(word) - len(ending) >= 3:
                word = word[: -len(ending)]
                break
        out.add(word)
    return out


def _answer(status: str, text: str | None, document: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "status": status,
        "responseMarkdown": text,
        "responseDocument": document,
        "metadata": {"llmCalls": 0, "model": None},
        "error": None,
    }
