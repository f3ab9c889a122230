"""The driver side of the Ray backend: each call a Ray task (docs/scaling.md#ray).

The task (:func:`plugyard.execution.ray_worker.run_call`) gets the request with the
caller's vouched-for context and answers the call's result envelope. What can go wrong
between here and there is answered in the same envelope:

- the cluster cannot be reached (refused, or no answer within the connect timeout) →
  ``execution_backend_unavailable``, at once: a TCP probe comes before ``ray.init``, and
  the wait for a connection is bounded;
- the worker dies under the call → ``worker_lost`` (Ray does not run it again: a call
  runs at most once, as in process — ``max_retries=0``);
- no answer within the call's deadline plus a grace for scheduling → the task is
  cancelled and the call answers ``timeout``;
- the caller cancels → the task is cancelled (``ray.cancel``), which reaches the
  executor on the worker as an asyncio cancellation; the caller's cancellation is
  re-raised once the task has ended or a grace has passed.

Failures decided here (the call never reached a worker's executor, or its worker never
answered) are audited here, so every call still leaves one event.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from plugyard.errors import PlugyardError
from plugyard.execution.executor import CallRequest, new_request_id
from plugyard.execution.ray_worker import WorkerSpec, run_call
from plugyard.execution.result import Result, failure
from plugyard.runtimes.base import CallContext

__all__ = ["RayBackend", "WorkerSpec"]


class _Unavailable(Exception):
    pass


class RayBackend:
    """Calls as Ray tasks on the cluster at ``address`` (``local``: one started here)."""

    name = "ray"

    def __init__(
        self,
        address: str,
        worker: WorkerSpec,
        *,
        connect_timeout_s: float = 10.0,
        default_timeout_ms: int = 30_000,
        grace_s: float = 10.0,
        task_cpus: float = 1.0,
        audit: Callable[[CallRequest, Result, float], Awaitable[None]] | None = None,
    ) -> None:
        self.address = address
        self._worker = worker
        self._connect_timeout_s = connect_timeout_s
        self._default_timeout_ms = default_timeout_ms
        self._grace_s = grace_s
        self._task_cpus = task_cpus
        self._audit = audit
        self._remote: Any = None
        self._connecting: concurrent.futures.Future[Any] | None = None
        self._connect_started = 0.0
        self._lock = threading.Lock()
        self._started = False  # whether this backend started the Ray instance it uses

    async def call(self, request: CallRequest) -> Result:
        if request.context is None:
            request = replace(request, context=CallContext(request_id=new_request_id()))
        started = time.time()
        try:
            remote = self._remote or await self._connected()
        except _Unavailable as exc:
            return await self._failed(request, started, "execution_backend_unavailable", str(exc))
        import ray
        from ray import exceptions as rx

        try:
            ref = remote.remote(self._worker, request)
        except Exception as exc:  # the connection went away since it was made
            message = f"cannot submit to Ray at {self.address}: {exc}"
            return await self._failed(request, started, "execution_backend_unavailable", message)
        seconds = (request.timeout_ms or self._default_timeout_ms) / 1000 + self._grace_s
        try:
            async with asyncio.timeout(seconds):
                result: Result = await ref
            return result
        except TimeoutError:
            ray.cancel(ref)
            code, message = "timeout", f"the Ray task did not answer within {seconds:g} s"
        except asyncio.CancelledError:
            ray.cancel(ref)
            await _ended(ref, self._grace_s)
            raise
        except rx.TaskCancelledError:
            code, message = "cancelled", "the Ray task was cancelled"
        except rx.RayTaskError as exc:
            cause = exc.cause
            if isinstance(cause, PlugyardError):
                code, message = cause.code, cause.message
            else:
                code, message = "worker_lost", f"the Ray task failed: {cause!r}"
        except (rx.WorkerCrashedError, rx.NodeDiedError, rx.ObjectLostError) as exc:
            code, message = "worker_lost", f"the Ray worker died: {exc}"
        except (rx.RaySystemError, ConnectionError) as exc:
            code, message = "execution_backend_unavailable", str(exc)
        return await self._failed(request, started, code, message)

    def close(self) -> None:
        """Let go of the cluster; Ray stops if this backend started it (a process's Ray
        connection started by the application stays)."""
        with self._lock:
            started, self._started = self._started, False
            self._remote = None
            self._connecting = None
        if started:
            import ray

            ray.shutdown()

    # ------------------------------------------------------------------ connecting

    async def _connected(self) -> Any:
        with self._lock:
            pending = self._connecting
            if pending is None or (pending.done() and pending.exception() is not None):
                pending = self._connecting = concurrent.futures.Future()
                self._connect_started = time.monotonic()
                threading.Thread(target=self._connect, args=(pending,), daemon=True,
                                 name="plugyard-ray-connect").start()  # fmt: skip
            left = self._connect_started + self._connect_timeout_s - time.monotonic()
        try:
            async with asyncio.timeout(max(left, 0.0)):
                # Shielded: a caller giving up must not cancel the attempt others share.
                remote = await asyncio.shield(asyncio.wrap_future(pending))
        except TimeoutError:
            raise _Unavailable(
                f"no Ray cluster answered at {self.address} within {self._connect_timeout_s:g} s"
            ) from None
        except Exception as exc:
            raise _Unavailable(f"cannot reach Ray at {self.address}: {exc}") from exc
        self._remote = remote
        return remote

    def _connect(self, done: concurrent.futures.Future[Any]) -> None:
        try:
            if self.address == "local":
                # One machine: keep Ray on loopback (it would otherwise advertise the
                # interface address); read when ray is first imported.
                os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
            import ray

            if self.address != "local":
                host, _, port = self.address.rpartition(":")
                # Fail fast on a closed port: the client otherwise retries for long.
                with socket.create_connection((host, int(port)), self._connect_timeout_s):
                    pass
            # One Ray connection per process: a yard reuses the one already made.
            if not ray.is_initialized():
                self._started = True
                if self.address == "local":
                    ray.init(include_dashboard=False, log_to_driver=False,
                             _node_ip_address="127.0.0.1")  # fmt: skip
                else:
                    ray.init(address=f"ray://{self.address}", log_to_driver=False)
            task = ray.remote(max_retries=0, num_cpus=self._task_cpus)(run_call)
        except BaseException as exc:
            done.set_exception(exc)
            return
        done.set_result(task)

    # ------------------------------------------------------------------ failures

    async def _failed(
        self, request: CallRequest, started: float, code: str, message: str
    ) -> Result:
        context = request.context
        assert context is not None
        result = replace(
            failure(code, message),
            plugin_id=request.plugin_id,
            operation=request.operation,
            request_id=context.request_id,
            cost={"duration_ms": round((time.time() - started) * 1000, 3)},
        )
        if code != "cancelled" and self._audit is not None:
            # The worker audits every call it ran; this one never reached it.
            await self._audit(request, result, started)
        return result


async def _ended(ref: Any, grace_s: float) -> None:
    """Wait (bounded) for a cancelled task to end, so its audit is written when the
    caller's cancellation completes."""
    try:
        async with asyncio.timeout(grace_s):
            await asyncio.shield(asyncio.wrap_future(ref.future()))
    except BaseException:  # cancelled, failed or late: all that matters is that it ended
        return
