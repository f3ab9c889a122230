"""Branches of known cost: waiting (I/O-like) and computing (CPU-bound, holds the GIL)."""

import asyncio
import time
from typing import Any


async def sleep(ms: float = 10) -> dict[str, Any]:
    await asyncio.sleep(ms / 1000)
    return {"ms": ms}


def spin(ms: float = 10) -> dict[str, Any]:
    end = time.perf_counter() + ms / 1000
    n = 0
    while time.perf_counter() < end:
        n += 1
    return {"ms": ms, "loops": n}


def spin_heavy(ms: float = 10) -> dict[str, Any]:
    return spin(ms)
