"""Parameter schemas as forms: every Shu hint, both spellings, and bounded work."""

from __future__ import annotations

import time
from typing import Any

from plugyard.console.forms.schema_form import MAX_FIELDS, build_form


def by_name(schema: dict[str, Any]) -> dict[str, Any]:
    return {f.name: f for f in build_form(schema).fields}


def test_hints_are_read_under_both_spellings() -> None:
    fields = by_name({"type": "object", "properties": {
        "a": {"type": "string", "x-ui": {"help": "dash"}},
        "b": {"type": "string", "x_ui": {"help": "underscore"}},
    }})  # fmt: skip
    assert fields["a"].help == "dash" and fields["b"].help == "underscore"


def test_hidden_and_bound_fields_are_not_rendered() -> None:
    form = build_form({"type": "object", "properties": {
        "secret": {"type": "string", "x-ui": {"hidden": True}},
        "email": {"type": "string", "x-binding": "identity:email"},
        "shown": {"type": "string"},
    }})  # fmt: skip
    assert [f.name for f in form.fields] == ["shown"]
    assert form.bound == [("email", "identity:email")] and form.hidden == ["secret"]


def test_enums_take_their_labels_and_help_and_nullable_gets_auto() -> None:
    fields = by_name({"type": "object", "properties": {
        "op": {"type": "string", "enum": ["ingest", "digest"], "x-ui": {
            "enum_labels": {"ingest": "Ingest full content"},
            "enum_help": {"digest": "Summarises."}}},
        "level": {"type": ["string", "null"], "enum": ["low", None],
                  "x-ui": {"placeholder": "Auto level"}},
        "flag": {"type": ["boolean", "null"]},
    }})  # fmt: skip
    op = fields["op"]
    assert [(o.value, o.label, o.help) for o in op.options] == [
        ('"ingest"', "Ingest full content", None),
        ('"digest"', "digest", "Summarises."),
    ]
    assert fields["level"].nullable and fields["level"].placeholder == "Auto level"
    assert fields["flag"].kind == "select" and fields["flag"].nullable


def test_show_when_takes_all_three_shapes() -> None:
    fields = by_name({"type": "object", "properties": {
        "mode": {"type": "string"},
        "a": {"type": "string", "x-ui": {"show_when": {"field": "mode", "equals": "x"}}},
        "b": {"type": "string", "x-ui": {"show_when": {"field": "mode", "in": ["x", "y"]}}},
        "c": {"type": "string", "x-ui": {"show_when": {"mode": "z"}}},
    }})  # fmt: skip
    assert fields["a"].show_when == ({"path": "/mode", "in": ["x"]},)
    assert fields["b"].show_when == ({"path": "/mode", "in": ["x", "y"]},)
    assert fields["c"].show_when == ({"path": "/mode", "in": ["z"]},)


def test_nested_objects_and_arrays() -> None:
    fields = by_name({"type": "object", "properties": {
        "address": {"type": "object", "properties": {"city": {"type": "string"}}},
        "tags": {"type": "array", "items": {"type": "string"}},
        "picks": {"type": "array", "items": {"enum": ["a", "b"]}},
        "rows": {"type": "array", "items": {"type": "object"}},
    }})  # fmt: skip
    assert fields["address"].kind == "object"
    assert fields["address"].children[0].path == "/address/city"
    assert (fields["tags"].kind, fields["tags"].item) == ("lines", "string")
    assert fields["picks"].kind == "multi" and fields["rows"].kind == "json"


def test_a_schema_that_refers_to_itself_ends_in_a_json_box() -> None:
    schema = {"type": "object", "$defs": {"node": {"type": "object", "properties": {
        "name": {"type": "string"}, "child": {"$ref": "#/$defs/node"}}}},
        "properties": {"root": {"$ref": "#/$defs/node"}}}  # fmt: skip
    started = time.perf_counter()
    root = build_form(schema).fields[0]
    assert time.perf_counter() - started < 1.0
    child = next(f for f in root.children if f.name == "child")
    assert child.kind == "json" and child.note


def test_a_thousand_fields_become_one_json_document() -> None:
    properties = {f"p{i}": {"type": "string"} for i in range(1000)}
    started = time.perf_counter()
    form = build_form({"type": "object", "properties": properties})
    assert time.perf_counter() - started < 1.0
    assert form.whole_json and not form.fields and str(MAX_FIELDS) in (form.note or "")
