"""Branches of known cost: waiting (I/O-like) and computing (CPU-bound, holds the GIL)."""

import asyncio
import os
from typing import Any


async def sleep(ms: float = 10) -> dict[str, Any]:
    await asyncio.sleep(ms / 1000)
    return {"ms": ms}


def spin(loops: int = 0) -> dict[str, Any]:
    # A fixed amount of work (the benchmark calibrates ``loops`` to 10 ms), not a fixed
    # time: time-based spins in threads would overlap and look parallel.
    total = 0
    for i in range(loops):
        total += i
    return {"loops": loops, "pid": os.getpid()}


def spin_heavy(loops: int = 0) -> dict[str, Any]:
    return spin(loops)
