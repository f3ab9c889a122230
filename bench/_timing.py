"""Timing shared by the benchmarks: a call repeated in rounds, the median of the rounds'
per-call times. Rounds rather than single calls: one call is below the clock's useful
resolution, and a round's mean survives the machine's hiccups better than a sample."""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

ROUNDS = 15


async def median_per_call(
    fn: Callable[[], Awaitable[Any]], calls: int, *, warm: int, rounds: int = ROUNDS
) -> float:
    """Seconds per call: the median over ``rounds`` rounds of ``calls`` awaited calls,
    after ``min(calls, warm)`` calls to warm up."""
    for _ in range(min(calls, warm)):
        await fn()
    found = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            await fn()
        found.append((time.perf_counter() - start) / calls)
    return statistics.median(found)


def median_per_call_sync(
    fn: Callable[[], Any], calls: int, *, warm: int, rounds: int = ROUNDS
) -> float:
    """:func:`median_per_call` for a plain function."""
    for _ in range(min(calls, warm)):
        fn()
    found = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        found.append((time.perf_counter() - start) / calls)
    return statistics.median(found)
