"""A DS027 ``val-plugin`` as module-level family functions: ``validate(input, ctx)``.

The answer is read from ``answer``, ``responseMarkdown`` or ``response`` of the input; the
evidence is the input's ``context`` units. An answer is rejected when it does not address
the question (``plugyard.reasoning.questions``): a "when" question answered without a
date, "how tall / how many" without a number, a yes/no question without yes or no, a
"single word" answer of several words — for a compound question, each part — a yes or no
the evidence says the opposite of, or a number the evidence does not state. Otherwise it
is accepted when at least ``minSupport`` (default 0.3) of its content words occur in the
evidence; without evidence there is nothing to check that against."""

from __future__ import annotations

import re
from typing import Any

from plugyard.reasoning.questions import answers_kind, parts, read, verdict
from plugyard.reasoning.questions import evidence as statements_of

DEFAULT_MIN_SUPPORT = 0.3
_WORD = re.compile(r"[^\W_]{4,}", re.UNICODE)  # short words carry little evidence
_COMMON = frozenset(
    ("about", "also", "been", "being", "could", "does", "from", "have", "into", "just",
     "more", "most", "only", "other", "over", "same", "should", "some", "such", "than",
     "that", "their", "them", "then", "there", "these", "they", "this", "those", "very",
     "were", "what", "when", "where", "which", "while", "will", "with", "would", "your")
)  # fmt: skip


def validate(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
    answer = next(
        (str(input[k]) for k in ("answer", "responseMarkdown", "response") if input.get(k)), ""
    )
    if not answer.strip():
        return _verdict("rejected", "the answer is empty")
    unaddressed = _unaddressed(str(input.get("prompt") or ""), answer)
    if unaddressed is not None:
        return _verdict("rejected", unaddressed)
    evidence = " ".join(
        str(unit.get("text") or "") for unit in input.get("context") or [] if isinstance(unit, dict)
    )
    units = [u for u in input.get("context") or [] if isinstance(u, dict)]
    contradicted = _contradicted(str(input.get("prompt") or ""), answer, units)
    if contradicted is not None:
        return _verdict("rejected", contradicted)
    if not evidence.strip():
        return _verdict("accepted", "no evidence was given to check the answer against")
    invented = _numbers(answer) - _numbers(evidence)
    if invented:
        said = ", ".join(sorted(invented))
        return _verdict("rejected", f"the answer says {said}, which the evidence does not")
    # Numbers are checked above, as numbers: "1083" is "1,083" in the evidence.
    claimed = {w.lower() for w in _WORD.findall(answer) if not w.isdigit()} - _COMMON
    if not claimed:
        return _verdict("accepted", "the answer makes no checkable claim")
    known = {w.lower() for w in _WORD.findall(evidence)}
    support = len(claimed & known) / len(claimed)
    minimum = input.get("minSupport", DEFAULT_MIN_SUPPORT)
    if not isinstance(minimum, int | float) or not 0 <= minimum <= 1:
        minimum = DEFAULT_MIN_SUPPORT
    verdict = "accepted" if support >= minimum else "rejected"
    return _verdict(verdict, f"{support:.0%} of the answer's content words occur in the evidence")


_WANTS = {
    "date": "a date",
    "measure": "a number",
    "place": "a place",
    "person": "a name",
    "yesno": "yes or no",
}


def _unaddressed(prompt: str, answer: str) -> str | None:
    """Why ``answer`` does not answer ``prompt`` by its kind or form, or ``None``."""
    if not prompt.strip():
        return None
    whole = read(prompt)
    plain = re.sub(r"\[\d+\]", "", answer).strip()
    if whole.form == "word" and len(re.findall(r"[^\W_]+(?:[-'][^\W_]+)*", plain)) > 1:
        return "the question asks for a single word"
    for part in parts(prompt):
        question = read(part) if part != prompt else whole
        if not answers_kind(plain if question.kind != "yesno" else _lead(plain), question):
            return f"the answer does not address the question: it asks for {_WANTS[question.kind]}"
    return None


def _contradicted(prompt: str, answer: str, units: list[dict[str, Any]]) -> str | None:
    """A yes or no the evidence says the opposite of (``questions.verdict``)."""
    question = read(prompt) if prompt.strip() else None
    if question is None or question.kind != "yesno" or len(parts(prompt)) > 1:
        return None
    lead = re.match(r"\W*(yes|no)\b", _lead(re.sub(r"\[\d+\]", "", answer)), re.IGNORECASE)
    stated, scored = statements_of(units)
    decided = verdict(question, scored) if lead else None
    if lead is None or decided is None or (lead.group(1).lower() == "yes") == decided[0]:
        return None
    return f"the evidence says {'yes' if decided[0] else 'no'}: {stated[decided[1]][1]}"


def _numbers(text: str) -> set[str]:
    """The numbers ``text`` states (``1,083`` and ``1083`` alike; citation marks aside)."""
    plain = re.sub(r"\[\d+\]", " ", text)
    return {n.replace(",", "").rstrip(".") for n in re.findall(r"\d[\d,.]*", plain)}


def _lead(answer: str) -> str:
    """A yes/no answer's first word, past any heading of a folded compound answer."""
    lines = [ln for ln in answer.splitlines() if ln.strip() and not ln.startswith("**")]
    return lines[0] if lines else answer


def _verdict(verdict: str, reason: str) -> dict[str, Any]:
    return {
        "status": verdict,
        "verdict": verdict,
        "reason": reason,
        "metadata": {"llmCalls": 0, "model": None},
        "error": None,
    }
