"""The persistent workers of one plugin: up to N, several requests in flight on each.

A request goes to the live worker with the fewest requests in flight; a new worker starts
only when every live one is busy and the pool is not full. A broken worker is dropped at
the next request and a fresh one takes its place. Workers belong to the event loop that
started them (their pipes do); a pool used from another loop starts over. A stopped pool
(its plugin removed or upgraded) starts no worker again.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from plugyard.runtimes.subprocess.failures import WorkerFailure
from plugyard.runtimes.subprocess.spec import SubprocessSettings, WrapperSpec
from plugyard.runtimes.subprocess.worker import Worker


class Pool:
    def __init__(self, spec: WrapperSpec, settings: SubprocessSettings) -> None:
        self.spec, self._settings = spec, settings
        self.stopped = False
        self.workers: list[Worker] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._starting: asyncio.Lock | None = None
        self._sentinel: AsyncIterator[None] | None = None

    async def acquire(self) -> Worker:
        if self.stopped:
            raise WorkerFailure("plugin_unavailable", "the plugin was removed or replaced")
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self.kill()
            self._loop, self._starting = loop, asyncio.Lock()
            self._sentinel = self._until_loop_ends()
            await anext(self._sentinel)
        self.workers = [w for w in self.workers if w.alive]
        best = min(self.workers, key=lambda w: w.in_flight, default=None)
        if best is not None and (best.in_flight == 0 or len(self.workers) >= self.spec.workers):
            return best
        assert self._starting is not None
        async with self._starting:
            self.workers = [w for w in self.workers if w.alive]
            if len(self.workers) >= self.spec.workers:
                return min(self.workers, key=lambda w: w.in_flight)
            worker = Worker(self.spec, self._settings)
            try:
                await worker.start()
                if self.stopped:  # stopped while this one started
                    raise WorkerFailure("plugin_unavailable", "the plugin was removed or replaced")
            except BaseException:
                worker.kill()
                raise
            self.workers.append(worker)
            return worker

    async def _until_loop_ends(self) -> AsyncIterator[None]:
        # The loop closes unfinished async generators when it shuts down (asyncio.run
        # does): the one hook there is to stop our workers while their pipes still work.
        try:
            yield
        finally:
            await self.close()

    def kill(self) -> None:
        workers, self.workers = self.workers, []
        for worker in workers:
            worker.kill()

    def stop(self) -> None:
        """Kill every worker now and start none again; safe from any thread. The killed
        workers stay listed, so the end of their loop still closes their pipes."""
        self.stopped = True
        for worker in self.workers:
            worker.kill()

    async def close(self) -> None:
        workers, self.workers = self.workers, []
        for worker in workers:
            await worker.close()
