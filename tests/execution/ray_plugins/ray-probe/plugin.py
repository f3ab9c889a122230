"""Where a call ran (its process id), and a call that stays until it is cancelled."""

import asyncio
import os
from typing import Any


def where(value: Any = None) -> dict[str, Any]:
    return {"pid": os.getpid(), "value": value}


def here(value: Any = None) -> dict[str, Any]:
    return {"pid": os.getpid(), "value": value}


async def hold(port: int) -> dict[str, Any]:
    # The test sees the connection open, and closed when the call is cancelled.
    _reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        await asyncio.sleep(3600)
    finally:
        writer.close()
    return {}


def count(path: str) -> dict[str, Any]:
    with open(path, "a") as out:
        out.write(f"{os.getpid()}\n")
    return {"pid": os.getpid()}


def die() -> dict[str, Any]:
    os._exit(3)
