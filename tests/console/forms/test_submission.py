"""Posted forms back into parameters: types, Auto, show_when judged again, messages."""

from __future__ import annotations

from starlette.datastructures import FormData

from plugyard.console.forms.schema_form import build_form
from plugyard.console.forms.submission import read_submission

SCHEMA = {
    "type": "object",
    "required": ["mode"],
    "properties": {
        "mode": {"type": "string", "enum": ["simple", "delegate"]},
        "subject": {
            "type": "string",
            "x-ui": {"show_when": {"field": "mode", "equals": "delegate"}},
        },
        "hours": {"type": "integer"},
        "ratio": {"type": "number"},
        "query": {"type": ["string", "null"]},
        "verbose": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "integer"}},
        "extra": {"type": "object", "properties": {"note": {"type": "string"}}},
        "blob": {"type": "array", "items": {"type": "object"}},
    },
}


def submit(**values: str) -> object:
    return read_submission(build_form(SCHEMA), FormData(list(values.items())))


def test_values_come_back_typed() -> None:
    done = submit(**{"/mode": '"delegate"', "/subject": "ann", "/hours": "12", "/ratio": "0.5",
                     "/query": "", "/verbose": "true", "/tags": "1\n2\n", "/extra/note": "hi",
                     "/blob": '[{"a": 1}]'})  # fmt: skip
    assert done.ok  # type: ignore[attr-defined]
    assert done.params == {  # type: ignore[attr-defined]
        "mode": "delegate", "subject": "ann", "hours": 12, "ratio": 0.5, "query": None,
        "verbose": True, "tags": [1, 2], "extra": {"note": "hi"}, "blob": [{"a": 1}]}  # fmt: skip


def test_a_field_whose_condition_fails_is_left_out_whatever_was_posted() -> None:
    done = submit(**{"/mode": '"simple"', "/subject": "sneaked in"})
    assert "subject" not in done.params  # type: ignore[attr-defined]


def test_wrong_types_name_the_field_and_the_value() -> None:
    done = submit(**{"/mode": '"simple"', "/hours": "abc", "/tags": "1\nx", "/blob": "{",
                     "/ratio": "nan"})  # fmt: skip
    errors = done.errors  # type: ignore[attr-defined]
    assert set(errors) == {"/hours", "/tags", "/blob", "/ratio"}
    assert "whole number" in errors["/hours"] and "'abc'" in errors["/hours"]


def test_a_value_outside_the_options_is_refused() -> None:
    done = submit(**{"/mode": '"root"'})
    assert done.errors == {"/mode": "not one of the options"}  # type: ignore[attr-defined]
