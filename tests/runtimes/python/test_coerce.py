"""What plugin code returns becomes an Outcome in one place, by one set of rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from plugyard.errors import ERROR_CODES
from plugyard.runtimes.base import ErrorInfo, Outcome, Progress
from plugyard.runtimes.python.coerce import crashed, to_outcome, to_progress

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(JSON)
def test_any_json_value_becomes_an_outcome(value: Any) -> None:
    outcome = to_outcome(value)
    assert isinstance(outcome, Outcome)
    assert isinstance(outcome.status, str)
    if outcome.status == "success" and not isinstance(value, dict):
        assert outcome.data == value


@given(JSON)
def test_any_json_value_from_a_family_method_becomes_an_outcome(value: Any) -> None:
    outcome = to_outcome(value, family=True)
    assert isinstance(outcome, Outcome)
    assert outcome.status == "error" or isinstance(value, dict) or value is None


@given(JSON)
def test_any_streamed_value_becomes_progress(value: Any) -> None:
    assert isinstance(to_progress(value), Progress)


def test_plain_data_is_success() -> None:
    assert to_outcome({"temperature": 21}) == Outcome(data={"temperature": 21})


def test_a_mapping_with_only_a_status_of_its_own_is_data() -> None:
    assert to_outcome({"status": "ok", "count": 2}).data == {"status": "ok", "count": 2}


def test_a_shu_envelope_mapping_is_unpacked() -> None:
    outcome = to_outcome(
        {
            "status": "success",
            "data": [1],
            "cost": {"tokens": 3},
            "diagnostics": "note",
            "skips": [{"id": "x", "reason": "too_large"}],
            "citations": [{"type": "url", "ref": "https://e.org"}],
            "next_cursor": 7,
        }
    )
    assert outcome == Outcome(
        data=[1],
        cost={"tokens": 3.0},
        diagnostics=("note",),
        skips=({"id": "x", "reason": "too_large"},),
        citations=({"type": "url", "ref": "https://e.org"},),
        next_cursor="7",
    )


def test_a_tool_result_object_is_read_by_its_attributes() -> None:
    @dataclass
    class ToolResult:
        status: str
        data: Any = None
        error: Any = None

    outcome = to_outcome(ToolResult("error", error={"code": "timeout", "message": "slow"}))
    assert outcome.error == ErrorInfo("timeout", "slow")


def test_an_error_envelope_without_error_is_a_plugin_error() -> None:
    outcome = to_outcome({"status": "error"})
    assert outcome.error is not None and outcome.error.code == "plugin_error"


def test_a_pydantic_model_is_dumped() -> None:
    class Point(BaseModel):
        x: int
        y: int

    assert to_outcome(Point(x=1, y=2)).data == {"x": 1, "y": 2}


def test_malformed_envelope_parts_are_invalid_output() -> None:
    for bad in (
        {"status": "success", "data": 1, "diagnostics": [1]},
        {"status": "success", "data": 1, "skips": "none"},
        {"status": "success", "data": 1, "error": 5},
        {"status": "fine", "data": 1},
    ):
        outcome = to_outcome(bad)
        assert outcome.error is not None and outcome.error.code == "invalid_output", bad


def test_a_family_answer_that_is_no_status_object_is_invalid_output() -> None:
    outcome = to_outcome(["not", "a", "status"], family=True)
    assert outcome.error is not None and outcome.error.code == "invalid_output"


def test_an_exception_code_outside_the_closed_set_is_plugin_error() -> None:
    class Odd(Exception):
        code = 404

    assert crashed(Odd("x"), debug=False).error == ErrorInfo(
        "plugin_error", "Odd: x", {"type": "Odd"}
    )
    assert "timeout" in ERROR_CODES


def test_progress_from_mappings_and_text() -> None:
    assert to_progress({"message": "half", "percent": 50}) == Progress("half", None, 50.0)
    assert to_progress("step") == Progress(message="step")
    assert to_progress({"other": 1}) == Progress(data={"other": 1})
