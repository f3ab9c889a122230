"""The routing flow keeps the event loop free: discovery's search (and the query's
embedding) runs off the loop, so another caller's cheap call is served while asks are
retrieving."""

from __future__ import annotations

import asyncio
import threading

from plugyard.discovery.query import Filters, Match
from plugyard.llm.testing import FakeModelServer
from plugyard.routing import Answer, Router
from plugyard.yard import Yard

from .conftest import everything, model

ASKS = 3


def test_a_probe_call_is_served_while_asks_are_searching(yard: Yard) -> None:
    served = threading.Event()  # the probe's call came back
    loop_blocked: list[str] = []
    find = everything(yard, ("calculator",))

    def search(query: str, k: int, filters: Filters) -> list[Match]:
        # Each search holds until the probe was served. Only a loop the search does not
        # occupy can serve it; on the loop, the wait runs out instead (once: record it).
        if not loop_blocked and not served.wait(timeout=20):
            loop_blocked.append(threading.current_thread().name)
        return find(query, k, filters)

    async def run() -> tuple[list[Answer], str]:
        async with FakeModelServer([]) as fake:
            llm = model(fake)
        flow = Router(yard.executor, search, yard.rights, lambda: llm)
        asks = [asyncio.create_task(flow.ask("calculate 6*7", llm=llm)) for _ in range(ASKS)]
        await asyncio.sleep(0)  # the asks start and reach their searches
        probe = await yard.call("calculator", "execute", {"expression": "1+1"})
        served.set()
        return list(await asyncio.gather(*asks)), probe.status

    answers, probe = asyncio.run(run())
    assert probe == "success"
    assert loop_blocked == []
    # Each ask retrieved, then found no model (the fake was gone): nothing else ran.
    assert [a.error.code if a.error else None for a in answers] == ["llm_unavailable"] * ASKS
