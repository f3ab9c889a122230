"""Starting a worker process and making sure its whole tree dies with it.

Every worker starts in a session of its own and as a *child subreaper*
(``PR_SET_CHILD_SUBREAPER``, kept across ``exec``): a grandchild that calls ``setsid`` and
double-forks to hide is re-parented to the worker, not to init, so it stays a descendant
for as long as the worker lives. :func:`kill_tree` stops the worker and every descendant
(so nothing forks while we look), then kills them all — descendants first, so none is
orphaned to init — then the worker's process group for good measure. A sandboxed worker
is bubblewrap with its own PID namespace: the same walk reaches everything inside it,
and the kernel kills the namespace when its init dies anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
try:
    _libc: ctypes.CDLL | None = ctypes.CDLL(None, use_errno=True)
except OSError:  # not a glibc-like platform
    _libc = None
_CHILDREN_FILES = Path(f"/proc/self/task/{os.getpid()}/children").exists()


def _prepare_child() -> None:
    # Runs in the forked child before exec: async-signal-safe calls only.
    if _libc is not None:
        _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        # Die with the thread that started us, should plugyard itself be killed.
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


async def spawn(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str | None,
    line_limit: int,
) -> asyncio.subprocess.Process:
    """Start ``argv`` with pipes on stdin, stdout and stderr; no shell."""
    return await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=dict(env),
        cwd=cwd,
        start_new_session=True,
        preexec_fn=_prepare_child,
        close_fds=True,
        limit=line_limit,
    )


def children_map() -> dict[int, list[int]]:
    """Parent pid → child pids, from ``/proc``."""
    out: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_bytes()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: parse after the last ')'.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1:
            out.setdefault(int(fields[1]), []).append(int(entry.name))
    return out


def descendants(pid: int) -> set[int]:
    tree = children_map()
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in tree.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def children(pid: int) -> list[int]:
    """The children of ``pid`` (zombies too), from its threads' ``children`` files: a few
    small reads instead of a scan of every process; the scan where the kernel has none."""
    if not _CHILDREN_FILES:
        return children_map().get(pid, [])
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for task in tasks:
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            found += map(int, Path(f"/proc/{pid}/task/{task}/children").read_bytes().split())
    return found


def tree(pid: int) -> set[int]:
    """``pid`` and its descendants, walked down the ``children`` files."""
    found = {pid}
    todo = [pid]
    while todo:
        for child in children(todo.pop()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def stat_fields(pid: int) -> list[bytes]:
    """``/proc/<pid>/stat`` from its state on (``[0]`` state, ``[19]`` start time)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return []
    return stat[stat.rfind(b")") + 2 :].split()


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` and every process below it (see the module docstring)."""
    seen: set[int] = set()
    for _ in range(5):
        found = descendants(pid)
        new = found - seen
        _signal_all(new | {pid}, signal.SIGSTOP)
        seen |= found
        if not new:
            break
    _signal_all(seen, signal.SIGKILL)
    _signal_all({pid}, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)  # the session leader's pid is its group's id


def kill_all(pids: set[int]) -> None:
    _signal_all(pids, signal.SIGKILL)


def _signal_all(pids: set[int], sig: int) -> None:
    for one in pids:
        with contextlib.suppress(OSError):
            os.kill(one, sig)
