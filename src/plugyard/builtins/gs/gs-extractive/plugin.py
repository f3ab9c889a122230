"""A DS027 ``gs-plugin`` that answers from the evidence itself, cited. Module-level family
function ``solve(input, ctx)``.

The question is read first (``plugyard.reasoning.questions``): a "when" question is
answered by the date the best sentence gives, "how tall / how many" by its measure,
"where" by its place, "who" by its name, a yes/no question by yes or no with the sentence
that says so; anything else by the sentences that best cover the question. "Answer with a
single word" and "Yes or No" are obeyed. A compound question ("… and when …") asks for
decomposition, so each part is retrieved and answered on its own. Every answer cites the
sentences it rests on, with their text.
"""

from __future__ import annotations

import re
from typing import Any

from plugyard.reasoning.questions import (
    Question,
    chain,
    cover,
    coverage,
    entities,
    explains,
    parts,
    rank,
    read,
    spans,
    stems,
    verdict,
)
from plugyard.reasoning.questions import evidence as statements_of

MAX_SENTENCES = 3
MIN_COVERAGE = 0.33
#: A sentence joins the answer when it scores at least this share of the best one.
KEEP_SHARE = 0.5
_TITLES = frozenset(("dr", "mr", "mrs", "ms", "sir", "commander", "captain", "general",
                     "professor", "prof", "king", "queen", "saint", "st", "president"))  # fmt: skip


