"""The worker side of the Ray backend: a Ray task that runs one call.

Each worker process builds its executor once per store (:class:`WorkerSpec` names it and
says how to build it — the yard's own recipe, on the same database), then runs every
call it is given through that executor: policy, governance, validation, deadline and
audit happen here, on the worker, against the shared store. The caller's context
travels inside the request as the caller's surface vouched for it; nothing on this side
reads who calls from the parameters.

A Ray task is synchronous, so the worker keeps one event loop of its own. ``ray.cancel``
interrupts the task's thread with SIGINT; while a call runs, that signal cancels the
call's asyncio task instead, so the executor audits it as ``cancelled`` before the task
ends (and Ray reports it cancelled to the caller).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any, Protocol

from plugyard.execution.executor import CallRequest
from plugyard.execution.result import Result


class Caller(Protocol):
    async def call(self, request: CallRequest) -> Result: ...


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """How a worker gets its executor: ``build`` (picklable: a module-level function, or
    a partial of one) is called once per worker process and ``key``."""

    key: str
    build: Callable[[], Caller]


_callers: dict[str, Caller] = {}
_loop: asyncio.AbstractEventLoop | None = None


def run_call(worker: WorkerSpec, request: CallRequest) -> Result:
    """Run ``request`` through this worker's executor for ``worker``; the Ray task body."""
    global _loop
    if _loop is None:
        _loop = asyncio.new_event_loop()
        asyncio.set_event_loop(_loop)
    loop = _loop
    caller = _callers.get(worker.key)
    if caller is None:
        caller = _callers[worker.key] = worker.build()
    task = loop.create_task(caller.call(request))
    with _cancel_on_interrupt(loop, task):
        try:
            return loop.run_until_complete(task)
        except asyncio.CancelledError:
            # How a Ray task says it was cancelled: the caller sees TaskCancelledError.
            raise KeyboardInterrupt from None


@contextlib.contextmanager
def _cancel_on_interrupt(
    loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]
) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; Ray runs tasks there
        return

    def cancel(_signum: int, _frame: FrameType | None) -> None:
        loop.call_soon_threadsafe(task.cancel)

    previous = signal.signal(signal.SIGINT, cancel)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
