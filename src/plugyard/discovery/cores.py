"""How many cores other processes leave idle: what a bulk embedding may use.

The 1-minute load average answered this before, but it counts this process too: a
build that follows a registration (or a first chunk on one thread) saw its own load,
concluded the machine was busy and never left one thread. Here the system's busy time
over a short window, less this process's own CPU time, is what the others use.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

#: How long the system is watched before a build picks its threads.
SAMPLE_S = 0.2


@dataclass(frozen=True, slots=True)
class Reading:
    """Cumulative counters at one instant, in seconds."""

    busy: float  # every core's non-idle time, steal included
    own: float  # this process's CPU time (all its threads)
    wall: float


def read_counters() -> Reading | None:
    """The counters now, or ``None`` where /proc/stat is not available."""
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            fields = fh.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu" or len(fields) < 9:
        return None
    # user nice system idle iowait irq softirq steal (guest time is inside user)
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, fields[1:9])
    times = os.times()
    busy = (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")
    return Reading(busy, times.user + times.system, time.monotonic())


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on this platform
        return os.cpu_count() or 1


def idle_cores(
    read: Callable[[], Reading | None] = read_counters,
    wait: Callable[[float], None] = time.sleep,
    cores: int | None = None,
) -> int:
    """Cores that other processes leave free (at least one), watched for SAMPLE_S."""
    cores = cores or usable_cores()
    if cores <= 1:
        return 1
    before = read()
    if before is None:
        return _from_load_average(cores)
    wait(SAMPLE_S)
    after = read()
    if after is None or after.wall <= before.wall:
        return _from_load_average(cores)
    others = max(0.0, (after.busy - before.busy) - (after.own - before.own))
    return max(1, min(cores, round(cores - others / (after.wall - before.wall))))


def _from_load_average(cores: int) -> int:
    try:
        busy = os.getloadavg()[0]
    except OSError:  # not available on this platform
        return 1
    return max(1, min(cores, round(cores - busy)))
