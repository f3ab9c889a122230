"""The closed set of error codes, and its documentation."""

import re
from pathlib import Path

import pytest

from plugyard import errors
from plugyard.errors import ERROR_CODES, ManifestError, PlugyardError, Problem

DOCS = Path(__file__).resolve().parents[1] / "docs" / "errors.md"


def test_errors_module_imports_nothing_else_from_the_package() -> None:
    source = Path(errors.__file__).read_text()
    assert not re.search(r"^\s*(from|import)\s+plugyard", source, re.MULTILINE)


def test_every_code_is_documented_with_its_status() -> None:
    text = DOCS.read_text()
    for code, spec in ERROR_CODES.items():
        assert re.search(rf"^\| `{code}` \| {spec.http_status} \|", text, re.MULTILINE), code


def test_docs_list_no_code_that_does_not_exist() -> None:
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", DOCS.read_text(), re.MULTILINE))
    assert documented == set(ERROR_CODES)


def test_codes_are_snake_case() -> None:
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", code) for code in ERROR_CODES)


def test_manifest_error_takes_its_first_problems_code() -> None:
    first, second = Problem("manifest_syntax", "/a", "x"), Problem("manifest_empty", "", "y")
    error = ManifestError([first, second])
    assert error.code == "manifest_syntax"
    assert error.http_status == 422
    assert len(error.problems) == 2


def test_manifest_error_needs_a_problem() -> None:
    with pytest.raises(ValueError, match="at least one"):
        ManifestError([])


def test_unknown_code_maps_to_500() -> None:
    assert PlugyardError("boom", code="not_a_code").http_status == 500
