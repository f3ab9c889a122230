"""Wrappers that hang, crash, flood or hide: a result within the deadline + 1 s, and no
process of theirs left 2 s later."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from plugyard.runtimes.subprocess import SubprocessPluginRuntime
from runtimes.subprocess.helpers import call, chaos_target, none_left

CASES = {
    "hang": "timeout",
    "crash_mid": "worker_lost",
    "big_line": "wrapper_protocol_error",
    "no_newline": "timeout",
    "close_stdout": "worker_lost",
    "ignore_term": "timeout",
    "grandchild": "timeout",
}


@pytest.mark.parametrize("mode", ["persistent", "oneshot"])
@pytest.mark.parametrize(("do", "code"), sorted(CASES.items()))
def test_misbehaving_wrapper_answers_in_time_and_leaves_nothing(
    runtime: SubprocessPluginRuntime, tmp_path: Path, do: str, code: str, mode: str
) -> None:
    # A wrapper that fails on its own gets a generous deadline: on a busy machine the
    # interpreter's start alone could outlast a short one, and the call end in timeout.
    deadline_s = 0.5 if code == "timeout" else 10.0
    target, marker = chaos_target(tmp_path, mode=mode, timeout_ms=int(deadline_s * 1000))
    started = time.monotonic()
    outcome = call(runtime, target, {"do": do})
    assert time.monotonic() - started < deadline_s + 1.0
    assert outcome.error is not None
    assert outcome.error.code == code
    assert none_left(marker)


def test_a_setsid_grandchild_dies_with_a_oneshot_call_that_answered(
    runtime: SubprocessPluginRuntime, tmp_path: Path
) -> None:
    # A generous deadline: the subject is the grandchild's end, not how fast a busy
    # machine spawns an interpreter.
    target, marker = chaos_target(tmp_path, mode="oneshot", timeout_ms=15_000)
    outcome = call(runtime, target, {"do": "grandchild_reply"})
    assert outcome.data == "left one behind"
    assert none_left(marker)


def test_a_broken_worker_is_replaced_for_the_next_call(
    runtime: SubprocessPluginRuntime, tmp_path: Path
) -> None:
    target, marker = chaos_target(tmp_path, timeout_ms=2000)
    first = call(runtime, target, {"do": "pid"})
    assert call(runtime, target, {"do": "bad_json"}).error.code == "wrapper_protocol_error"  # type: ignore[union-attr]
    second = call(runtime, target, {"do": "pid"})
    assert first.status == second.status == "success"
    assert first.data != second.data
    runtime.kill_all()
    assert none_left(marker)
