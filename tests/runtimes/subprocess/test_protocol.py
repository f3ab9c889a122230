"""Bad input from a wrapper is a documented error code; good input is an outcome."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugyard.errors import ERROR_CODES
from plugyard.runtimes.base import CallContext, Outcome, Progress
from plugyard.runtimes.subprocess import SubprocessPluginRuntime
from plugyard.runtimes.subprocess.protocol import ProtocolError, outcome, parse
from runtimes.subprocess.helpers import call, chaos_target, none_left, run


@pytest.mark.parametrize(
    ("do", "code"),
    [
        ("bad_json", "wrapper_protocol_error"),
        ("bad_version", "wrapper_protocol_error"),
        ("unknown_id", "wrapper_protocol_error"),
        ("bad_result", "wrapper_protocol_error"),
        ("error", "plugin_error"),
    ],
)
def test_bad_replies_answer_a_documented_code(
    runtime: SubprocessPluginRuntime, tmp_path: Path, do: str, code: str
) -> None:
    target, marker = chaos_target(tmp_path)
    result = call(runtime, target, {"do": do})
    assert result.error is not None
    assert result.error.code == code
    assert code in ERROR_CODES
    runtime.kill_all()  # a wrapper's own error leaves its worker running, rightly
    assert none_left(marker)


def test_a_wrapper_error_code_outside_the_set_is_kept_in_details(
    runtime: SubprocessPluginRuntime, tmp_path: Path
) -> None:
    target, _ = chaos_target(tmp_path)
    result = call(runtime, target, {"do": "error"})
    assert result.error is not None
    assert result.error.details["wrapper_code"] == "my_own_code"


def test_an_echo_round_trip_gives_the_data_back(
    runtime: SubprocessPluginRuntime, tmp_path: Path
) -> None:
    target, _ = chaos_target(tmp_path)
    assert call(runtime, target, {"do": "echo", "n": [1, "two"]}).data == {
        "do": "echo",
        "n": [1, "two"],
    }


def test_input_over_the_cap_is_refused_before_it_is_sent(
    runtime: SubprocessPluginRuntime, tmp_path: Path
) -> None:
    target, _ = chaos_target(tmp_path, config={"max_input_bytes": 600})
    result = call(runtime, target, {"do": "echo", "blob": "x" * 1000})
    assert result.error is not None
    assert result.error.code == "request_too_large"
    assert call(runtime, target, {"do": "echo"}).status == "success"


def test_a_streaming_operation_yields_progress_then_the_result(
    runtime: SubprocessPluginRuntime, tmp_path: Path
) -> None:
    target, _ = chaos_target(tmp_path)

    async def go() -> list[object]:
        answer = await runtime.invoke(
            target, target.descriptor.operations[1], {"do": "progress"}, CallContext("s"), None
        )
        assert not isinstance(answer, Outcome)
        return [item async for item in answer]

    items = run(runtime, go())
    assert [type(i) for i in items] == [Progress, Progress, Progress, Outcome]
    assert items[1] == Progress("step 1", None, 50.0)
    assert isinstance(items[-1], Outcome) and items[-1].data == "done"


class _Cache:
    def get(self, key: str) -> str:
        return f"cached {key}"


class _Host:
    cache = _Cache()


def test_a_host_call_is_served_by_the_host_object(
    runtime: SubprocessPluginRuntime, tmp_path: Path
) -> None:
    target, _ = chaos_target(tmp_path)
    result = call(runtime, target, {"do": "host"}, host=_Host())
    assert result.data == {"id": "h1", "result": "cached k"}
    refused = call(runtime, target, {"do": "host", "call": "__dict__"}, host=_Host())
    assert refused.data["error"]["code"] == "capability_unavailable"


@pytest.mark.parametrize(
    "line",
    [b"[1]\n", b'{"id": true, "result": 1}\n', b'{"id": 1}\n', b'{"id": "h1", "method": "host"}\n'],
)
def test_lines_that_are_not_protocol_are_refused(line: bytes) -> None:
    with pytest.raises(ProtocolError):
        parse(line)


def test_a_result_defaults_to_success() -> None:
    assert outcome({"data": 3}) == Outcome(data=3)
    assert outcome({"status": "error", "error": {"code": "x", "message": "m"}}).status == "error"
