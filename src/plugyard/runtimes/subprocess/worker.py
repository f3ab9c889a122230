"""One running wrapper process, requests multiplexed over its pipes by id.

A reader task owns stdout: each line is a reply, progress or a host call; a reply or
progress goes to the queue of the request it names. Anything that breaks the protocol —
a line that is not JSON, an unknown ``protocolVersion`` or id, a line longer than the cap
(never buffered whole: the stream reader stops at the cap) — or stdout closing ends the
worker: its process tree is killed and every request still in flight on it fails.

A request given up before its reply (deadline, caller gone) must not leave a hung wrapper
behind. A wrapper that takes ``cancel`` is told, and has ``cancel_grace_s`` to answer the
request (any answer will do, and is dropped); the other requests on the worker carry on.
A wrapper that cannot be told, or that does not answer in time, is killed with its tree.
The requests still in flight on a worker that dies fail with ``worker_lost``
(:mod:`.failures`). A sandboxed worker's confinement is given back once its process has
exited; whenever it goes idle, what its calls left in the sandbox is killed
(:mod:`.sandboxed`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from plugyard.runtimes.base import ErrorInfo, Progress
from plugyard.runtimes.subprocess import hostcalls, protocol
from plugyard.runtimes.subprocess.failures import WorkerFailure, lost, protocol_failure
from plugyard.runtimes.subprocess.process import kill_tree, spawn
from plugyard.runtimes.subprocess.sandboxed import SandboxedTree
from plugyard.runtimes.subprocess.spec import SubprocessSettings, WrapperSpec


@dataclass
class _Request:
    host: Any
    answered: bool = False  # its reply is queued: nothing to cancel
    calls: set[asyncio.Task[Any]] = field(default_factory=set)  # its host calls in flight
    queue: asyncio.Queue[protocol.ProgressLine | protocol.Reply | WorkerFailure] = field(
        default_factory=asyncio.Queue
    )


class Worker:
    def __init__(self, spec: WrapperSpec, settings: SubprocessSettings) -> None:
        self.spec, self._settings = spec, settings
        self.proc: asyncio.subprocess.Process | None = None
        self.sandbox: SandboxedTree | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._requests: dict[int, _Request] = {}
        self._abandoned: dict[int, asyncio.TimerHandle] = {}  # cancelled, reply awaited
        self._next_id = 0
        self.broken: WorkerFailure | None = None
        self._stderr = bytearray()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._readers: list[asyncio.Task[Any]] = []  # stdout and stderr: they end at EOF

    @property
    def in_flight(self) -> int:
        return len(self._requests) + len(self._abandoned)

    @property
    def alive(self) -> bool:
        return self.broken is None and self.proc is not None and self.proc.returncode is None

    @property
    def stderr_tail(self) -> str:
        return self._stderr.decode("utf-8", "replace")

    async def start(self) -> None:
        spec = self.spec
        self._loop = asyncio.get_running_loop()
        confinement = None
        try:
            confinement = self._settings.confine() if spec.sandbox else None
            self.proc = await spawn(
                spec.launch(self._settings.limits, confinement),
                # A sandbox gets its environment from bubblewrap's --setenv.
                env={"PATH": spec.env["PATH"]} if spec.sandbox else spec.env,
                cwd=None if spec.sandbox else spec.cwd,
                line_limit=spec.max_line,
            )
        except OSError as exc:
            if confinement is not None:
                await confinement.arelease()
            self.broken = WorkerFailure("plugin_unavailable", f"the wrapper does not start: {exc}")
            raise self.broken from None
        if confinement is not None:
            self.sandbox = SandboxedTree(
                self.proc.pid, confinement, self._loop, self._idle, self._retire
            )
        self._readers = [self._spawn(self._read()), self._spawn(self._drain_stderr())]
        if self.sandbox is not None:
            self._spawn(self._release_at_exit(self.sandbox))

    async def exchange(
        self, method: str, params: dict[str, Any], host: Any
    ) -> AsyncIterator[Progress | protocol.Reply]:
        """Send one request; yield its progress, then its reply (the last item)."""
        if self.broken is not None:
            raise self.broken
        assert self.proc is not None and self.proc.stdin is not None
        self._next_id += 1
        ident = self._next_id
        line = protocol.request(ident, method, params)
        if len(line) > self.spec.max_input:
            raise WorkerFailure(
                "request_too_large",
                f"the request is {len(line)} bytes; the wrapper takes {self.spec.max_input}",
                limit=self.spec.max_input,
            )
        request = _Request(host)
        self._requests[ident] = request
        if self.sandbox is not None:
            self.sandbox.busy()
        try:
            try:
                self.proc.stdin.write(line + b"\n")
                await self.proc.stdin.drain()
            except (ConnectionError, RuntimeError) as exc:
                self._break(self._lost(f"the wrapper's stdin closed: {exc}"))
            while True:
                item = await request.queue.get()
                if isinstance(item, WorkerFailure):
                    raise item
                if isinstance(item, protocol.Reply):
                    yield item
                    return
                yield item.progress
        finally:
            self._requests.pop(ident, None)
            # The host work it started ends with it (an ingestion's worker is killed).
            for call in list(request.calls):
                call.cancel()
            # No reply came: cancelled, or the consumer stopped. (After a failure the
            # worker is broken already, and abandoning it does nothing more.)
            if not request.answered:
                self._abandon(ident)
            self._idle_check()

    def _abandon(self, ident: int) -> None:
        """Tell the wrapper to stop ``ident``, or kill it if it cannot be told."""
        grace = self.spec.cancel_grace_s
        stdin = self.proc.stdin if self.proc is not None else None
        if grace is not None and self.alive and stdin is not None:
            try:
                loop = asyncio.get_running_loop()
                stdin.write(protocol.cancel(ident) + b"\n")
            except (ConnectionError, RuntimeError):
                pass  # no loop (a generator finalised late) or stdin gone: kill instead
            else:
                self._abandoned[ident] = loop.call_later(grace, self._expire, ident)
                return
        message = "another request on this worker was given up, and the worker killed"
        self._break(lost(message, "sibling_abandoned"))

    def _expire(self, ident: int) -> None:
        if self._abandoned.pop(ident, None) is not None:
            message = "the wrapper did not stop a request given up, and was killed"
            self._break(lost(message, "sibling_abandoned"))

    def kill(self, failure: WorkerFailure | None = None) -> None:
        """Stop the worker; requests in flight fail with ``failure`` (``worker_lost`` by
        default). Safe from any thread: the process tree dies at once, and the requests
        are failed on the worker's own loop."""
        failure = failure or lost("the worker was stopped", "stopped")
        loop = self._loop
        if loop is None or loop.is_closed() or not loop.is_running() or _on(loop):
            self._break(failure)
            return
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(self._break, failure)
        self._terminate()

    async def close(self) -> None:
        """Kill the tree and wait for the worker's exit and its pipes' end, so the
        process transport is closed on this loop, not collected after it has closed."""
        self.kill()
        if self.proc is not None:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            with contextlib.suppress(ProcessLookupError):
                await self.proc.wait()
        if self._readers:  # they end at the EOF the kill brings; host calls need not
            await asyncio.wait(self._readers, timeout=1.0)
        if self.sandbox is not None:
            await self.sandbox.release()
        for task in list(self._tasks):
            task.cancel()

    # ---------------------------------------------------------------------------- internals

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        stdout = self.proc.stdout
        failure = lost("the wrapper closed its stdout", "exited")
        try:
            while True:
                try:
                    line = await stdout.readline()
                except (ValueError, asyncio.LimitOverrunError):
                    failure = protocol_failure(f"a stdout line exceeds {self.spec.max_line} bytes")
                    break
                if not line.endswith(b"\n"):
                    what = "the wrapper died mid-reply" if line else "the wrapper closed its stdout"
                    failure = self._lost(what)
                    break
                try:
                    message = protocol.parse(line)
                except protocol.ProtocolError as exc:
                    failure = protocol_failure(str(exc))
                    break
                if isinstance(message, protocol.HostCall):
                    owner = self._owner(message)
                    task = self._spawn(self._host_call(message, owner))
                    if owner is not None:
                        owner.calls.add(task)
                        task.add_done_callback(owner.calls.discard)
                    continue
                request = self._requests.get(message.id)
                if request is None and message.id in self._abandoned:
                    if isinstance(message, protocol.Reply):  # it stopped: the worker lives on
                        self._abandoned.pop(message.id).cancel()
                        self._idle_check()
                    continue
                if request is None:
                    failure = protocol_failure(f"a reply names an unknown request {message.id}")
                    break
                if isinstance(message, protocol.ProgressLine):
                    request.queue.put_nowait(message)
                else:
                    request.answered = True
                    request.queue.put_nowait(message)
                    del self._requests[message.id]
        except asyncio.CancelledError:
            failure = lost("the worker was stopped", "stopped")
            raise
        finally:
            self._break(failure)

    def _owner(self, call: protocol.HostCall) -> _Request | None:
        owner = self._requests.get(call.call) if call.call is not None else None
        # A call that names no request is the only request's, unless a cancelled one may
        # still be running and could be the caller.
        if owner is None and call.call is None and len(self._requests) == 1 and not self._abandoned:
            owner = next(iter(self._requests.values()))
        return owner

    async def _host_call(self, call: protocol.HostCall, owner: _Request | None) -> None:
        try:
            result, error = await hostcalls.serve(
                owner.host if owner else None, call.capability, call.method, call.args, call.kwargs
            )
        except asyncio.CancelledError:
            # Its request was given up: the host stopped the work, and the code waiting
            # for this answer (a sync call cannot be cancelled) is told, so it can end
            # and the worker live on.
            result, error = None, ErrorInfo("cancelled", "the call this host call served ended")
            self._reply(call.id, result, error)
            raise
        self._reply(call.id, result, error)

    def _reply(self, call_id: str, result: Any, error: ErrorInfo | None) -> None:
        if self.alive and self.proc is not None and self.proc.stdin is not None:
            with contextlib.suppress(ConnectionError, RuntimeError):
                self.proc.stdin.write(protocol.host_reply(call_id, result, error))

    async def _drain_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        cap = self.spec.max_stderr
        while chunk := await self.proc.stderr.read(65536):
            self._stderr += chunk
            if len(self._stderr) > cap:
                del self._stderr[: len(self._stderr) - cap]

    def _lost(self, what: str) -> WorkerFailure:
        if self.sandbox is not None and self.sandbox.memory_capped():
            return lost(f"{what}: its sandbox reached its memory cap", "memory_cap")
        return lost(what, "exited")

    def _terminate(self) -> None:
        if self.proc is None or self.proc.returncode is not None:
            return
        if self.sandbox is not None:
            self.sandbox.kill()
        else:
            kill_tree(self.proc.pid)

    async def _release_at_exit(self, sandbox: SandboxedTree) -> None:
        assert self.proc is not None
        await self.proc.wait()
        await sandbox.release()

    def _idle_check(self) -> None:
        # (A generator finalised late may get here after its loop closed.)
        loop = self._loop
        if self.sandbox is not None and self._idle() and loop is not None and not loop.is_closed():
            self.sandbox.idle()

    def _idle(self) -> bool:
        return self.in_flight == 0 and self.alive

    def _retire(self) -> None:
        self._break(lost("the wrapper kept zombie processes", "retired"))

    def _break(self, failure: WorkerFailure) -> None:
        if self.broken is None:
            self.broken = failure
            self._terminate()
        for request in self._requests.values():
            request.queue.put_nowait(self.broken)
        self._requests.clear()
        for timer in self._abandoned.values():
            timer.cancel()
        self._abandoned.clear()


def _on(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
