"""A DS027 ``val-plugin`` as module-level family functions: ``validate(input, ctx)``.

The answer is read from ``answer``, ``responseMarkdown`` or ``response`` of the input; the
evidence is the input's ``context`` units. An answer is accepted when at least
``minSupport`` (default 0.3) of its content words occur in the evidence; without
evidence there is nothing to check against and it is accepted."""

from __future__ import annotations

import re
from typing import Any

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
    evidence = " ".join(
        str(unit.get("text") or "") for unit in input.get("context") or [] if isinstance(unit, dict)
    )
    if not evidence.strip():
        return _verdict("accepted", "no evidence was given to check the answer against")
    claimed = {w.lower() for w in _WORD.findall(answer)} - _COMMON
    if not claimed:
        return _verdict("accepted", "the answer makes no checkable claim")
    known = {w.lower() for w in _WORD.findall(evidence)}
    support = len(claimed & known) / len(claimed)
    minimum = input.get("minSupport", DEFAULT_MIN_SUPPORT)
    if not isinstance(minimum, int | float) or not 0 <= minimum <= 1:
        minimum = DEFAULT_MIN_SUPPORT
    verdict = "accepted" if support >= minimum else "rejected"
    return _verdict(verdict, f"{support:.0%} of the answer's content words occur in the evidence")


def _verdict(verdict: str, reason: str) -> dict[str, Any]:
    return {
        "status": verdict,
        "verdict": verdict,
        "reason": reason,
        "metadata": {"llmCalls": 0, "model": None},
        "error": None,
    }
