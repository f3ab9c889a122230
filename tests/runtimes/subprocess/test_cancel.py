"""A request the host gives up on: a wrapper that can stop it keeps its worker (and the
other requests on it); one that cannot, or does not answer in time, is killed."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

from plugyard.runtimes.base import CallContext, Outcome, Target
from plugyard.runtimes.subprocess import SubprocessPluginRuntime, protocol
from plugyard.runtimes.subprocess.spec import CANCEL_GRACE_S
from runtimes.subprocess.helpers import chaos_target, in_flight, pyworker_target, run, until

MANIFEST = """
    id: stoppable
    name: Stoppable
    description: Waits on request.
    config: {workers: 1}
    capabilities:
      - {id: wait_async, description: Waits in a coroutine.}
      - {id: wait_sync, description: Waits in a blocking function.}
      - {id: pid, description: The worker's pid.}
      - {id: nap, description: Waits a little.}
"""
CODE = """
    import asyncio, os, time
    from pathlib import Path

    async def wait_async():
        await asyncio.sleep(60)

    def wait_sync():
        (Path(__file__).parent / "started").touch()
        time.sleep(60)

    def pid():
        return os.getpid()

    async def nap():
        await asyncio.sleep(0.3)
        return os.getpid()
"""


def _target(tmp_path: Path) -> Target:
    folder = tmp_path / "plugin"
    folder.mkdir()
    (folder / "plugin.yaml").write_text(textwrap.dedent(MANIFEST))
    (folder / "plugin.py").write_text(textwrap.dedent(CODE))
    return pyworker_target(folder)


async def _call(runtime: SubprocessPluginRuntime, target: Target, op_id: str) -> Outcome:
    op = next(o for o in target.descriptor.operations if o.id == op_id)
    answer = await runtime.invoke(target, op, {}, CallContext(op_id), None)
    assert isinstance(answer, Outcome)
    return answer


async def _in_flight(runtime: SubprocessPluginRuntime, count: int) -> None:
    await until(lambda: in_flight(runtime) == count)


def _cancel_then_pids(
    runtime: SubprocessPluginRuntime, target: Target, op: str, started: Path | None = None
) -> list[object]:
    async def go() -> list[object]:
        before = (await _call(runtime, target, "pid")).data
        waiting = asyncio.ensure_future(_call(runtime, target, op))
        await _in_flight(runtime, 1)
        if started is not None:
            # A request cancelled before its code began never runs, and its worker lives
            # on: the blocking function must be running when it is cancelled.
            await until(started.exists)
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        await _in_flight(runtime, 0)  # answered (async) or killed after the grace (sync)
        after = (await _call(runtime, target, "pid")).data
        return [before, after]

    return run(runtime, go())


def test_a_cancelled_coroutine_stops_and_its_worker_lives_on(
    runtime: SubprocessPluginRuntime, tmp_path: Path
) -> None:
    before, after = _cancel_then_pids(runtime, _target(tmp_path), "wait_async")
    assert before == after


def test_a_blocking_function_cannot_stop_so_its_worker_is_replaced(
    runtime: SubprocessPluginRuntime, tmp_path: Path
) -> None:
    target = _target(tmp_path)
    before, after = _cancel_then_pids(runtime, target, "wait_sync", tmp_path / "plugin" / "started")
    assert before != after


def test_other_requests_on_the_worker_survive_a_cancel(
    runtime: SubprocessPluginRuntime, tmp_path: Path
) -> None:
    target = _target(tmp_path)

    async def go() -> Outcome:
        await _call(runtime, target, "pid")  # the worker is up
        doomed = asyncio.ensure_future(_call(runtime, target, "wait_async"))
        other = asyncio.ensure_future(_call(runtime, target, "nap"))
        await _in_flight(runtime, 2)  # both on the one worker
        doomed.cancel()
        await asyncio.gather(doomed, return_exceptions=True)
        return await other

    outcome = run(runtime, go())
    assert outcome.status == "success", outcome.error


def test_a_wrapper_that_did_not_declare_cancel_is_killed_at_once(
    runtime: SubprocessPluginRuntime, tmp_path: Path
) -> None:
    target, _ = chaos_target(tmp_path, timeout_ms=5000)
    op = target.descriptor.operations[0]

    async def go() -> tuple[object, object]:
        first = await runtime.invoke(target, op, {"do": "pid"}, CallContext("a"), None)
        hung = asyncio.ensure_future(
            runtime.invoke(target, op, {"do": "hang"}, CallContext("b"), None)
        )
        await _in_flight(runtime, 1)
        hung.cancel()
        await asyncio.gather(hung, return_exceptions=True)
        assert sum(w.in_flight for p in runtime._pools.values() for w in p.workers) == 0
        second = await runtime.invoke(target, op, {"do": "pid"}, CallContext("c"), None)
        assert isinstance(first, Outcome) and isinstance(second, Outcome)
        return first.data, second.data

    first, second = run(runtime, go())
    assert first != second


def test_the_cancel_notification_is_protocol_v1() -> None:
    line = protocol.cancel(7)
    assert line == b'{"protocolVersion":1,"method":"cancel","params":{"id":7}}'
    assert CANCEL_GRACE_S > 0
