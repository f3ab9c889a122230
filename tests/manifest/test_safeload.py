"""Hostile and odd documents: each is refused with its code and pointer, or read as
documented."""

from __future__ import annotations

import pytest

from plugyard.errors import ManifestError
from plugyard.manifest.safeload import MAX_BYTES, NumberText, parse


def codes(raw: str | bytes) -> list[tuple[str, str]]:
    with pytest.raises(ManifestError) as info:
        parse(raw)
    return [(p.code, p.pointer) for p in info.value.problems]


def test_yaml_reads_json_compatible_scalars_only() -> None:
    doc = parse("a: 1\non: yes\nd: 2024-01-01\nt: true\nn: ~\n").documents[0]
    assert doc == {"a": 1, "on": "yes", "d": "2024-01-01", "t": True, "n": None}


def test_floats_remember_how_they_were_written() -> None:
    version = parse("version: 1.10\n").documents[0]["version"]
    assert isinstance(version, NumberText)
    assert version.text == "1.10"


def test_multi_document_yaml_gives_every_document() -> None:
    assert len(parse("a: 1\n---\nb: 2\n---\nc: 3\n").documents) == 3


def test_billion_laughs_is_refused_before_expansion() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 10):
        refs = ", ".join([f"*a{level - 1}"] * 10)
        lines.append(f"a{level}: &a{level} [{refs}]")
    assert codes("\n".join(lines))[0][0] == "manifest_too_large"


def test_small_anchors_are_fine() -> None:
    doc = parse("base: &b {x: 1}\nother: *b\n").documents[0]
    assert doc["other"] == {"x": 1}


def test_recursive_alias_is_refused() -> None:
    assert codes("a: &a [*a]\n")[0][0] in {"manifest_syntax", "manifest_too_deep"}


@pytest.mark.parametrize(
    "text",
    [
        "a: !!python/object/apply:os.system ['true']\n",
        "a: !!python/name:os.system\n",
        "a: !custom 1\n",
        "a: !!binary aGVsbG8=\n",
        "a: !!set {x: null}\n",
    ],
)
def test_tags_outside_json_are_refused_with_pointer(text: str) -> None:
    assert codes(text)[0] == ("manifest_yaml_tag", "/a")


def test_duplicate_yaml_key_is_refused_with_pointer() -> None:
    assert ("manifest_duplicate_key", "/p/a") in codes("p:\n  a: 1\n  a: 2\n")


def test_duplicate_json_key_is_refused_with_pointer() -> None:
    assert codes('{"p": {"a": 1, "a": 2}}') == [("manifest_duplicate_key", "/p/a")]


@pytest.mark.parametrize("text", ['{"a": [NaN]}', '{"a": [Infinity]}', "a: [.inf]", "a: [-.Inf]"])
def test_non_finite_numbers_are_refused_with_pointer(text: str) -> None:
    assert codes(text) == [("manifest_non_finite", "/a/0")]


@pytest.mark.parametrize(
    "text",
    ["[" * 5000 + "]" * 5000, "a: " + "[" * 100 + "]" * 100, '{"a":' * 3000 + "1" + "}" * 3000],
)
def test_deep_nesting_is_refused(text: str) -> None:
    assert codes(text)[0][0] == "manifest_too_deep"


def test_deep_block_nesting_is_refused() -> None:
    text = "".join(" " * i + f"k{i}:\n" for i in range(200)) + " " * 200 + "v\n"
    assert codes(text)[0][0] == "manifest_too_deep"


def test_oversized_document_is_refused_before_decoding() -> None:
    assert codes(b"a: " + b"x" * MAX_BYTES) == [("manifest_too_large", "")]


@pytest.mark.parametrize("raw", [b"\xff\xfe a: 1", b"a: \xc3\x28", b"a: 1\x00"])
def test_invalid_text_is_refused(raw: bytes) -> None:
    assert codes(raw)[0][0] == "manifest_encoding"


def test_non_string_keys_are_refused() -> None:
    assert codes("1: a\n")[0] == ("manifest_invalid_key", "")


def test_syntax_errors_have_a_code() -> None:
    assert codes("a: [1, 2\n")[0][0] == "manifest_syntax"


def test_huge_integer_literal_is_an_error_not_a_crash() -> None:
    assert codes('{"a": ' + "9" * 5000 + "}")[0][0] in {"manifest_syntax", "manifest_invalid_value"}


def test_unquoted_colon_in_a_value_is_repaired_with_a_warning() -> None:
    parsed = parse("id: mail\ndescription_long: Helps. Use for: send email, write.\n")
    assert parsed.documents[0]["description_long"] == "Helps. Use for: send email, write."
    assert [w.code for w in parsed.warnings] == ["yaml_repaired"]


def test_python_manifest_is_read_without_running_it() -> None:
    text = "import os\nos.system('false')\nPLUGIN_MANIFEST = {'name': 'x', 'n': (1, 2)}\n"
    parsed = parse(text)
    assert parsed.syntax == "python"
    assert parsed.documents[0] == {"name": "x", "n": [1, 2]}


def test_python_manifest_that_is_not_a_literal_is_refused() -> None:
    assert codes("PLUGIN_MANIFEST = dict(name=__import__('os').getcwd())\n")[0][0] == (
        "manifest_no_python_manifest"
    )


def test_python_manifest_with_elided_entries_reads_with_a_warning() -> None:
    parsed = parse('PLUGIN_MANIFEST = {\n  "name": "g",\n  ...,\n  "x": ["d"],\n}\n')
    assert parsed.documents[0] == {"name": "g", "x": ["d"]}
    assert parsed.warnings[0].code == "placeholder_value"


def test_python_sets_and_bytes_are_refused_with_pointer() -> None:
    assert codes("PLUGIN_MANIFEST = {'a': {1, 2}, 'b': b'x'}\n") == [
        ("manifest_invalid_value", "/a"),
        ("manifest_invalid_value", "/b"),
    ]


def test_javascript_literal_reads_with_placeholders_dropped() -> None:
    text = '{ id: "k", usesLLM: boolean, cost: "a" | "b", n: 1, list: [1, 2,], }'
    parsed = parse(text)
    assert parsed.syntax == "js"
    assert parsed.documents[0] == {"id": "k", "n": 1, "list": [1, 2]}
    assert {w.pointer for w in parsed.warnings} == {"/usesLLM", "/cost"}


def test_placeholders_in_yaml_are_dropped_with_pointers() -> None:
    parsed = parse("a: ...\nb: [ ... ]\nc: { ... }\nd: 1\n")
    assert parsed.documents[0] == {"b": [], "c": {}, "d": 1}
    assert {w.pointer for w in parsed.warnings} == {"/a", "/b/0", "/c/..."}


def test_empty_document_is_refused() -> None:
    assert codes("# nothing\n")[0][0] == "manifest_empty"
