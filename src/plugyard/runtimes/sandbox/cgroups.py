"""A cgroup per sandbox: its own process budget (``pids.max``) and one memory cap over all
of its processes together (:mod:`.detect` finds where groups can be made).

A :class:`Group` is named after our PID namespace, our pid and a counter, so a later
plugyard in the same namespace can remove what a killed one left, and only that. A
process enters its group before it runs anything (the launcher of :mod:`.bwrap` writes
its own pid into ``cgroup.procs``, then execs). Killing a group first takes away its
right to fork (``pids.max`` 0; v2's ``cgroup.kill`` where the kernel has it), so no
fork bomb outruns the kill. A group is removed once it is empty; one that is not yet
empty is removed by a later sweep, or at exit.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import re
import signal
import threading
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

Kind = Literal["cgroup2", "cgroup1"]
_PREFIX = "plugyard-"
_NAME = re.compile(rf"^{_PREFIX}(\d+)-(\d+)-\d+$")


@dataclass(frozen=True)
class Hierarchy:
    """Where groups are made: the folder for the ``pids`` controller and the one for
    ``memory`` (the same folder in v2)."""

    kind: Kind
    pids: Path
    memory: Path

    def __str__(self) -> str:
        if self.kind == "cgroup2":
            return f"cgroup v2 under {self.pids}"
        return f"cgroup v1 (pids under {self.pids}, memory under {self.memory})"


class Group:
    """One sandbox's cgroup (a folder per hierarchy in v1, one in v2)."""

    def __init__(self, hierarchy: Hierarchy, name: str) -> None:
        self.hierarchy, self.name = hierarchy, name
        self.pids_folder = hierarchy.pids / name
        self.memory_folder = hierarchy.memory / name
        self.folders = tuple(dict.fromkeys((self.pids_folder, self.memory_folder)))
        self.dead = False

    @classmethod
    def make(cls, hierarchy: Hierarchy, *, processes: int, memory_bytes: int) -> Group:
        """A new group with its limits set (``OSError`` when the kernel refuses)."""
        _sweep_dead()
        name = f"{_PREFIX}{_namespace()}-{os.getpid()}-{next(_COUNTER)}"
        group = cls(hierarchy, name)
        try:
            for folder in group.folders:
                folder.mkdir()
            group._limit(processes, memory_bytes)
        except OSError:
            group.remove(wait_s=0)
            raise
        with _LOCK:
            _LIVE.add(group)
        return group

    @property
    def procs_files(self) -> tuple[str, ...]:
        """The files a process writes its pid into to enter the group."""
        return tuple(str(folder / "cgroup.procs") for folder in self.folders)

    def pids(self) -> set[int]:
        """Every live process in the group (zombies have left it already)."""
        try:
            text = (self.pids_folder / "cgroup.procs").read_text()
        except OSError:
            return set()
        return {int(word) for word in text.split()}

    def memory_kills(self) -> int:
        """How many processes the kernel killed for the group's memory cap."""
        name = "memory.events" if self.hierarchy.kind == "cgroup2" else "memory.oom_control"
        with contextlib.suppress(OSError, ValueError):
            for line in (self.memory_folder / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        return 0

    def kill(self) -> None:
        """SIGKILL everything in the group; nothing in it can fork from now on."""
        self.dead = True
        if self.hierarchy.kind == "cgroup2" and write(self.pids_folder / "cgroup.kill", 1):
            return
        write(self.pids_folder / "pids.max", 0)
        for _ in range(3):
            found = self.pids()
            if not found:
                return
            for pid in found:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)

    def try_remove(self) -> bool:
        """Remove the group if it is empty (after a kill); ``True`` once it is gone."""
        if not self.dead:
            self.kill()
        if self.pids():
            return False
        for folder in self.folders:
            try:
                folder.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                return False
        with _LOCK:
            _LIVE.discard(self)
        return True

    def remove(self, wait_s: float = 1.0) -> bool:
        """Kill, wait up to ``wait_s`` for the group to empty, and remove it. One that
        does not empty in time stays listed for a later sweep."""
        deadline = time.monotonic() + wait_s
        while not self.try_remove():
            if time.monotonic() >= deadline:
                with _LOCK:
                    _LIVE.add(self)
                return False
            time.sleep(0.002)
        return True

    def _limit(self, processes: int, memory_bytes: int) -> None:
        _require(self.pids_folder / "pids.max", processes)
        folder = self.memory_folder
        if self.hierarchy.kind == "cgroup2":
            _require(folder / "memory.max", memory_bytes)
            write(folder / "memory.swap.max", 0)  # absent without swap accounting
            return
        _require(folder / "memory.limit_in_bytes", memory_bytes)
        # Memory plus swap, where the kernel accounts swap; else keep the group's
        # anonymous memory out of swap. Either way swap is no way around the cap.
        if not write(folder / "memory.memsw.limit_in_bytes", memory_bytes):
            write(folder / "memory.swappiness", 0)


def sweep_stale(hierarchy: Hierarchy) -> None:
    """Remove the groups a plugyard of our PID namespace left when it died."""
    mine = str(_namespace())
    for parent in dict.fromkeys((hierarchy.pids, hierarchy.memory)):
        with contextlib.suppress(OSError):
            for folder in parent.iterdir():
                match = _NAME.match(folder.name)
                if match is None or match[1] != mine or _alive(int(match[2])):
                    continue
                Group(hierarchy, folder.name).remove(wait_s=0.2)


def write(path: Path, value: object) -> bool:
    """Write a control file that must already exist (a missing one is an absent
    feature, never a file to create)."""
    try:
        _require(path, value)
    except OSError:
        return False
    return True


# ---------------------------------------------------------------------------- internals

_COUNTER = itertools.count(1)
_LOCK = threading.Lock()
_LIVE: set[Group] = set()


@cache
def _namespace() -> int:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _require(path: Path, value: object) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, str(value).encode())
    finally:
        os.close(fd)


def _sweep_dead() -> None:
    with _LOCK:
        dead = [group for group in _LIVE if group.dead]
    for group in dead:
        group.try_remove()


@atexit.register
def _remove_all() -> None:
    with _LOCK:
        groups = list(_LIVE)
    for group in groups:
        group.remove(wait_s=0.5)
