"""A rule-based guardrail: regular expressions for prompt injection, credentials and
personal data. Deliberately simple and explainable; a model-based classifier can stand
beside it at the same placement."""

from __future__ import annotations

import re
from typing import Any

DEFAULT_MAX_LENGTH = 20_000
HARD_MAX_LENGTH = 1_000_000

_INJECTION = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\b(ignore|disregard|forget)\s+(all\s+|any\s+|the\s+)?(previous|prior|above|earlier)"
        r"\s+(instructions|prompts?|rules|messages)",
        # "your" names the model's own rules: "disregard your rules" (the "the" of "don't
        # forget the rules" does not).
        r"\b(ignore|disregard|forget)\s+(all\s+)?your\s+((previous|prior|earlier|original)\s+)?"
        r"(instructions|prompts?|rules|guidelines|programming)",
        r"\bact\s+as\s+(an?\s+)?(unfiltered|unrestricted|uncensored|jailbroken)\b",
        r"\byou\s+are\s+now\s+(DAN|in\s+developer\s+mode|jailbroken)\b",
        r"\b(reveal|print|show|repeat)\s+(your|the)\s+(system|hidden)\s+(prompt|instructions)",
        r"\bpretend\s+(that\s+)?you\s+(have\s+no|are\s+not\s+bound\s+by)\s+(rules|restrictions)",
    )
]
_SECRETS = {
    "aws_access_key": re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    "private_key": re.compile(r"-----BEGIN (?:RSA |EC |DSA |OPENSSH )?PRIVATE KEY-----"),
    "github_token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    "api_key": re.compile(r"\bsk-[A-Za-z0-9_-]{20,}\b"),
    "slack_token": re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b"),
}
_PERSONAL = {
    "email": re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"),
    "card_number": re.compile(r"\b(?:\d[ -]?){12,18}\d\b"),
    "phone": re.compile(r"(?<![\w+])\+?\d[\d ()-]{7,}\d(?!\w)"),
}


class BasicGuardrail:
    def execute(self, params: dict[str, Any], context: Any = None, host: Any = None) -> Any:
        text = params.get("text")
        if not isinstance(text, str) or len(text) > HARD_MAX_LENGTH:
            raise ValueError(f"'text' must be a string of at most {HARD_MAX_LENGTH} characters")
        limit = params.get("max_length")
        limit = limit if isinstance(limit, int) and limit > 0 else DEFAULT_MAX_LENGTH
        reasons: list[str] = []
        findings: list[dict[str, Any]] = []
        if len(text) > limit:
            reasons.append("too_long")
        for pattern in _INJECTION:
            for match in pattern.finditer(text):
                findings.append({"kind": "prompt_injection", "start": match.start()})
        terms = [t for t in params.get("blocked_terms") or [] if isinstance(t, str) and t]
        for term in terms:
            for match in re.finditer(rf"(?<!\w){re.escape(term)}(?!\w)", text, re.IGNORECASE):
                findings.append({"kind": "blocked_term", "start": match.start(), "term": term})
        spans: list[tuple[int, int, str]] = []
        for kind, pattern in _SECRETS.items():
            for match in pattern.finditer(text):
                findings.append({"kind": "secret", "start": match.start(), "type": kind})
                spans.append((match.start(), match.end(), kind))
        for kind, pattern in _PERSONAL.items():
            for match in pattern.finditer(text):
                if kind == "card_number" and not _luhn(match.group()):
                    continue
                if kind == "phone" and _covered(match.span(), spans):
                    continue  # a card number also looks like a phone number
                findings.append({"kind": "personal_data", "start": match.start(), "type": kind})
                spans.append((match.start(), match.end(), kind))
        for kind in ("prompt_injection", "secret", "blocked_term"):
            if any(f["kind"] == kind for f in findings):
                reasons.append(kind)
        findings.sort(key=lambda f: int(f["start"]))
        redacted = _redact(text, spans) if params.get("redact", True) else text
        return {"allowed": not reasons, "reasons": reasons, "findings": findings, "text": redacted}


def _luhn(candidate: str) -> bool:
    digits = [int(c) for c in candidate if c.isdigit()]
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for index, digit in enumerate(reversed(digits)):
        if index % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def _covered(span: tuple[int, int], spans: list[tuple[int, int, str]]) -> bool:
    return any(start < span[1] and span[0] < end for start, end, _ in spans)


def _redact(text: str, spans: list[tuple[int, int, str]]) -> str:
    out, position = [], 0
    for start, end, kind in sorted(spans):
        if start < position:
            continue
        out.append(text[position:start])
        out.append(f"[{kind.upper()}]")
        position = end
    out.append(text[position:])
    return "".join(out)
