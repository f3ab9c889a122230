"""The answer people read: a sentence or a short list made from a call's output.

``post_process: false`` — the output's own ``text`` when it has one (most bundled tools
write one line for people), else a compact rendering: its scalar members as
``name: value`` pairs in the order of the output schema, a list as at most
:data:`MAX_ITEMS` lines. ``post_process: true`` — the model writes the answer, and
:func:`unsupported` lists the numbers and proper nouns of that answer the data does not
hold; the flow falls back to the rendering here when it lists any (a small model
called the wrong flight "the cheapest" in one of three samples).

The structured output stays beside the answer as ``data``; this is only its text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from plugyard.llm.stated import fold, numbers_in, words_in

MAX_ITEMS = 10
MAX_VALUE_CHARS = 200
MAX_TEXT_CHARS = 2000
_DIGITS = re.compile(r"(?<![\d.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?")
_CAPITALISED = re.compile(r"(?<![.!?:]\s)(?<!^)\b([A-Z][\w'-]+)")
#: Capitalised for grammar, not names.
_COMMON = frozenset(
    {
        "the",
        "a",
        "an",
        "it",
        "its",
        "this",
        "that",
        "there",
        "these",
        "those",
        "i",
        "you",
        "your",
        "we",
        "in",
        "on",
        "at",
        "for",
        "from",
        "by",
        "yes",
        "no",
        "note",
        "here",
        "which",
        "what",
        "when",
        "where",
        "who",
        "how",
        "today",
        "tomorrow",
        "answer",
        "result",
    }
)


def compose(data: Any, output_schema: Mapping[str, Any] | None = None) -> str:
    """The text of an output shown without the model (``post_process: false``)."""
    if data is None:
        return "Done."
    if isinstance(data, str):
        return _cut(data.strip(), MAX_TEXT_CHARS) or "(empty)"
    if isinstance(data, Mapping):
        text = data.get("text")
        if isinstance(text, str) and text.strip():
            return _cut(text.strip(), MAX_TEXT_CHARS)
        return _mapping(data, _order(output_schema))
    if isinstance(data, list):
        return _items(data, "")
    return _scalar(data)


def _mapping(data: Mapping[str, Any], order: Sequence[str]) -> str:
    keys = [k for k in order if k in data] + [k for k in data if k not in order]
    scalars = [f"{_label(k)}: {_scalar(data[k])}" for k in keys if _is_scalar(data[k])]
    lines = ["; ".join(scalars) + "." if scalars else ""]
    for key in keys:
        value = data[key]
        if isinstance(value, list) and value:
            lines.append(_items(value, f"{_label(key)}:"))
        elif isinstance(value, Mapping) and value:
            inner = ", ".join(f"{_label(k)} {_scalar(v)}" for k, v in value.items()
                              if _is_scalar(v))  # fmt: skip
            if inner:
                lines.append(f"{_label(key)}: {inner}.")
    text = "\n".join(line for line in lines if line)
    return _cut(text, MAX_TEXT_CHARS) if text else "Done (nothing to show)."


def _items(values: Sequence[Any], title: str) -> str:
    shown = [f"- {_inline(v)}" for v in values[:MAX_ITEMS]]
    if len(values) > MAX_ITEMS:
        shown.append(f"- … and {len(values) - MAX_ITEMS} more")
    return "\n".join(([title] if title else []) + shown)


def _inline(value: Any) -> str:
    if isinstance(value, Mapping):
        text = value.get("text")
        if isinstance(text, str) and text.strip():
            return _cut(text.strip(), MAX_VALUE_CHARS)
        parts = [f"{_label(k)} {_scalar(v)}" for k, v in value.items() if _is_scalar(v)]
        return _cut(", ".join(parts), MAX_VALUE_CHARS) or "{…}"
    if isinstance(value, list):
        return _cut(", ".join(_inline(v) for v in value), MAX_VALUE_CHARS)
    return _scalar(value)


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _scalar(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}" if abs(value) < 1e15 else str(value)
    if isinstance(value, int | str):
        return _cut(str(value), MAX_VALUE_CHARS)
    return _cut(json.dumps(value, ensure_ascii=False, default=str), MAX_VALUE_CHARS)


def _label(key: Any) -> str:
    return str(key).replace("_", " ")


def _order(schema: Mapping[str, Any] | None) -> list[str]:
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    return [str(k) for k in properties] if isinstance(properties, Mapping) else []


def _cut(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[: cap - 1] + "…"


def unsupported(answer: str, data: Any, request: str) -> list[str]:
    """The numbers and proper nouns of ``answer`` found neither in ``data`` nor in the
    request: what a model may have made up while writing the answer."""
    source = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    numbers = numbers_in(source) | numbers_in(request)
    words = set(words_in(source)) | set(words_in(request))
    found: list[str] = []
    for match in _DIGITS.finditer(answer):
        whole, fraction = match.group(1).replace(",", ""), match.group(2) or ""
        value = float(f"{whole}.{fraction}" if fraction else whole)
        tolerance = 0.5 * 10 ** -len(fraction) if fraction else 0.5
        if value in (0.0, 1.0):
            continue
        if not any(abs(n - value) <= tolerance + 1e-12 for n in numbers):
            found.append(match.group(0))
    for match in _CAPITALISED.finditer(answer):
        word = match.group(1)
        if (word.isupper() and len(word) == 1) or word.lower() in _COMMON:
            continue
        if all(fold(w) not in words for w in words_in(word)):
            found.append(word)
    return found
