"""Searches run off the event loop, on threads of their own.

A search embeds its query and scores the catalog: CPU work that would hold every other
request of a server's loop. It goes to a small pool of its own rather than the loop's
default one: in-process plugins run there too, and a burst of searches queued ahead of
them would make a cheap call wait for every search before it.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

# As many as the cores: more threads would only contend for them (and for the GIL).
_SEARCHES = ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1),
                               thread_name_prefix="plugyard-search")  # fmt: skip


async def off_loop(fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """``fn(*args, **kwargs)`` on the search threads, with the caller's context vars."""
    context = contextvars.copy_context()
    call = functools.partial(context.run, fn, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_SEARCHES, call)
