"""Text statistics, a Shu-style plugin class. Counting is plain regular expressions over
Unicode text: words are runs of letters and digits (inner apostrophes and hyphens kept),
sentences end at ``.``, ``!``, ``?`` or ``…`` followed by a space and an upper-case letter
or the end, common abbreviations excepted."""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

MAX_CHARACTERS = 2_000_000
READING_WPM = 238  # average silent reading speed of adults (Brysbaert, 2019)
SPEAKING_WPM = 150
_WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s+[\"'“‘(\[]?[A-Z0-9À-Ý]|\s*$)")
_ABBREVIATIONS = frozenset(
    {"e.g", "i.e", "etc", "vs", "cf", "mr", "mrs", "ms", "dr", "prof", "st", "no", "fig", "al"}
)
_STOPWORDS = frozenset(
    (
        "a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any",
        "are", "as", "at", "be", "because", "been", "before", "being", "both", "but", "by",
        "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few",
        "for", "from", "further", "had", "has", "have", "having", "he", "her", "here",
        "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself",
        "just", "me", "more", "most", "my", "no", "nor", "not", "now", "of", "off", "on",
        "once", "only", "or", "other", "our", "ours", "out", "over", "own", "same", "she",
        "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them",
        "then", "there", "these", "they", "this", "those", "through", "to", "too", "under",
        "until", "up", "very", "was", "we", "were", "what", "when", "where", "which",
        "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours"
    )
)  # fmt: skip


class TextStatsPlugin:
    name = "text-stats"

    def get_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "text": {
                    "type": "string",
                    "maxLength": MAX_CHARACTERS,
                    "description": "The text to measure.",
                },
                "words_per_minute": {
                    "type": "integer",
                    "minimum": 50,
                    "maximum": 1000,
                    "default": READING_WPM,
                    "description": "Reading speed for the reading-time estimate.",
                },
                "top": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 100,
                    "default": 10,
                    "description": "How many of the most frequent words (stop words left out).",
                },
            },
            "required": ["text"],
        }

    def get_output_schema(self) -> dict[str, Any]:
        count = {"type": "integer", "minimum": 0}
        number = {"type": "number", "minimum": 0}
        return {
            "type": "object",
            "properties": {
                "characters": count,
                "characters_without_spaces": count,
                "words": count,
                "unique_words": count,
                "sentences": count,
                "paragraphs": count,
                "lines": count,
                "average_word_length": number,
                "average_sentence_words": number,
                "lexical_diversity": {"type": "number", "minimum": 0, "maximum": 1},
                "reading_time_seconds": count,
                "reading_time": {"type": "string"},
                "speaking_time_seconds": count,
                "top_words": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"word": {"type": "string"}, "count": count},
                        "required": ["word", "count"],
                    },
                },
            },
            "required": ["characters", "words", "sentences", "reading_time_seconds"],
        }

    def requires_permission(self) -> list[str]:
        return []

    def execute(self, params: dict[str, Any], context: Any = None, host: Any = None) -> Any:
        text = params.get("text")
        if not isinstance(text, str):
            return _error("'text' must be a string")
        if len(text) > MAX_CHARACTERS:
            return _error(f"the text is longer than {MAX_CHARACTERS} characters")
        return {"status": "success", "data": measure(text, **_options(params))}


def measure(text: str, words_per_minute: int = READING_WPM, top: int = 10) -> dict[str, Any]:
    words = _WORD.findall(text)
    lowered = [w.lower() for w in words]
    sentences = _sentences(text)
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    reading = math.ceil(len(words) * 60 / words_per_minute) if words else 0
    frequent = Counter(w for w in lowered if len(w) > 1 and w not in _STOPWORDS and not w.isdigit())
    return {
        "characters": len(text),
        "characters_without_spaces": sum(1 for c in text if not c.isspace()),
        "words": len(words),
        "unique_words": len(set(lowered)),
        "sentences": sentences,
        "paragraphs": len(paragraphs),
        "lines": len(text.splitlines()),
        "average_word_length": round(sum(map(len, words)) / len(words), 2) if words else 0,
        "average_sentence_words": round(len(words) / sentences, 2) if sentences else 0,
        "lexical_diversity": round(len(set(lowered)) / len(words), 3) if words else 0,
        "reading_time_seconds": reading,
        "reading_time": _duration(reading),
        "speaking_time_seconds": math.ceil(len(words) * 60 / SPEAKING_WPM) if words else 0,
        "top_words": [{"word": w, "count": n} for w, n in frequent.most_common(top)],
    }


def _sentences(text: str) -> int:
    count, start = 0, 0
    for match in _SENTENCE_END.finditer(text):
        before = text[start : match.start()]
        last = before.rsplit(None, 1)[-1].lower() if before.split() else ""
        if match.group().startswith(".") and last.rstrip(".") in _ABBREVIATIONS:
            continue
        if _WORD.search(before):
            count += 1
        start = match.end()
    if _WORD.search(text[start:]):
        count += 1  # a last sentence without its full stop
    return count


def _duration(seconds: int) -> str:
    if seconds < 60:
        return f"{seconds} s"
    minutes, rest = divmod(seconds, 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def _options(params: dict[str, Any]) -> dict[str, int]:
    options: dict[str, int] = {}
    wpm, top = params.get("words_per_minute"), params.get("top")
    if isinstance(wpm, int) and not isinstance(wpm, bool) and 50 <= wpm <= 1000:
        options["words_per_minute"] = wpm
    if isinstance(top, int) and not isinstance(top, bool) and 0 <= top <= 100:
        options["top"] = top
    return options


def _error(message: str) -> dict[str, Any]:
    return {"status": "error", "error": {"code": "invalid_parameters", "message": message}}
