"""A posted form back into parameters, with a plain message for each value of the wrong
type. ``show_when`` is judged here again on the posted values: a field whose condition
does not hold is left out, whatever the browser sent (the page's script only mirrors
this rule)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.datastructures import FormData

from plugyard.console.forms.schema_form import Field, Form

JSON_FIELD = "__json__"
_MISSING = object()


@dataclass(slots=True)
class Submission:
    params: dict[str, Any]
    errors: dict[str, str] = field(default_factory=dict)  # input name → message
    values: dict[str, Any] = field(default_factory=dict)  # what was posted, to fill again

    @property
    def ok(self) -> bool:
        return not self.errors


def read_submission(form: Form, posted: FormData) -> Submission:
    values: dict[str, Any] = {
        k: posted.getlist(k) if len(posted.getlist(k)) > 1 else posted.get(k) for k in posted
    }
    out = Submission({}, values=values)
    if form.whole_json:
        parsed = _json(posted.get(JSON_FIELD), JSON_FIELD, out)
        if parsed is not _MISSING and not isinstance(parsed, dict):
            out.errors[JSON_FIELD] = "the parameters must be a JSON object"
        elif isinstance(parsed, dict):
            out.params = parsed
        return out
    out.params = _object(form.fields, posted, out)
    return out


def _object(fields: list[Field], posted: FormData, out: Submission) -> dict[str, Any]:
    result: dict[str, Any] = {}
    read: dict[str, Any] = {}
    # Conditions refer to siblings: read every field, then keep those whose conditions hold.
    for item in fields:
        value = _value(item, posted, out)
        read[item.path] = value
    for item in fields:
        if not shown(item, read):
            out.errors.pop(item.path, None)
            continue
        value = read[item.path]
        if value is not _MISSING:
            result[item.name] = value
    return result


def shown(item: Field, siblings: Mapping[str, Any]) -> bool:
    for condition in item.show_when:
        value = siblings.get(condition["path"], _MISSING)
        if value is _MISSING or not any(_same(value, v) for v in condition["in"]):
            return False
    return True


def _same(a: Any, b: Any) -> bool:
    return bool(json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True))


def _value(item: Field, posted: FormData, out: Submission) -> Any:
    if item.kind == "object":
        inner = _object(item.children, posted, out)
        return inner if inner or item.required else _MISSING
    if item.kind == "checkbox":
        return posted.get(item.path) is not None
    if item.kind == "multi":
        chosen = [_json(v, item.path, out) for v in posted.getlist(item.path)]
        return [v for v in chosen if v is not _MISSING]
    raw = posted.get(item.path)
    text = raw if isinstance(raw, str) else ""
    if not text.strip():
        if item.nullable:
            return None
        return "" if item.kind == "text" and item.required else _MISSING
    if item.kind == "text":
        return text
    if item.kind == "select":
        value = _json(text, item.path, out)
        if value is not _MISSING and text not in {o.value for o in item.options}:
            out.errors[item.path] = "not one of the options"
            return _MISSING
        return value
    if item.kind in ("integer", "number"):
        return _number(text.strip(), item.kind, item.path, out)
    if item.kind == "lines":
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if item.item == "string":
            return lines
        numbers = [_number(line, item.item or "number", item.path, out) for line in lines]
        return [n for n in numbers if n is not _MISSING]
    return _json(text, item.path, out)


def _number(text: str, kind: str, path: str, out: Submission) -> Any:
    try:
        if kind == "integer":
            return int(text)
        number = float(text)
    except ValueError:
        what = "a whole number" if kind == "integer" else "a number"
        out.errors[path] = f"expected {what}, got {text[:40]!r}"
        return _MISSING
    if number != number or number in (float("inf"), float("-inf")):
        out.errors[path] = "expected a finite number"
        return _MISSING
    return int(number) if number.is_integer() and "." not in text and "e" not in text else number


def _json(raw: Any, path: str, out: Submission) -> Any:
    if not isinstance(raw, str) or not raw.strip():
        return _MISSING
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        out.errors[path] = f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        return _MISSING
