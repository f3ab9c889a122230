"""A cgroup per sandbox: its own process budget (``pids.max``) and one memory cap over all
of its processes together, where this host lets us make groups.

:func:`detect` looks once per process, and trusts a mechanism only after a probe group
was made, limited and removed:

- **cgroup v2** when our own group, or its parent (a delegated subtree with plugyard in a
  leaf of it), has the ``pids`` and ``memory`` controllers enabled for its children, or
  lets us enable them (the kernel refuses that in a group that holds processes itself);
- else **cgroup v1** when we can make groups below our own in both the ``pids`` and the
  ``memory`` hierarchy;
- else none (see :mod:`.confine` for what then stands in).

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
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

Kind = Literal["cgroup2", "cgroup1"]
_NEEDED = ("pids", "memory")
_PREFIX = "plugyard-"
_NAME = re.compile(rf"^{_PREFIX}(\d+)-(\d+)-\d+$")
_PROBE_BYTES = 64 * 1024 * 1024


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


@cache
def detect() -> Hierarchy | None:
    """The hierarchy this process makes sandbox groups in, or ``None``."""
    for found in candidates(Path("/proc/self"), os.getpid()):
        if _probe(found):
            _sweep_stale(found)
            return found
    return None


def candidates(proc: Path, pid: int) -> list[Hierarchy]:
    """Hierarchies that look usable to process ``pid`` from its ``mountinfo`` and
    ``cgroup`` files in ``proc``, best first. Enabling v2 controllers for the children of
    a group is the one write."""
    try:
        mounts = _mounts(proc / "mountinfo")
        own = _own(proc / "cgroup")
    except OSError:
        return []
    return [h for h in (_v2(mounts, own), _v1(mounts, own, pid)) if h is not None]


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
        if self.hierarchy.kind == "cgroup2" and _write(self.pids_folder / "cgroup.kill", 1):
            return
        _write(self.pids_folder / "pids.max", 0)
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
            _write(folder / "memory.swap.max", 0)  # absent without swap accounting
            return
        _require(folder / "memory.limit_in_bytes", memory_bytes)
        # Memory plus swap, where the kernel accounts swap; else keep the group's
        # anonymous memory out of swap. Either way swap is no way around the cap.
        if not _write(folder / "memory.memsw.limit_in_bytes", memory_bytes):
            _write(folder / "memory.swappiness", 0)


# ---------------------------------------------------------------------------- detection


@dataclass(frozen=True)
class _Mount:
    root: str
    point: Path
    fstype: str
    options: frozenset[str]


def _mounts(mountinfo: Path) -> list[_Mount]:
    out = []
    for line in mountinfo.read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        options = frozenset(tail[2].split(","))
        out.append(_Mount(_unescape(fields[3]), Path(_unescape(fields[4])), tail[0], options))
    return out


def _unescape(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def _own(cgroup: Path) -> dict[str, str]:
    """Controller name ("" for v2) → our group's path in its hierarchy."""
    found: dict[str, str] = {}
    for line in cgroup.read_text().splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for name in parts[1].split(",") if parts[1] else [""]:
                found[name] = parts[2]
    return found


def _folder(mount: _Mount, path: str) -> Path | None:
    root = mount.root.rstrip("/")
    if path != mount.root and not path.startswith(root + "/"):
        return None
    return mount.point / path[len(root) :].lstrip("/")


def _v2(mounts: Iterable[_Mount], own: dict[str, str]) -> Hierarchy | None:
    path = own.get("")
    for mount in mounts:
        mine = _folder(mount, path) if mount.fstype == "cgroup2" and path else None
        if mine is None:
            continue
        parents = [mine] if mine == mount.point else [mine, mine.parent]
        for parent in parents:
            if _controllers_for_children(parent):
                return Hierarchy("cgroup2", parent, parent)
    return None


def _controllers_for_children(parent: Path) -> bool:
    try:
        if not set(_NEEDED) <= set((parent / "cgroup.controllers").read_text().split()):
            return False
        if set(_NEEDED) <= set((parent / "cgroup.subtree_control").read_text().split()):
            return True
        return _write(parent / "cgroup.subtree_control", " ".join(f"+{n}" for n in _NEEDED))
    except OSError:
        return False


def _v1(mounts: Iterable[_Mount], own: dict[str, str], pid: int) -> Hierarchy | None:
    listed = list(mounts)
    me = str(pid)
    folders: dict[str, Path] = {}
    for name in _NEEDED:
        mount = next((m for m in listed if m.fstype == "cgroup" and name in m.options), None)
        path = own.get(name)
        mine = _folder(mount, path) if mount is not None and path is not None else None
        try:
            # A mount seen through another cgroup namespace maps paths elsewhere: the
            # folder must hold us.
            if mine is None or me not in (mine / "cgroup.procs").read_text().split():
                return None
        except OSError:
            return None
        folders[name] = mine
    return Hierarchy("cgroup1", folders["pids"], folders["memory"])


def _probe(hierarchy: Hierarchy) -> bool:
    try:
        group = Group.make(hierarchy, processes=8, memory_bytes=_PROBE_BYTES)
    except OSError:
        return False
    return group.remove()


def _sweep_stale(hierarchy: Hierarchy) -> None:
    """Remove the groups a plugyard of our PID namespace left when it died."""
    mine = str(_namespace())
    for parent in dict.fromkeys((hierarchy.pids, hierarchy.memory)):
        with contextlib.suppress(OSError):
            for folder in parent.iterdir():
                match = _NAME.match(folder.name)
                if match is None or match[1] != mine or _alive(int(match[2])):
                    continue
                Group(hierarchy, folder.name).remove(wait_s=0.2)


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


def _write(path: Path, value: object) -> bool:
    """Write a control file that must already exist (a missing one is an absent
    feature, never a file to create)."""
    try:
        _require(path, value)
    except OSError:
        return False
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
