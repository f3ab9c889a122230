"""Where this host lets plugyard make a cgroup per sandbox, found once per process.

:func:`detect` trusts a mechanism only after a probe group was made, limited and removed:

- **cgroup v2** when our own group, or its parent (a delegated subtree with plugyard in a
  leaf of it), has the ``pids`` and ``memory`` controllers enabled for its children, or
  lets us enable them (the kernel refuses that in a group that holds processes itself);
- else **cgroup v1** when we can make groups below our own in both the ``pids`` and the
  ``memory`` hierarchy;
- else none (see :mod:`.confine` for what then stands in).

It also removes what a dead plugyard of the same PID namespace left behind.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from plugyard.runtimes.sandbox.cgroups import Group, Hierarchy, sweep_stale, write

_NEEDED = ("pids", "memory")
_PROBE_BYTES = 64 * 1024 * 1024


@cache
def detect() -> Hierarchy | None:
    """The hierarchy this process makes sandbox groups in, or ``None``."""
    for found in candidates(Path("/proc/self"), os.getpid()):
        if _probe(found):
            sweep_stale(found)
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
        return write(parent / "cgroup.subtree_control", " ".join(f"+{n}" for n in _NEEDED))
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
