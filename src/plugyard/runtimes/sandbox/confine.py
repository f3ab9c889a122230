"""One sandbox's own share of the machine: a cgroup where the host lets us make one, and
a host uid of its own when plugyard runs as root (docs/subprocess.md, "Limits per
sandbox").

- with a cgroup (v2, else v1): processes by the group's ``pids.max``, the memory of all
  of them together by ``memory.max`` (``memory.limit_in_bytes`` in v1);
- without, as root: processes by ``RLIMIT_NPROC`` of the sandbox's own uid; memory only
  per process (``RLIMIT_AS``);
- without, not root: ``RLIMIT_NPROC`` counts every process of *our* uid, shared by all
  sandboxes and plugyard itself; memory only per process.

Without root, bubblewrap's user namespace maps our own uid to 65534 inside, so every
sandbox and plugyard itself share one ``RLIMIT_NPROC``; where a group caps processes,
that shared limit is left as it is rather than lowered to a sandbox's budget.
"""

from __future__ import annotations

import asyncio
import os
import resource
import time
from dataclasses import dataclass

from plugyard.runtimes.sandbox import uids
from plugyard.runtimes.sandbox.bwrap import SandboxLimits
from plugyard.runtimes.sandbox.cgroups import Group
from plugyard.runtimes.sandbox.detect import detect

_MIB = 1024 * 1024


@dataclass
class Confinement:
    """What one sandboxed process tree was given; :meth:`release` it once it is gone."""

    uid: int | None  # None: not root, bubblewrap's user namespace maps us to 65534
    group: Group | None
    nproc: int | None = None  # RLIMIT_NPROC to set instead of the limits' ``processes``
    _uids: range | None = None

    def enter(self) -> tuple[str, ...]:
        """The ``cgroup.procs`` files the sandbox's launcher writes its pid into."""
        return self.group.procs_files if self.group is not None else ()

    def kill(self) -> None:
        """SIGKILL every process in the group (nothing without a group)."""
        if self.group is not None:
            self.group.kill()

    def release(self, wait_s: float = 1.0) -> bool:
        """Kill what is left, remove the group and hand the uid back; ``True`` when the
        group is gone (one that did not empty in time is removed by a later sweep)."""
        gone = self.group.remove(wait_s) if self.group is not None else True
        self._give_back()
        return gone

    async def arelease(self, wait_s: float = 1.0) -> bool:
        """:meth:`release` that waits on the event loop instead of blocking it."""
        group = self.group
        deadline = time.monotonic() + wait_s
        while group is not None and not group.try_remove():
            if time.monotonic() >= deadline:
                return self.release(wait_s=0)
            await asyncio.sleep(0.005)
        self._give_back()
        return True

    def _give_back(self) -> None:
        # The uid may go back at once: a lease skips any uid a process still runs as.
        if self.uid is not None and self._uids is not None:
            uids.release(self.uid)
            self._uids = None


def confine(
    limits: SandboxLimits, *, cgroups: bool = True, uid_range: range = uids.UIDS
) -> Confinement:
    """A confinement for one new sandbox (``OSError`` when its group cannot be made or
    no uid is free: the sandbox must not start without what it was promised).
    ``cgroups=False`` uses the fallback even where groups work."""
    root = os.geteuid() == 0
    hierarchy = detect() if cgroups else None
    uid = uids.lease(uid_range) if root else None
    memory = limits.total_memory_mb * _MIB
    try:
        group = (
            Group.make(hierarchy, processes=limits.processes, memory_bytes=memory)
            if hierarchy is not None
            else None
        )
    except OSError:
        if uid is not None:
            uids.release(uid)
        raise
    nproc = resource.getrlimit(resource.RLIMIT_NPROC)[1] if not root and group else None
    return Confinement(uid, group, nproc, uid_range if uid is not None else None)


def mechanism(*, cgroups: bool = True, uid_range: range = uids.UIDS) -> str:
    """One line: what bounds each sandbox's processes and memory on this host."""
    hierarchy = detect() if cgroups else None
    if hierarchy is not None:
        parts = [f"{hierarchy}: pids.max and one memory cap per sandbox"]
    else:
        parts = ["no cgroup: memory is capped per process only (RLIMIT_AS)"]
    if os.geteuid() == 0:
        first, last = uid_range.start, uid_range.stop - 1
        parts.append(f"a uid of its own per sandbox ({first}…{last}): RLIMIT_NPROC per sandbox")
    elif hierarchy is None:
        parts.append(f"RLIMIT_NPROC counts every process of uid {os.getuid()} (shared)")
    return "; ".join(parts)