def solve(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
    prompt = str(input.get("prompt") or "")
    subtasks = _subtasks(prompt, input.get("intents"))
    if len(subtasks) > 1 and not input.get("frameDepth"):
        return _answer("needs-decomposition", None, {"subtasks": subtasks})
    question = read(prompt)
    evidence = [u for u in input.get("context") or [] if isinstance(u, dict) and u.get("text")]
    if not (question.terms or question.entities) or not evidence:
        return _answer("no-context", None, None)
    stated, scored = statements_of(evidence)
    found = [(index, n, sentence) for n, (index, sentence) in enumerate(stated)]
    ranked = [(s, i) for s, i in rank(question, scored) if s > 0]
    ranked = [(s, i) for s, i in ranked if _covers(question, scored[i])]
    if not ranked:
        return _answer("no-context", None, None)
    typed = _typed(question, found, scored, ranked, evidence)
    if typed is not None:
        return typed
    best = ranked[0][0]
    chosen = [i for s, i in ranked[:MAX_SENTENCES] if s >= KEEP_SHARE * best]
    chosen = cover(question, scored, ranked, chosen)
    if explains(prompt):
        chosen = chain(question, scored, chosen)
    return _cited(question, [found[i] for i in sorted(chosen)], evidence, None)


def _typed(
    question: Question,
    found: list[tuple[int, int, str]],
    scored: list[str],
    ranked: list[tuple[float, int]],
    evidence: list[dict[str, Any]],
) -> dict[str, Any] | None:
    """The answer of the kind the question asks for, or ``None`` to quote sentences."""
    if question.kind == "yesno":
        return _yes_or_no(question, found, scored, ranked, evidence)
    if not question.wants_span and question.form != "word":
        return None
    best = ranked[0][0]
    for score, index in ranked[:5]:
        if score < KEEP_SHARE * best:
            break
        sentence = found[index][2]
        candidates = spans(sentence, question)
        if candidates:
            short = _nearest(candidates, sentence, question)
            return _cited(question, [found[index]], evidence, short)
    if question.form == "word":
        sentence = found[ranked[0][1]][2]
        word = _salient(sentence, question)
        return _cited(question, [found[ranked[0][1]]], evidence, word) if word else None
    return None


def _yes_or_no(
    question: Question,
    found: list[tuple[int, int, str]],
    scored: list[str],
    ranked: list[tuple[float, int]],
    evidence: list[dict[str, Any]],
) -> dict[str, Any]:
    """Yes, unless the evidence says otherwise (``questions.verdict``), with the sentence
    that decides."""
    decided = verdict(question, scored)
    top = found[decided[1]] if decided is not None else found[ranked[0][1]]
    yes = decided[0] if decided is not None else True
    return _cited(question, [top], evidence, "Yes" if yes else "No")


def _cited(
    question: Question,
    used: list[tuple[int, int, str]],
    evidence: list[dict[str, Any]],
    short: str | None,
) -> dict[str, Any]:
    numbers: dict[int, int] = {}
    said: dict[int, list[str]] = {}
    for index, _, sentence in used:
        numbers.setdefault(index, len(numbers) + 1)
        said.setdefault(index, []).append(sentence)
    citations = [
        {
            "index": number,
            "title": evidence[i].get("title") or "",
            "sourceLink": evidence[i].get("sourceLink") or "",
            "unitId": evidence[i].get("id") or "",
            "text": " ".join(said[i])[:1_000],
        }
        for i, number in numbers.items()
    ]
    marks = " ".join(f"[{n}]" for n in numbers.values())
    if short is not None and question.form in ("word", "yesno"):
        text = _one_word(short, question) if question.form == "word" else short
    elif short is not None:
        quoted = " ".join(s for _, _, s in used)
        text = f"{short} — {quoted} {marks}"
    else:
        pieces = []
        for position, (index, _, sentence) in enumerate(used):
            last = position + 1 == len(used) or used[position + 1][0] != index
            pieces.append(f"{sentence} [{numbers[index]}]" if last else sentence)
        text = " ".join(pieces)
    brief = text if short is not None and question.form in ("word", "yesno") else short
    document = {"answer": brief, "kind": question.kind, "citations": citations}
    return _answer("success", text, document)


def _nearest(candidates: list[str], sentence: str, question: Question) -> str:
    """The span that says most of what the question names ("nineteen sledge dogs" for
    "how many sledge dogs"), then the closest to where the sentence says what the
    question is about; a fuller name before a part of one."""
    lowered = sentence.lower()
    # Where the sentence says what the question is about — not its measure word: "long"
    # in "480 metres long" says nothing of which length is asked for.
    measure = set(stems(question.unit or "", expand=True))
    anchors = [
        m.start()
        for term in stems(question.text, expand=True)
        if term not in measure
        for m in re.finditer(rf"\b{re.escape(term)}", lowered)
    ]
    asked = set(question.terms)
    names = question.kind == "person"

    def rank(span: str) -> tuple[int, int, int, int]:
        at = lowered.find(span.lower())
        near = min((abs(at - a) for a in anchors), default=0) if at >= 0 else 10_000
        whole = -1 if names and len(span.split()) > 1 else 0
        return (-len(asked & set(stems(span))), whole, near, -len(span.split()))

    return min(candidates, key=rank)


def _one_word(answer: str, question: Question) -> str:
    words = [w.strip(".,;:()\"'") for w in answer.split()]
    words = [w for w in words if w and w.lower().rstrip(".") not in _TITLES]
    if not words:
        return answer
    if question.kind == "person":
        named = [w for w in words if w[:1].isupper()]
        return named[-1] if named else words[0]
    if question.kind == "date":
        years = [w for w in words if re.fullmatch(r"\d{3,4}s?", w)]
        return years[-1] if years else words[-1]
    return words[0]


def _salient(sentence: str, question: Question) -> str | None:
    """For a single-word answer of no particular kind: the sentence's first name the
    question does not already say, else its first content word after what the question
    is about ("Velmora is known for its cheese" → "cheese")."""
    said = question.text.lower()
    for name in entities(sentence):
        if name.lower() not in said and not name[:1].isdigit() and len(name.split()) == 1:
            return name
    asked = set(stems(question.text, expand=True))
    words: list[str] = re.findall(r"[^\W_]+(?:[-'][^\W_]+)*", sentence)
    last = max((i for i, w in enumerate(words) if stems(w) and stems(w)[0] in asked), default=-1)
    for word in words[last + 1 :]:
        if stems(word) and stems(word)[0] not in asked:
            return word
    return None


def _covers(question: Question, sentence: str) -> bool:
    if any(e.lower() in sentence.lower() for e in question.entities):
        return True
    return coverage(question, sentence) >= MIN_COVERAGE


def _subtasks(prompt: str, intents: Any) -> list[str]:
    texts = [str(i.get("text")) for i in intents or [] if isinstance(i, dict) and i.get("text")]
    if len(texts) > 1:
        return texts[:4]
    return parts(prompt)


def _answer(status: str, text: str | None, document: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "status": status,
        "responseMarkdown": text,
        "responseDocument": document,
        "metadata": {"llmCalls": 0, "model": None},
        "error": None,
    }
