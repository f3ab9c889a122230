"""The sandbox side of one worker: its confinement from spawn to release, the kill of its
whole tree, and what may stay in it between calls.

A sandboxed worker is three processes: bubblewrap (our child), bubblewrap's init in the
sandbox's PID namespace — which reaps every orphan in there — and the wrapper, init's
first child. Anything else still running in the sandbox once no request is in flight was
left behind by a call (a fork bomb's survivors, a daemonised helper) and is killed: it
would hold a share of the sandbox's process and memory budget for good.

A killed child of the wrapper itself stays a zombie until the wrapper collects it
(plugyard's pyworker does whenever it goes idle); a worker that keeps zombies is retired
while idle, since each one holds a slot of ``pids.max`` and ``RLIMIT_NPROC``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable

from plugyard.runtimes.sandbox import Confinement
from plugyard.runtimes.subprocess.process import children, kill_all, kill_tree, stat_fields, tree

#: How long an idle worker's wrapper has to collect the children killed as strays.
ZOMBIE_GRACE_S = 0.2
#: The least time between two tidies of one worker (strays live at most this much longer).
TIDY_EVERY_S = 0.05
_STOP_ROUNDS = 5


class SandboxedTree:
    """The process tree under bubblewrap ``root`` and the confinement it was given, for a
    worker on ``loop``: ``idle()`` says whether it has no request in flight, ``retire()``
    ends it."""

    def __init__(
        self,
        root: int,
        confinement: Confinement,
        loop: asyncio.AbstractEventLoop,
        idle: Callable[[], bool],
        retire: Callable[[], None],
    ) -> None:
        self.root, self.confinement = root, confinement
        self._loop, self._idle, self._retire = loop, idle, retire
        self._core: frozenset[int] | None = None
        self._wrapper = 0
        self._releasing: asyncio.Task[bool] | None = None
        self._memory_kills = 0  # as many as the group had when the worker was last idle
        self._tidied = float("-inf")
        self._timer: asyncio.TimerHandle | None = None
        self._arming = False

    def kill(self) -> None:
        """SIGKILL the whole tree: its cgroup at once (nothing in it can fork from then
        on), else the walk down from bubblewrap."""
        if self.confinement.group is not None:
            self.confinement.kill()
        else:
            kill_tree(self.root)

    def memory_capped(self) -> bool:
        """Whether the kernel killed a process of the sandbox at its memory cap since the
        worker was last idle (an old kill says nothing about what just happened)."""
        group = self.confinement.group
        return group is not None and group.memory_kills() > self._memory_kills

    async def release(self) -> None:
        """Give the confinement back once its processes are gone. Every caller waits for
        the one release, which runs on even when a caller is cancelled."""
        if self._releasing is None:
            self._releasing = asyncio.get_running_loop().create_task(self.confinement.arelease())
        await asyncio.shield(self._releasing)

    def idle(self) -> None:
        """The worker has no request in flight. Tidy at most once per
        :data:`TIDY_EVERY_S`: now if the last tidy is that old, else when it will be, if
        the worker is idle then. A busy worker goes idle between most calls: looking at
        its processes each time would halve its throughput, and a timer left pending while
        calls run (armed only after a turn of the loop still idle, dropped by
        :meth:`busy`) would make every wait of the loop a timed one."""
        if self._loop.time() >= self._tidied + TIDY_EVERY_S:
            self._tidy()
        elif self._timer is None and not self._arming:
            self._arming = True
            self._loop.call_soon(self._arm)

    def busy(self) -> None:
        """A request starts: no tidy is due while it runs."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _arm(self) -> None:
        self._arming = False
        if self._timer is None and self._idle():
            wait = max(0.0, self._tidied + TIDY_EVERY_S - self._loop.time())
            self._timer = self._loop.call_later(wait, self._tidy)

    def _tidy(self) -> None:
        """Kill the strays; retire the worker if, a moment later, it is still idle and its
        wrapper has not collected the zombies they left."""
        self._timer = None
        if not self._idle():
            return
        self._tidied = self._loop.time()
        if self.confinement.group is not None:
            self._memory_kills = self.confinement.group.memory_kills()
        if self.kill_strays() or self.zombies():
            self._loop.call_later(ZOMBIE_GRACE_S, self._retire_if_zombies)

    def _retire_if_zombies(self) -> None:
        if self._idle() and self.zombies():
            self._retire()

    def core(self) -> frozenset[int] | None:
        """Bubblewrap, its init and the wrapper (``None`` until all three are up)."""
        if self._core is None:
            init = _first_child(self.root)
            wrapper = _first_child(init) if init is not None else None
            if init is not None and wrapper is not None:
                self._core, self._wrapper = frozenset({self.root, init, wrapper}), wrapper
        return self._core

    def members(self) -> set[int]:
        """Every live process of the sandbox: its cgroup's list, else bubblewrap's tree."""
        group = self.confinement.group
        return group.pids() if group is not None else tree(self.root)

    def kill_strays(self) -> int:
        """Kill every process outside the core; how many there were. Each is stopped
        first, round after round until no new one appears, so none forks meanwhile."""
        core = self.core()
        if core is None:
            return 0
        seen: set[int] = set()
        for _ in range(_STOP_ROUNDS):
            new = self.members() - core - seen
            if not new:
                break
            for pid in new:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGSTOP)
            seen |= new
        kill_all(seen)
        return len(seen)

    def zombies(self) -> int:
        """Children of the wrapper that exited and were not collected."""
        if self.core() is None:
            return 0
        return sum(1 for pid in children(self._wrapper) if stat_fields(pid)[:1] == [b"Z"])


def _first_child(pid: int) -> int | None:
    found = children(pid)
    return min(found, key=lambda child: (_started(child), child)) if found else None


def _started(pid: int) -> int:
    fields = stat_fields(pid)
    return int(fields[19]) if len(fields) > 19 else 0
