"""Calls in flight on a worker that dies under them answer ``worker_lost`` — never
``cancelled``, which says the caller went away — and an idempotent one is sent once more,
to a fresh worker."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from plugyard.errors import ERROR_CODES
from plugyard.manifest.model import Operation
from plugyard.runtimes.base import CallContext, Outcome, Target
from plugyard.runtimes.subprocess import SubprocessPluginRuntime
from runtimes.subprocess.helpers import chaos_target, in_flight, run, until


async def _until_in_flight(runtime: SubprocessPluginRuntime, count: int) -> None:
    await until(lambda: in_flight(runtime) >= count)


def _idempotent(target: Target) -> Target:
    ops = tuple(op.model_copy(update={"idempotent": True}) for op in target.descriptor.operations)
    return replace(target, descriptor=target.descriptor.model_copy(update={"operations": ops}))


async def _sibling_of(
    runtime: SubprocessPluginRuntime, target: Target, first: str, *, give_up: bool
) -> tuple[Outcome | BaseException, Outcome]:
    """Call ``first``, then an echo queued behind it on the same worker; ``give_up``
    cancels the first call (its caller goes away) instead of letting it run."""
    op: Operation = target.descriptor.operations[0]
    doomed = asyncio.ensure_future(
        runtime.invoke(target, op, {"do": first}, CallContext("a"), None)
    )
    await _until_in_flight(runtime, 1)
    sibling = asyncio.ensure_future(
        runtime.invoke(target, op, {"do": "echo", "n": 1}, CallContext("b"), None)
    )
    await _until_in_flight(runtime, 2)
    if give_up:
        doomed.cancel()
    ended, answered = await asyncio.gather(doomed, sibling, return_exceptions=True)
    assert isinstance(answered, Outcome), answered
    return ended, answered  # type: ignore[return-value]


@pytest.mark.parametrize("how", ["timeout", "caller_gone", "crash"])
def test_the_siblings_of_a_call_that_killed_its_worker_answer_worker_lost(
    runtime: SubprocessPluginRuntime, tmp_path: Path, how: str
) -> None:
    # A crash must come before the deadline, however slowly the worker starts.
    timeout_ms = 10_000 if how == "crash" else 500
    target, _ = chaos_target(tmp_path, config={"workers": 1}, timeout_ms=timeout_ms)
    first = {"timeout": "hang", "caller_gone": "hang", "crash": "crash_mid"}[how]
    ended, sibling = run(runtime, _sibling_of(runtime, target, first, give_up=how == "caller_gone"))
    assert sibling.error is not None
    assert sibling.error.code == "worker_lost"
    cause = "exited" if how == "crash" else "sibling_abandoned"
    assert sibling.error.details["cause"] == cause
    if how == "timeout":
        assert isinstance(ended, Outcome) and ended.error is not None
        assert ended.error.code == "timeout"
    assert ERROR_CODES["worker_lost"].http_status == 502


def test_an_idempotent_sibling_is_sent_again_to_a_fresh_worker(
    runtime: SubprocessPluginRuntime, tmp_path: Path
) -> None:
    target, _ = chaos_target(tmp_path, config={"workers": 1}, timeout_ms=5000)
    target = _idempotent(target)

    async def go() -> tuple[int, Outcome, int]:
        op = target.descriptor.operations[0]
        await runtime.invoke(target, op, {"do": "echo"}, CallContext("w"), None)
        before = next(iter(runtime._pools.values())).workers[0].proc.pid  # type: ignore[union-attr]
        _, sibling = await _sibling_of(runtime, target, "hang", give_up=True)
        after = next(iter(runtime._pools.values())).workers[0].proc.pid  # type: ignore[union-attr]
        return before, sibling, after

    before, sibling, after = run(runtime, go())
    assert sibling.status == "success", sibling.error
    assert sibling.data == {"do": "echo", "n": 1}
    assert before != after


@pytest.mark.parametrize(("idempotent", "runs"), [(True, 2), (False, 1)])
def test_a_call_that_kills_its_worker_runs_twice_at_most_and_only_if_idempotent(
    runtime: SubprocessPluginRuntime, tmp_path: Path, idempotent: bool, runs: int
) -> None:
    target, _ = chaos_target(tmp_path, config={"workers": 1}, timeout_ms=5000)
    target = _idempotent(target) if idempotent else target

    async def go() -> object:
        op = target.descriptor.operations[0]
        return await runtime.invoke(target, op, {"do": "log_crash"}, CallContext("c"), None)

    outcome = run(runtime, go())
    assert isinstance(outcome, Outcome) and outcome.error is not None
    assert outcome.error.code == "worker_lost"
    assert (tmp_path / "runs").read_text().count("ran") == runs
